// Learns the unprofiled host costs (HostTimeModel) from a light Kineto trace:
// one recorded with torch.profiler over CPU and CUDA activities but without
// the execution-trace observer and record_shapes (examples/record_trace.py
// writes one beside the full trace). Its ops cost ~1 us of profiler each
// instead of ~15 us, so per kind of op (step/host_cost.h) the time the host
// spends per op, per launch call and between ops is read from it, less the
// light profiler's own cost per op and CUPTI's per launch
// (kLightProfilerNsPerOp, kCuptiNsPerLaunch; docs/step-model.md).
#ifndef STEP_HOST_PROFILE_H_
#define STEP_HOST_PROFILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "step/host_cost.h"

namespace et {

struct HostProfileResult {
  HostTimeModel model;
  // What the trace says it was recorded on ("" when it does not say).
  std::string gpu_name;  // deviceProperties[0].name
  std::string cpu_name;  // host_cpu_model (examples/record_trace.py)
  double cpu_mhz = 0;    // host_cpu_mhz, 0 unknown
  int64_t ops = 0;       // host ops read inside the profiler's steps
  int64_t steps = 0;
};

// Reads `path` (JSON, gzip or not). An error names the file and the problem
// (not Kineto JSON, no ProfilerStep, no host ops).
absl::StatusOr<HostProfileResult> LearnHostProfile(const std::string& path);

}  // namespace et

#endif  // STEP_HOST_PROFILE_H_
