// MeasureNestedOpGap on a real torch 2.11 CPU recording, checked against the
// same median computed here independently from the raw Kineto events: the
// gap between consecutive cpu_op events whose innermost enclosing event is
// one cpu_op (children of a record_function range are left out: Python runs
// between them).
#include "converter/kineto/nested_op_gap.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/kineto_trace.h"
#include "gtest/gtest.h"
#include "tests/converter/kineto/kineto_test_loader.h"
#include "tests/converter/kineto/measure_check.h"

namespace et::kineto {
namespace {

// The median sibling gap and the pair count, from the trace's JSON.
std::pair<int64_t, int64_t> IndependentMedian(const std::string& path) {
  std::vector<int64_t> gaps;
  for (const auto& [thread, spans] : testing::HostSpansByThread(path)) {
    std::vector<size_t> stack;
    std::map<size_t, int64_t> last_child_end;
    for (size_t k = 0; k < spans.size(); ++k) {
      while (!stack.empty() && spans[k].end_ns > spans[stack.back()].end_ns)
        stack.pop_back();
      if (!stack.empty() && spans[k].cpu_op && spans[stack.back()].cpu_op) {
        auto [it, first] =
            last_child_end.try_emplace(stack.back(), spans[k].end_ns);
        if (!first) {
          if (spans[k].start_ns >= it->second)
            gaps.push_back(spans[k].start_ns - it->second);
          it->second = std::max(it->second, spans[k].end_ns);
        }
      }
      stack.push_back(k);
    }
  }
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return {gaps[gaps.size() / 2], static_cast<int64_t>(gaps.size())};
}

TEST(NestedOpGapTest, MedianGapBetweenOpsNestedInOneCpuOp) {
  for (const char* name : {"cpu_mlp_w256", "cpu_moe_w128"}) {
    SCOPED_TRACE(name);
    const std::string path = testing::DataPath(std::string("torch2-cpu/") +
                                               name + "_kineto.json.gz");
    auto trace = KinetoTrace::Load(path);
    ASSERT_TRUE(trace.ok()) << trace.status();
    const CpuOpNesting nesting(*trace);
    std::optional<NestedOpGap> gap = MeasureNestedOpGap(*trace, nesting);
    ASSERT_TRUE(gap.has_value());
    // The full profiler leaves 5-10 us between two nested ops.
    testing::ExpectSameMedian(gap->median_ns, gap->pairs,
                              IndependentMedian(path), 200, 5000);
  }
}

}  // namespace
}  // namespace et::kineto
