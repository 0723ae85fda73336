// Per-rank trace files: patterns, directories, ranks in names; see
// rank_files.h.
#include "base/rank_files.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/status_macros.h"

namespace et {
namespace {

// The file name without its directory, ".gz" and `extension`; nullopt when
// the name does not end in `extension` (before the ".gz").
std::optional<absl::string_view> StemWithExtension(
    absl::string_view path, absl::string_view extension) {
  const size_t slash = path.rfind('/');
  absl::string_view name =
      slash == absl::string_view::npos ? path : path.substr(slash + 1);
  absl::ConsumeSuffix(&name, ".gz");
  if (!absl::ConsumeSuffix(&name, extension)) return std::nullopt;
  return name;
}

}  // namespace

bool IsRankPattern(absl::string_view path) {
  return absl::StrContains(path, kRankPlaceholder);
}

std::string ExpandRankPattern(absl::string_view pattern, int64_t rank) {
  return absl::StrReplaceAll(pattern, {{kRankPlaceholder, absl::StrCat(rank)}});
}

absl::StatusOr<std::vector<std::string>> ExpandRankPatternForRanks(
    absl::string_view pattern, int64_t ranks) {
  if (!IsRankPattern(pattern)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s': with --ranks, paths need a %s for the rank",
                        pattern, kRankPlaceholder));
  }
  if (ranks <= 0 || ranks > kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': --ranks %d: must be in [1, %d]", pattern, ranks, kMaxRanks));
  }
  std::vector<std::string> paths;
  paths.reserve(static_cast<size_t>(ranks));
  for (int64_t r = 0; r < ranks; ++r) {
    paths.push_back(ExpandRankPattern(pattern, r));
  }
  return paths;
}

namespace {

absl::string_view NameOf(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

// A piece of a name that is a rank: digits, bare or after "r" or "rank".
std::optional<int> RankOfPiece(absl::string_view piece) {
  if (!absl::ConsumePrefix(&piece, "rank")) absl::ConsumePrefix(&piece, "r");
  // Seven digits hold every rank below kMaxRanks (2^20); more cannot be one
  // (and would overflow an int first).
  if (piece.empty() || piece.size() > 7 ||
      !std::all_of(piece.begin(), piece.end(), absl::ascii_isdigit)) {
    return std::nullopt;
  }
  int rank = 0;
  if (!absl::SimpleAtoi(piece, &rank) || rank >= kMaxRanks) return std::nullopt;
  return rank;
}

}  // namespace

std::optional<int> RankFromFileName(absl::string_view path) {
  std::optional<absl::string_view> stem = StemWithExtension(path, ".et");
  if (!stem) stem = StemWithExtension(path, ".json");
  if (!stem) return std::nullopt;
  const std::vector<absl::string_view> pieces =
      absl::StrSplit(*stem, absl::ByAnyChar("._-"));
  // Only a profiler's or recorder's suffixes may follow the rank: in
  // "bert_12_layer" the 12 is no rank.
  static constexpr absl::string_view kSuffixes[] = {
      "pt", "trace", "plus", "et", "kineto", "chakra", "json"};
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
    if (std::optional<int> rank = RankOfPiece(*it)) return rank;
    if (std::find(std::begin(kSuffixes), std::end(kSuffixes), *it) ==
        std::end(kSuffixes))
      return std::nullopt;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<std::vector<std::string>>> ListRankFileGroups(
    const std::string& dir, absl::string_view extension) {
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("%s: cannot open directory: %s", dir, strerror(errno)));
  }
  std::vector<std::string> names;
  while (const dirent* entry = readdir(handle)) {
    const absl::string_view name = entry->d_name;
    if (name.empty() || name[0] == '.') continue;
    if (StemWithExtension(name, extension)) names.emplace_back(name);
  }
  closedir(handle);
  // Name order, so that the file named in an error is the same on every run.
  std::sort(names.begin(), names.end());
  std::map<int, std::vector<std::string>> by_rank;
  for (const std::string& name : names) {
    const std::optional<int> rank = RankFromFileName(name);
    if (!rank) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s carries no rank in its name (name.<rank>%s or "
          "name_r<rank>%s, rank below %d)",
          dir, name, extension, extension, kMaxRanks));
    }
    by_rank[*rank].push_back(JoinPath(dir, name));
  }
  if (by_rank.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: no per-rank %s or %s.gz files (name.<rank>%s)",
                        dir, extension, extension, extension));
  }
  std::vector<std::vector<std::string>> groups;
  for (auto& [rank, paths] : by_rank) {
    if (rank != static_cast<int>(groups.size())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: no file for rank %d (the files go up to rank %d)", dir,
          groups.size(), by_rank.rbegin()->first));
    }
    groups.push_back(std::move(paths));
  }
  return groups;
}

absl::StatusOr<std::vector<std::string>> ListRankFiles(
    const std::string& dir, absl::string_view extension) {
  ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> groups,
                   ListRankFileGroups(dir, extension));
  std::vector<std::string> paths;
  for (size_t rank = 0; rank < groups.size(); ++rank) {
    if (groups[rank].size() > 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s and %s would both be rank %d; keep one", dir,
          NameOf(groups[rank][0]), NameOf(groups[rank][1]), rank));
    }
    paths.push_back(groups[rank][0]);
  }
  return paths;
}

absl::StatusOr<std::vector<std::string>> ResolveRankPaths(
    const std::string& path, int64_t pattern_ranks,
    absl::string_view extension) {
  if (IsRankPattern(path)) {
    if (pattern_ranks <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": a rank pattern needs --ranks N"));
    }
    return ExpandRankPatternForRanks(path, pattern_ranks);
  }
  if (IsDirectory(path)) return ListRankFiles(path, extension);
  return std::vector<std::string>{path};
}

std::optional<std::string> RankPatternOf(
    const std::vector<std::string>& paths) {
  if (paths.size() < 2) return std::nullopt;
  const std::optional<int> first = RankFromFileName(paths[0]);
  if (!first) return std::nullopt;
  // The rank's digits are the last ones in the first file's name.
  const std::string digits = std::to_string(*first);
  const size_t at = paths[0].rfind(digits);
  const size_t slash = paths[0].rfind('/');
  if (at == std::string::npos || (slash != std::string::npos && at < slash))
    return std::nullopt;
  std::string pattern = paths[0];
  pattern.replace(at, digits.size(), kRankPlaceholder);
  std::vector<bool> seen(paths.size(), false);
  for (const std::string& path : paths) {
    const std::optional<int> rank = RankFromFileName(path);
    if (!rank || *rank < 0 || static_cast<size_t>(*rank) >= paths.size() ||
        seen[*rank] || ExpandRankPattern(pattern, *rank) != path)
      return std::nullopt;
    seen[*rank] = true;
  }
  return pattern;
}

std::string RanksAsOneInputHint(const std::vector<std::string>& paths,
                                absl::string_view output_hint) {
  std::optional<std::string> pattern = RankPatternOf(paths);
  size_t ranks = paths.size();
  std::string output;
  if (!pattern && !output_hint.empty() && paths.size() > 2) {
    const std::vector<std::string> inputs(paths.begin(), paths.end() - 1);
    pattern = RankPatternOf(inputs);
    ranks = inputs.size();
    output = absl::StrCat(" ", output_hint);
  }
  if (!pattern) return "";
  return absl::StrFormat(
      "; the ranks of one job are one argument: '%s'%s --ranks %d, or their "
      "folder",
      *pattern, output, ranks);
}

}  // namespace et
