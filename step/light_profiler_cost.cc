// The light profiler's cost per op from a light profile; see
// light_profiler_cost.h.
#include "step/light_profiler_cost.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "step/host_cost.h"

namespace et {
namespace {

// The median; in a trace timed in whole microseconds (the legacy profiler of
// a PyTorch without Kineto) a sub-microsecond cost rounds to 0 or 1 us, so
// the mean of the lower 90% (the rounding averages out; long outliers left
// out) stands for it there.
int64_t Typical(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const bool whole_us = std::all_of(v.begin(), v.end(),
                                    [](int64_t ns) { return ns % 1000 == 0; });
  if (!whole_us) return v[v.size() / 2];
  const size_t kept = std::max<size_t>(1, v.size() * 9 / 10);
  double sum = 0;
  for (size_t k = 0; k < kept; ++k) sum += static_cast<double>(v[k]);
  return std::llround(sum / static_cast<double>(kept));
}

struct Open {
  const ProfiledOp* op;
  int64_t end_ns;
  int64_t last_child_end_ns = -1;
  bool has_child = false;
};

// One thread: a stack of the events that enclose the current one.
void MeasureThread(std::vector<const ProfiledOp*> ops,
                   std::vector<int64_t>* spans, std::vector<int64_t>* gaps) {
  std::stable_sort(ops.begin(), ops.end(),
                   [](const ProfiledOp* a, const ProfiledOp* b) {
                     return a->ts_ns != b->ts_ns ? a->ts_ns < b->ts_ns
                                                 : a->dur_ns > b->dur_ns;
                   });
  std::vector<Open> stack;
  auto close = [&]() {
    const Open& o = stack.back();
    if (o.op->cpu_op && !o.has_child && ComputesNothing(o.op->name))
      spans->push_back(o.op->dur_ns);
    stack.pop_back();
  };
  for (const ProfiledOp* op : ops) {
    while (!stack.empty() && stack.back().end_ns <= op->ts_ns) close();
    if (!stack.empty()) {
      Open& parent = stack.back();
      parent.has_child = true;
      // Siblings inside an ATen op: no Python between them.
      if (parent.op->cpu_op && op->cpu_op && parent.last_child_end_ns >= 0 &&
          op->ts_ns >= parent.last_child_end_ns)
        gaps->push_back(op->ts_ns - parent.last_child_end_ns);
      if (op->cpu_op) parent.last_child_end_ns = op->ts_ns + op->dur_ns;
    }
    stack.push_back({op, op->ts_ns + op->dur_ns});
  }
  while (!stack.empty()) close();
}

}  // namespace

std::optional<LightProfilerCost> EstimateLightProfilerCost(
    const std::vector<std::vector<ProfiledOp>>& threads) {
  std::vector<int64_t> spans, gaps;
  for (const std::vector<ProfiledOp>& thread : threads) {
    std::vector<const ProfiledOp*> ops;
    for (const ProfiledOp& op : thread)
      if (op.dur_ns >= 0) ops.push_back(&op);
    MeasureThread(std::move(ops), &spans, &gaps);
  }
  if (static_cast<int64_t>(spans.size()) < kMinLightProfilerSamples ||
      static_cast<int64_t>(gaps.size()) < kMinLightProfilerSamples)
    return std::nullopt;
  LightProfilerCost cost;
  cost.view_span_ns = Typical(spans);
  cost.nested_gap_ns = Typical(gaps);
  cost.views = static_cast<int64_t>(spans.size());
  cost.pairs = static_cast<int64_t>(gaps.size());
  return cost;
}

std::string DescribeLightProfilerCost(const LightProfilerCost& cost) {
  return absl::StrFormat(
      "estimated from the light profile itself: leaf ops that compute nothing "
      "span %.2f us, ops nested in one op are %.2f us apart (%d and %d "
      "samples)",
      cost.view_span_ns / 1e3, cost.nested_gap_ns / 1e3, cost.views,
      cost.pairs);
}

}  // namespace et
