// Median gap between consecutive ops nested in one CPU op (nested_op_gap.h).
#include "converter/kineto/nested_op_gap.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace et::kineto {

std::optional<NestedOpGap> MeasureNestedOpGap(const KinetoTrace& trace,
                                              const CpuOpNesting& nesting) {
  const std::vector<KinetoEvent>& events = trace.events();
  std::vector<int64_t> gaps;
  for (const KinetoThread& thread : nesting.threads()) {
    // The end of the last child seen so far, by parent event.
    absl::flat_hash_map<int32_t, int64_t> last_child_end_ns;
    for (int32_t e : thread.ops) {
      const int32_t parent = nesting.parent(e);
      if (parent < 0 || events[e].kind != EventKind::kCpuOp ||
          events[parent].kind != EventKind::kCpuOp)
        continue;
      const int64_t end_ns = events[e].ts_ns + events[e].dur_ns;
      auto [it, first] = last_child_end_ns.try_emplace(parent, end_ns);
      if (first) continue;
      const int64_t gap = events[e].ts_ns - it->second;
      if (gap >= 0) gaps.push_back(gap);
      it->second = std::max(it->second, end_ns);
    }
  }
  if (static_cast<int64_t>(gaps.size()) < kMinNestedPairs) return std::nullopt;
  auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return NestedOpGap{*mid, static_cast<int64_t>(gaps.size())};
}

}  // namespace et::kineto
