// Whether a light profile's host costs can stand for the unprofiled run of a
// GPU trace. They cannot where the program records a host range per GPU
// kernel (torch.compile's Inductor wrapper under the profiler: a record per
// Triton kernel), so the light profile times the records, not the program:
// a torch.compile'd GPT-2 on H100 was +92.5% with its light profile and +0.2%
// without (issue 48). A light step far above the unprofiled truth is no such
// sign: the light steps of 20 GPU recordings here are 1.04-2.08x their truths,
// and those at 2x predict within 7% (docs/step-model.md, "A light profile
// that does not help"). The decision and its reason, for the report.
#ifndef STEP_LIGHT_PROFILE_CHECK_H_
#define STEP_LIGHT_PROFILE_CHECK_H_

#include <cstdint>
#include <string>

#include "model/node_model.h"
#include "step/host_cost.h"

namespace et {

// The share of GPU kernels whose launching host range bears the kernel's
// own name from which the trace records a range per kernel.
inline constexpr double kPerKernelRecordShare = 0.5;

struct LightProfileVerdict {
  bool usable = true;
  std::string why;  // when not usable: one sentence for the report
  // GPU kernels, and those launched inside a host range of their own.
  int64_t kernels = 0, kernels_in_own_record = 0;
};

// `model`: the host costs about to be used (learned from a light profile
// where light_step_ns > 0). The kernel counts are filled either way.
LightProfileVerdict CheckLightProfile(const NodeModel& graph,
                                      const HostTimeModel& model);

}  // namespace et

#endif  // STEP_LIGHT_PROFILE_CHECK_H_
