// Converts the traces of several ranks, in parallel where cores allow: an input
// pattern with %d and --ranks N ('rank_%d.json' -> 'out.%d.et'), or a directory
// of traces. All ranks' outputs are written, or none.
#ifndef CONVERTER_MULTI_RANK_H_
#define CONVERTER_MULTI_RANK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/common/convert_options.h"
#include "converter/common/convert_report.h"
#include "converter/graph/rank_outputs.h"

namespace et::convert {

// Jobs for a pattern: input, output and kineto patterns each with %d
// (ExpandRankPatternForRanks in base/rank_files.h).
absl::StatusOr<std::vector<RankJob>> JobsFromPattern(
    const std::string& input_pattern, const std::string& output_pattern,
    const std::string& kineto_pattern, int ranks);
// Jobs for every *.json / *.json.gz in `input_dir`, written to `output_dir` as
// NAME.et; the ranks come from the names, all of 0..N-1 once each
// (ListRankFiles in base/rank_files.h). `kineto_pattern` (with %d; may be
// empty) names each rank's Kineto trace, as with a pattern input.
absl::StatusOr<std::vector<RankJob>> JobsFromDirectory(
    const std::string& input_dir, const std::string& output_dir,
    const std::string& kineto_pattern = "");

// Every job's input and Kineto trace can be read, checked before any rank is
// converted: "--ranks 5" with four traces fails at once, naming the first
// missing file, not after converting four ranks.
absl::Status CheckJobInputs(const std::vector<RankJob>& jobs);

// A --kineto file that is a Chakra .et (a common slip: the converted output
// given back) is named as such, not met with the JSON parser's message.
absl::Status CheckKinetoIsNotEt(const std::string& kineto_path);

// Runs the jobs on up to `threads` threads; results in job order. Each rank is
// written to a staging file beside its output (`staged`), never to the output
// itself: a job's ranks are used together, so a run that fails one rank must
// not leave the others' outputs looking like a complete set.
std::vector<RankResult> ConvertRanks(const std::vector<RankJob>& jobs,
                                     const ConvertOptions& options,
                                     int threads);

}  // namespace et::convert

#endif  // CONVERTER_MULTI_RANK_H_
