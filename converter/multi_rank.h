// Converts the traces of several ranks, in parallel where cores allow: an input
// pattern with %d and --ranks N ('rank_%d.json' -> 'out.%d.et'), or a directory
// of traces.
#ifndef CONVERTER_MULTI_RANK_H_
#define CONVERTER_MULTI_RANK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/converter.h"

namespace et::convert {

struct RankJob {
  int rank = 0;
  std::string input;
  std::string output;
  std::string kineto;  // empty: none
};

// Jobs for a pattern: input, output and kineto patterns each with %d.
absl::StatusOr<std::vector<RankJob>> JobsFromPattern(
    const std::string& input_pattern, const std::string& output_pattern,
    const std::string& kineto_pattern, int ranks);
// Jobs for every *.json / *.json.gz in `input_dir`, written to `output_dir` as
// NAME.et; the rank is the last number in the file name, else the position in
// name order.
absl::StatusOr<std::vector<RankJob>> JobsFromDirectory(
    const std::string& input_dir, const std::string& output_dir);

struct RankResult {
  RankJob job;
  absl::StatusOr<ConvertSummary> summary;
};

// Runs the jobs on up to `threads` threads; results in job order.
std::vector<RankResult> ConvertRanks(const std::vector<RankJob>& jobs,
                                     const ConvertOptions& options,
                                     int threads);

}  // namespace et::convert

#endif  // CONVERTER_MULTI_RANK_H_
