// Chrome trace of a replay; see replay_trace_writer.h.
#include "replay/replay_trace_writer.h"

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "proto/file_util.h"

namespace et::replay {
namespace {

std::string Quoted(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

std::string ReplayTraceJson(const ReplayPlan& plan,
                            const std::vector<IterationTiming>& timed,
                            int rank) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  absl::StrAppendFormat(
      &out,
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
      "\"args\":{\"name\":\"et-replay rank %d\"}}",
      rank, rank);
  for (size_t q = 0; q < plan.queues.size(); ++q) {
    const QueueInfo& info = plan.queues[q];
    std::string label =
        info.kind == QueueKind::kHostThread
            ? absl::StrFormat("thread %d", info.recorded_id)
            : (info.recorded_id < 0
                   ? std::string("stream comm")
                   : absl::StrFormat("stream %d", info.recorded_id));
    absl::StrAppendFormat(
        &out,
        ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
        "\"args\":{\"name\":%s}}",
        rank, q, Quoted(label));
  }
  int64_t base_ns = 0;
  for (size_t iter = 0; iter < timed.size(); ++iter) {
    const IterationTiming& t = timed[iter];
    for (size_t i = 0; i < plan.ops.size(); ++i) {
      const ReplayOp& op = plan.ops[i];
      if (op.kind == OpKind::kNone) continue;
      absl::StrAppendFormat(
          &out,
          ",\n{\"ph\":\"X\",\"name\":%s,\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,"
          "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"node\":%d,\"iteration\":%d,"
          "\"recorded_us\":%.3f}}",
          Quoted(plan.name(op)), OpKindName(op.kind), rank, op.queue,
          (base_ns + t.ops[i].start_ns) / 1e3, t.ops[i].duration_ns / 1e3,
          op.node_id, iter, op.recorded_ns / 1e3);
    }
    base_ns += t.total_ns;
  }
  out += "\n]}\n";
  return out;
}

absl::Status WriteReplayTrace(const std::string& path, const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              int rank) {
  return WriteFileAtomically(path, ReplayTraceJson(plan, timed, rank));
}

}  // namespace et::replay
