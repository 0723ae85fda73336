// One pipeline stage's program as a graph (scaleout/pipeline_plan.h): per
// micro-batch and model chunk a forward and a backward compute node in the
// schedule's order (scaleout/pipeline_order.h: GPipe, 1F1B, interleaved;
// Narayanan et al. 2021), the activation received from the previous chunk's
// rank before each forward and sent to the next chunk's after it (with
// interleaved:V the last rank's chunks feed the first rank's next ones), its
// gradient received from the next chunk before each backward and sent back
// after it, the stage's collectives (per micro-batch at 1/M of their bytes,
// gradient syncs once), then the optimizer and the rest of the step. Each
// direction of the point-to-point traffic has its own channel, so a send
// waits only for its receive. Compute nodes' times are set by the caller
// (the plan's), not read from the graph.
#ifndef SCALEOUT_PIPELINE_SCHEDULE_H_
#define SCALEOUT_PIPELINE_SCHEDULE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/pipeline_plan.h"

namespace et::scaleout {

struct StageGraph {
  Graph graph = Graph::Build({}, {});
  // (node id, ns) of every compute node: the time the simulator gives it.
  std::vector<std::pair<uint64_t, int64_t>> compute_ns;
  int64_t sends = 0, recvs = 0, send_bytes = 0;
};

// `model`: the one-rank graph the plan is of (its collectives are copied);
// `metadata`: the stage graph's (its group table must name kPpGroupName and
// the collectives' groups); `prev_rank` / `next_rank`: the peers of this
// stage's representative rank, the last stage's next being the first (only
// interleaved sends there: a first or last chunk has no peer before or
// after it); `on_host`: the trace's
// communication runs on the host (gloo).
StageGraph BuildStageGraph(const PipelinePlan& plan, int64_t stage,
                           const NodeModel& model,
                           const ChakraProtoMsg::GlobalMetadata& metadata,
                           int64_t prev_rank, int64_t next_rank, bool on_host);

}  // namespace et::scaleout

#endif  // SCALEOUT_PIPELINE_SCHEDULE_H_
