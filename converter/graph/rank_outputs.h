// The outputs of a conversion that makes several graphs (the ranks of a job,
// the graphs of an nsys export): each graph waits in a staging file beside its
// output, and all are published together or none. A job's ranks are used
// together, so a run that fails one rank must not leave the others' outputs
// looking like a complete set.
#ifndef CONVERTER_GRAPH_RANK_OUTPUTS_H_
#define CONVERTER_GRAPH_RANK_OUTPUTS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/common/convert_report.h"
#include "step/host_cost.h"

namespace et::convert {

struct RankJob {
  int rank = 0;
  std::string input;
  std::string output;
  std::string kineto;  // empty: none
  // Its light profile's costs (et-convert --host-profile with a %d pattern);
  // empty: the options' own.
  std::optional<HostTimeModel> host_costs;
};

// A hidden file beside `output` where a rank's graph waits for
// PublishRankOutputs, so that the final rename stays on one filesystem; the
// name keeps the output's ending, which picks gzip or not.
std::string StagingPath(const std::string& output);

struct RankResult {
  RankJob job;
  std::string staged;  // where the .et is until PublishRankOutputs
  absl::StatusOr<ConvertReport> summary;
};

// All or none: when every rank converted, renames each staged file to its
// output; otherwise removes the staged files and renames nothing. Returns
// whether the outputs were written.
absl::StatusOr<bool> PublishRankOutputs(std::vector<RankResult>* results);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_RANK_OUTPUTS_H_
