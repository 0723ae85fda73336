// Every kernel of a single-GPU eager PyTorch step has a launching host op: on
// the H100 traces in ../shared/traces/h100 the GPU ops that lack one were
// launched in the profiler's warm-up step (their correlation ids precede every
// recorded runtime call), so they are left out and counted, not linked in as
// orphans. Skipped where ../shared/traces is absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "base/gzip_input.h"
#include "converter/converter.h"
#include "nlohmann/json.hpp"

namespace et::convert {
namespace {

std::string H100(const std::string& file) {
  return std::string(ET_SHARED_TRACES) + "/h100/" + file;
}

// GPU ops of a Kineto file, and how many were launched before its first
// recorded runtime call, counted straight from the JSON.
struct GpuCounts {
  int64_t gpu_ops = 0;
  int64_t before_first_call = 0;
};

GpuCounts CountGpuOps(const std::string& path) {
  GpuCounts counts;
  std::string text;
  if (!ReadFileMaybeGzip(path, &text).ok()) return counts;
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const auto& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if ((cat == "cuda_runtime" || cat == "cuda_driver") &&
        e["args"].contains("correlation")) {
      first = std::min(first, e["args"]["correlation"].get<int64_t>());
    }
  }
  for (const auto& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
    ++counts.gpu_ops;
    if (e["args"]["correlation"].get<int64_t>() < first)
      ++counts.before_first_call;
  }
  return counts;
}

class GpuLauncherTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuLauncherTest, WarmUpKernelsAreLeftOutAndTheRestHaveLaunchers) {
  const std::string model = GetParam();
  const std::string et = H100(model + "_et.json.gz");
  const std::string kineto = H100(model + "_kineto.json.gz");
  if (access(et.c_str(), R_OK) != 0) GTEST_SKIP() << et << " absent";
  const GpuCounts counts = CountGpuOps(kineto);
  ASSERT_GT(counts.before_first_call, 100);  // 165 (mlp4096), 117 (gpt1024)
  ConvertOptions options;
  options.kineto_path = kineto;
  auto summary = ConvertFile(et,
                             ::testing::TempDir() + "/" +
                                 std::to_string(getpid()) + "_" + model + ".et",
                             options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->orphan_gpu_ops, 0);
  EXPECT_EQ(summary->gpu_ops_before_trace, counts.before_first_call);
  // Nothing is lost: kept (linked or before the trace) + left out == every GPU
  // op of the trace.
  EXPECT_EQ(summary->gpu_ops + summary->gpu_ops_left_out.at("other iterations"),
            counts.gpu_ops);
  EXPECT_EQ(summary->kineto_host_ops_matched, summary->kineto_host_ops);
}

INSTANTIATE_TEST_SUITE_P(H100, GpuLauncherTest,
                         ::testing::Values("mlp4096", "gpt1024"));

}  // namespace
}  // namespace et::convert
