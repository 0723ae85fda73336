// Which side bounds a step; see step_bound.h.
#include "step/step_bound.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace et {

const char* BoundSideName(BoundSide side) {
  switch (side) {
    case BoundSide::kHost:
      return "host";
    case BoundSide::kGpu:
      return "GPU";
    case BoundSide::kComm:
      return "communication";
  }
  return "host";
}

const char* BoundSideKey(BoundSide side) {
  switch (side) {
    case BoundSide::kHost:
      return "host";
    case BoundSide::kGpu:
      return "gpu";
    case BoundSide::kComm:
      return "comm";
  }
  return "host";
}

void PickBoundSide(StepBound* b) {
  b->side = BoundSide::kHost;
  double best = b->host_busy_us;
  if (b->gpu_busy_us > best) {
    b->side = BoundSide::kGpu;
    best = b->gpu_busy_us;
  }
  if (b->exposed_comm_us > best) b->side = BoundSide::kComm;
}

StepBound MeanBound(const std::vector<StepBound>& steps) {
  StepBound sum;
  for (const StepBound& s : steps) {
    sum.step_us += s.step_us;
    sum.host_busy_us += s.host_busy_us;
    sum.gpu_busy_us += s.gpu_busy_us;
    sum.exposed_comm_us += s.exposed_comm_us;
    sum.host_threads = std::max(sum.host_threads, s.host_threads);
    sum.gpu_ops_unrecorded |= s.gpu_ops_unrecorded;
  }
  const double n = steps.empty() ? 1.0 : static_cast<double>(steps.size());
  sum.step_us /= n;
  sum.host_busy_us /= n;
  sum.gpu_busy_us /= n;
  sum.exposed_comm_us /= n;
  PickBoundSide(&sum);
  return sum;
}

std::string FormatStepBound(const StepBound& b) {
  auto pct = [&](double us) {
    return b.step_us > 0 ? us / b.step_us * 100.0 : 0.0;
  };
  // A CPU-only trace (gloo, record_trace.py on a CPU) has no GPU to speak of.
  const std::string gpu =
      b.gpu_busy_us > 0
          ? absl::StrFormat("GPU %.3f ms (%.0f%%)", b.gpu_busy_us / 1e3,
                            pct(b.gpu_busy_us))
      : b.gpu_ops_unrecorded
          ? "GPU ops not recorded (a GPU job's trace without its Kineto "
            "trace: their time is unknown, not 0)"
          : "no GPU work";
  return absl::StrFormat(
      "%s-bound: host (%d thread%s) busy %.3f of %.3f ms (%.0f%%), %s, "
      "exposed comm %.3f ms (%.0f%%)",
      BoundSideName(b.side), b.host_threads, b.host_threads == 1 ? "" : "s",
      b.host_busy_us / 1e3, b.step_us / 1e3, pct(b.host_busy_us), gpu,
      b.exposed_comm_us / 1e3, pct(b.exposed_comm_us));
}

nlohmann::json StepBoundJson(const StepBound& b) {
  nlohmann::json j = {
      {"side", BoundSideKey(b.side)},   {"step_us", b.step_us},
      {"host_busy_us", b.host_busy_us}, {"host_threads", b.host_threads},
      {"gpu_busy_us", b.gpu_busy_us},   {"exposed_comm_us", b.exposed_comm_us}};
  if (b.gpu_ops_unrecorded) j["gpu_ops_recorded"] = false;
  return j;
}

}  // namespace et
