// A Chrome / Perfetto trace (JSON "traceEvents", openable in ui.perfetto.dev
// and chrome://tracing) of the times recorded in .et files: one process per
// rank, one track per CPU thread, GPU stream and process group channel (the
// node model's queue), one complete ("X") event per node with a recorded
// start. Track ids are dense per rank (threads first, then streams, then
// groups, ascending) because real OS thread ids and stream numbers can
// collide; each track is named with its real tid/stream/group. Nodes without a
// start time cannot be placed and are counted instead. Stateless; thread-safe.
#ifndef VISUALIZER_TIMELINE_WRITER_H_
#define VISUALIZER_TIMELINE_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"

namespace et::viz {

struct TimelineStats {
  int64_t events = 0;  // complete events written
  int64_t untimed_nodes =
      0;  // selected nodes without a start time (not written)
  int64_t tracks = 0;
};

// The trace JSON text for the selected nodes.
std::string WriteTimelineJson(const std::vector<RankTrace>& traces,
                              const std::vector<RankSelection>& selections,
                              TimelineStats* summary);

// WriteTimelineJson to `path`, atomically. Fails when no selected node has a
// start time (the .et records no times: nothing to show).
absl::StatusOr<TimelineStats> WriteTimelineFile(
    const std::vector<RankTrace>& traces,
    const std::vector<RankSelection>& selections, const std::string& path);

}  // namespace et::viz

#endif  // VISUALIZER_TIMELINE_WRITER_H_
