// Per-rank trace files: the one rule every tool uses to find the traces of
// several ranks and to read a rank from a file's name. A user names them as
// a pattern ("out.%d.et" with --ranks N), as a directory of per-rank files, or
// file by file; these functions turn each into paths in rank order.
//
// The rank in a file name: take the name without its directory, a trailing
// ".gz" and the trace extension (".et", ".json"); split what is left at '.',
// '_' and '-'; the last piece is the rank when it is decimal digits, bare or
// after "r" or "rank": "mlp.3.et", "rank_3.json", "ddp_r3.json.gz",
// "rank3.et"; or the last piece before a profiler's or recorder's suffixes
// (pt, trace, plus, et, kineto, chakra, json): "eg.rank_0.pt.trace.json",
// "dlrm_eg_0_plus.json", "megatron_kineto_0.json". A piece that merely ends in
// digits ("resnet50.et", "gpt2.json") is no rank: a model name is not one;
// nor is a piece followed by other words ("bert_12_layer.json") or a number
// of more than 7 digits (a timestamp). Ranks are below kMaxRanks
// (base/input_limits.h).
//
// Stateless free functions; thread-safe.
#ifndef BASE_RANK_FILES_H_
#define BASE_RANK_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace et {

// What stands for the rank in a per-rank pattern.
inline constexpr char kRankPlaceholder[] = "%d";

// True when `path` holds the placeholder: a pattern, not one file.
bool IsRankPattern(absl::string_view path);

// Replaces every placeholder: "out.%d.et" with rank 3 -> "out.3.et".
std::string ExpandRankPattern(absl::string_view pattern, int64_t rank);

// The paths of ranks 0..ranks-1. Fails when `pattern` has no placeholder or
// `ranks` is not in [1, kMaxRanks]; messages name the pattern and --ranks.
absl::StatusOr<std::vector<std::string>> ExpandRankPatternForRanks(
    absl::string_view pattern, int64_t ranks);

// The rank a file's name carries (rule above), or nullopt. `path` may have
// directories; only the last component is read.
std::optional<int> RankFromFileName(absl::string_view path);

// The per-rank files of `dir`, indexed by rank: every file whose name ends in
// `extension` (".et" or ".json"; either with ".gz" too), hidden files (a
// leading '.', e.g. et-convert's staging files) aside. Fails, naming the
// file, when one carries no rank, two carry one rank, a rank in 0..max is
// missing, or there is none; a directory of per-rank files is a set, and a
// guess would silently simulate or convert the wrong one.
absl::StatusOr<std::vector<std::string>> ListRankFiles(
    const std::string& dir, absl::string_view extension);

// The files of `dir` ending in `extension`, grouped by the rank in their
// names (each group in name order), for a tool that pairs two files of one
// rank (et-convert: an ET and its Kineto trace). Fails as ListRankFiles does,
// except on two files of one rank.
absl::StatusOr<std::vector<std::vector<std::string>>> ListRankFileGroups(
    const std::string& dir, absl::string_view extension);

// The pattern that names `paths` with --ranks paths.size(), when they are
// the files of ranks 0..N-1 named alike ("ddp.0.et", "ddp.1.et" ->
// "ddp.%d.et"); nullopt otherwise.
std::optional<std::string> RankPatternOf(const std::vector<std::string>& paths);

// For a usage error with several positional arguments: when `paths` (or all
// but the last, an output) are per-rank files of one job, how to name them as
// one input, e.g. "; the ranks of one job are one argument: 'ddp.%d.et'
// --ranks 2, or their folder"; "" otherwise. `output_hint` stands in for the
// output when the last argument is one ("'OUT.%d.et'" for et-convert).
std::string RanksAsOneInputHint(const std::vector<std::string>& paths,
                                absl::string_view output_hint = "");

// What a tool's trace argument names, as paths in rank order: a pattern
// (expanded for `pattern_ranks`, which must then be positive), a directory
// (ListRankFiles with `extension`), else the one file itself.
absl::StatusOr<std::vector<std::string>> ResolveRankPaths(
    const std::string& path, int64_t pattern_ranks,
    absl::string_view extension);

}  // namespace et

#endif  // BASE_RANK_FILES_H_
