// Chrome trace of a replay; see replay_trace_writer.h.
#include "replay/replay_trace_writer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_output_file.h"
#include "nlohmann/json.hpp"
#include "step/chrome_trace.h"
#include "step/recorded_timeline.h"

namespace et::replay {
std::string ReplayTraceJson(const NodeModel& graph, const ReplayPlan& plan,
                            const std::vector<IterationTiming>& timed,
                            int rank) {
  ChromeTrace trace;
  trace.NameProcess(rank,
                    absl::StrFormat("et-replay rank %d (replayed)", rank));
  AddRecordedTimeline(graph, plan.steps, rank, &trace);
  for (size_t q = 0; q < plan.queues.size(); ++q) {
    const QueueInfo& info = plan.queues[q];
    trace.NameThread(
        rank, static_cast<int64_t>(q),
        info.kind == ReplayQueueKind::kHostThread
            ? absl::StrFormat("thread %d", info.recorded_id)
            : (info.recorded_id >= 0
                   ? absl::StrFormat("stream %d", info.recorded_id)
               : info.comm_group < 0
                   ? std::string("stream comm")
                   : absl::StrCat("stream comm ",
                                  plan.groups[info.comm_group].name)));
  }
  int64_t base_ns = 0;
  for (size_t iter = 0; iter < timed.size(); ++iter) {
    const IterationTiming& t = timed[iter];
    for (size_t i = 0; i < plan.ops.size(); ++i) {
      const ReplayOp& op = plan.ops[i];
      if (op.kind == ReplayOpKind::kNone) continue;
      trace.AddComplete(rank, op.queue, plan.name(op),
                        ReplayOpKindName(op.kind), base_ns + t.ops[i].start_ns,
                        t.ops[i].duration_ns,
                        {{"node", op.node_id},
                         {"iteration", iter},
                         {"recorded_us", op.recorded_ns / 1e3}});
    }
    base_ns += t.total_ns;
  }
  return trace.ToJson();
}

absl::Status WriteReplayTrace(const std::string& path, const NodeModel& graph,
                              const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              int rank) {
  return WriteFileAtomically(path, ReplayTraceJson(graph, plan, timed, rank));
}

}  // namespace et::replay
