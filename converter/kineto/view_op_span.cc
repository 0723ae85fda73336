// Median span of the leaf ops that compute nothing (view_op_span.h).
#include "converter/kineto/view_op_span.h"

#include <algorithm>
#include <vector>

#include "step/host_cost.h"

namespace et::kineto {

std::optional<ViewOpSpan> MeasureViewOpSpan(const KinetoTrace& trace,
                                            const CpuOpNesting& nesting) {
  const std::vector<KinetoEvent>& events = trace.events();
  std::vector<uint8_t> encloses_op(events.size(), 0);
  for (const KinetoThread& thread : nesting.threads()) {
    for (int32_t e : thread.ops) {
      const int32_t parent = nesting.parent(e);
      if (parent >= 0 && events[e].kind == EventKind::kCpuOp)
        encloses_op[parent] = 1;
    }
  }
  std::vector<int64_t> spans;
  for (const KinetoThread& thread : nesting.threads()) {
    for (int32_t e : thread.ops) {
      if (events[e].kind != EventKind::kCpuOp || encloses_op[e] ||
          !ComputesNothing(trace.name(events[e].name)))
        continue;
      spans.push_back(events[e].dur_ns);
    }
  }
  if (static_cast<int64_t>(spans.size()) < kMinViewOps) return std::nullopt;
  auto mid = spans.begin() + static_cast<std::ptrdiff_t>(spans.size() / 2);
  std::nth_element(spans.begin(), mid, spans.end());
  return ViewOpSpan{*mid, static_cast<int64_t>(spans.size())};
}

}  // namespace et::kineto
