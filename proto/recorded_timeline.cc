// The recorded run as a timeline process; see recorded_timeline.h.
#include "proto/recorded_timeline.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et {

int64_t AddRecordedTimeline(const Graph& graph, const StepModel& steps,
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
  std::map<std::pair<bool, int64_t>, int64_t> tracks;  // (gpu, id) -> tid
  int64_t events = 0;
  for (NodeIndex i = 0; i < graph.size(); ++i) {
    const int64_t start = steps.recorded_start_ns(i);
    if (start < 0) continue;
    const ChakraProtoMsg::Node& node = graph.node(i);
    const bool host = steps.is_host(i);
    const int64_t id = host ? GetInt(node, attr::kTid).value_or(0)
                            : GetInt(node, attr::kStream).value_or(0);
    auto [it, fresh] = tracks.emplace(std::make_pair(!host, id),
                                      static_cast<int64_t>(tracks.size()));
    if (fresh) {
      trace->NameThread(pid, it->second,
                        absl::StrCat(host ? "thread " : "stream ", id));
    }
    trace->AddComplete(pid, it->second, node.name(), "recorded", start - origin,
                       steps.recorded_duration_ns(i), {{"node", node.id()}});
    ++events;
  }
  return events;
}

}  // namespace et
