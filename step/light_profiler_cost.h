// The light profiler's cost per op, estimated from a light profile itself
// (issue 49, item 9): without a calibration for the recording host, the
// constant measured on another machine (3.05 us, an H100 host) took 12.5 ms a
// step out of a 2-core CPU's trace whose light profiler cost it 1-7 ms. The
// same two measures the converter takes of the full profiler
// (converter/kineto/view_op_span.h, nested_op_gap.h), taken of the light one:
// inside an op's span (a leaf op that computes nothing spans only its
// dispatch and the profiler) and outside it (the gap between two ops nested
// in one, where no Python runs).
#ifndef STEP_LIGHT_PROFILER_COST_H_
#define STEP_LIGHT_PROFILER_COST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace et {

// One complete event of a host thread inside the profile's steps.
struct ProfiledOp {
  std::string name;
  bool cpu_op = false;  // an ATen op (cpu_op), not a record_function range
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
};

struct LightProfilerCost {
  // Medians (in a whole-microsecond trace, the mean of the lower 90%).
  int64_t view_span_ns = 0;   // span of leaf ops that compute nothing
  int64_t nested_gap_ns = 0;  // gap between ops nested in one op
  int64_t views = 0;          // samples of each
  int64_t pairs = 0;
  int64_t ns_per_op() const { return view_span_ns + nested_gap_ns; }
};

// Fewer samples of either measure than this say nothing reliable.
inline constexpr int64_t kMinLightProfilerSamples = 20;

// From each thread's events (any order); nullopt when either measure has
// fewer than kMinLightProfilerSamples samples.
std::optional<LightProfilerCost> EstimateLightProfilerCost(
    const std::vector<std::vector<ProfiledOp>>& threads);

// "1.84 us (from the light profile: leaf views span 0.91 us, nested ops
// 0.93 us apart; 412 and 1,020 samples)".
std::string DescribeLightProfilerCost(const LightProfilerCost& cost);

}  // namespace et

#endif  // STEP_LIGHT_PROFILER_COST_H_
