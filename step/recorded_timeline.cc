// The recorded run as a timeline process; see recorded_timeline.h.
#include "step/recorded_timeline.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"

namespace et {

int64_t AddRecordedTimeline(const NodeModel& graph, const StepModel& steps,
                            int64_t rank, ChromeTrace* trace) {
  // Time 0: the first recorded start among the step's nodes (all nodes when
  // the graph has no steps).
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (NodeIndex i = 0; i < graph.size(); ++i) {
    const bool in_steps = steps.step_ids().empty() || steps.step_index(i) >= 0;
    if (in_steps && steps.recorded_start_ns(i) >= 0)
      origin = std::min(origin, steps.recorded_start_ns(i));
  }
  if (origin == std::numeric_limits<int64_t>::max()) return 0;
  const int64_t pid = RecordedPid(rank);
  trace->NameProcess(pid, absl::StrCat("rank ", rank, " (recorded)"));
  std::map<std::pair<QueueKind, int64_t>, int64_t> tracks;  // queue -> tid
  int64_t events = 0;
  for (NodeIndex i = 0; i < graph.size(); ++i) {
    const int64_t start = steps.recorded_start_ns(i);
    if (start < 0) continue;
    const Queue& q = graph.queue(i);
    auto [it, fresh] = tracks.emplace(std::make_pair(q.kind, q.number),
                                      static_cast<int64_t>(tracks.size()));
    if (fresh) {
      const char* label = q.kind == QueueKind::kThread   ? "thread "
                          : q.kind == QueueKind::kStream ? "stream "
                                                         : "comm group ";
      trace->NameThread(pid, it->second, absl::StrCat(label, q.number));
    }
    trace->AddComplete(pid, it->second, graph.name(i), "recorded",
                       start - origin, steps.recorded_duration_ns(i),
                       {{"node", graph.id(i)}});
    ++events;
  }
  return events;
}

}  // namespace et
