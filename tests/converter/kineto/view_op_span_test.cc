// MeasureViewOpSpan on real torch 2.11 CPU recordings, checked against the
// same median computed here independently from the raw Kineto events (leaf
// cpu_op events, named as ops that compute nothing), and against the light
// profile of the same program, whose views span the light profiler only.
#include "converter/kineto/view_op_span.h"

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
#include "step/host_cost.h"
#include "tests/converter/kineto/kineto_test_loader.h"
#include "tests/converter/kineto/measure_check.h"

namespace et::kineto {
namespace {

// The median span of leaf ops that compute nothing, and their count.
std::pair<int64_t, int64_t> IndependentMedian(const std::string& path) {
  std::vector<int64_t> spans;
  for (const auto& [thread, list] : testing::HostSpansByThread(path)) {
    std::vector<bool> has_op_child(list.size(), false);
    std::vector<size_t> stack;
    for (size_t k = 0; k < list.size(); ++k) {
      while (!stack.empty() && list[k].end_ns > list[stack.back()].end_ns)
        stack.pop_back();
      if (!stack.empty() && list[k].cpu_op) has_op_child[stack.back()] = true;
      stack.push_back(k);
    }
    for (size_t k = 0; k < list.size(); ++k) {
      if (list[k].cpu_op && !has_op_child[k] && ComputesNothing(list[k].name))
        spans.push_back(list[k].end_ns - list[k].start_ns);
    }
  }
  std::nth_element(spans.begin(), spans.begin() + spans.size() / 2,
                   spans.end());
  return {spans[spans.size() / 2], static_cast<int64_t>(spans.size())};
}

std::optional<ViewOpSpan> Measure(const std::string& path) {
  auto trace = KinetoTrace::Load(path);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return std::nullopt;
  const CpuOpNesting nesting(*trace);
  return MeasureViewOpSpan(*trace, nesting);
}

TEST(ViewOpSpanTest, MedianSpanOfLeafOpsThatComputeNothing) {
  for (const char* name : {"cpu_mlp_w64", "cpu_moe_w128"}) {
    SCOPED_TRACE(name);
    const std::string path = testing::DataPath(std::string("cpu-corpus/") +
                                               name + "_kineto.json.gz");
    std::optional<ViewOpSpan> span = Measure(path);
    ASSERT_TRUE(span.has_value());
    // The full profiler: 9-18 us inside a view's span.
    testing::ExpectSameMedian(span->median_ns, span->ops,
                              IndependentMedian(path), 300, 9000);
    // The light profile's views span a tenth of that or less.
    std::optional<ViewOpSpan> light = Measure(testing::DataPath(
        std::string("cpu-corpus/") + name + "_kineto_light.json.gz"));
    ASSERT_TRUE(light.has_value());
    EXPECT_LT(light->median_ns * 10, span->median_ns);
  }
}

TEST(ViewOpSpanTest, NamesOfOpsThatComputeNothing) {
  EXPECT_TRUE(ComputesNothing("aten::view"));
  EXPECT_TRUE(ComputesNothing("aten::as_strided"));
  EXPECT_TRUE(ComputesNothing("aten::empty"));
  EXPECT_FALSE(ComputesNothing("aten::add"));
  EXPECT_FALSE(ComputesNothing("aten::copy_"));
  EXPECT_FALSE(ComputesNothing("aten::view_as_real_"));
}

}  // namespace
}  // namespace et::kineto
