// Writes the timed iterations of a replay as a Chrome / Perfetto JSON trace:
// one process per rank, one track per replay queue (named "stream N" / "thread
// N"), one complete
// ("X") event per op with its node id, kind and recorded duration as args.
// Iterations follow each other on the timeline in the order they ran. The
// recorded run is a second process (step/recorded_timeline.h), to read the
// replay against it.
#ifndef REPLAY_REPLAY_TRACE_WRITER_H_
#define REPLAY_REPLAY_TRACE_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "replay/device_backend.h"
#include "replay/replay_plan.h"

namespace et::replay {

std::string ReplayTraceJson(const NodeModel& graph, const ReplayPlan& plan,
                            const std::vector<IterationTiming>& timed,
                            int rank);

// ReplayTraceJson written atomically to `path`.
absl::Status WriteReplayTrace(const std::string& path, const NodeModel& graph,
                              const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              int rank);

}  // namespace et::replay

#endif  // REPLAY_REPLAY_TRACE_WRITER_H_
