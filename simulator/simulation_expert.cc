// --layout ep=E on a trace recorded without expert parallelism: the
// synthesized split (scaleout/expert_parallel.h) of Simulation.
#include <string>
#include <utility>

#include "base/status_macros.h"
#include "scaleout/expert_parallel.h"
#include "simulator/simulation.h"

namespace et::sim {

absl::Status Simulation::SplitExpertParallel(
    const std::string& file, const ModelOptions& model_options) {
  if (scaled_->ep_group_name.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph, LayoutBaseGraph(file));
  scaleout::EpShardOptions split;
  split.ep = scaled_->layout.of(scaleout::Dim::kEp);
  split.pg_name = scaled_->ep_group_name;
  split.ep_ranks = ScaledGroupRanks(split.pg_name);
  absl::StatusOr<scaleout::EpShardResult> result =
      scaleout::ShardExpertParallel(*graph, split);
  if (!result.ok()) return LayoutRefusal(file, result.status());
  models_.back() = std::make_shared<const NodeModel>(
      NodeModel::FromGraph(result->graph, model_options));
  ep_note_ = result->note;
  ep_split_ =
      std::make_shared<const scaleout::EpShardResult>(std::move(*result));
  return absl::OkStatus();
}

}  // namespace et::sim
