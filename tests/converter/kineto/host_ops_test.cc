// et-convert --kineto on a real H100 trace pair (mlp1024 from the shared
// traces): every host op of the ET is accounted for exactly once, by the
// `host_ops` of the host node that stands for it or as a profiler root (the
// ET JSON is counted independently with nlohmann); every GPU op carries the
// `step` of the host node that launched it; the metadata names the recording
// device, holds the profiled step periods (ProfilerStep#N+1 start - #N start,
// read independently from the Kineto JSON's user annotations) and, with
// --measured-step-ms, the unprofiled step.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/gzip_input.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

std::string SharedPath(const std::string& rel) {
  return std::string(ET_SHARED_TRACES) + "/" + rel;
}

const char kEt[] = "h100/mlp1024_et.json.gz";
const char kKineto[] = "h100/mlp1024_kineto.json.gz";

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

nlohmann::json ReadJson(const std::string& path) {
  std::string text;
  EXPECT_TRUE(ReadFileMaybeGzip(path, &text).ok()) << path;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

bool IsGpu(const Node& n) { return GetBool(n, attr::kIsGpuOp).value_or(false); }

absl::StatusOr<Graph> ConvertMlp(const std::string& out_name,
                                 double measured_step_ms = 0) {
  ConvertOptions options;
  options.kineto_path = SharedPath(kKineto);
  options.measured_step_ms = measured_step_ms;
  const std::string out = TempOut(out_name);
  absl::StatusOr<ConvertReport> summary =
      ConvertFile(SharedPath(kEt), out, options);
  if (!summary.ok()) return summary.status();
  return LoadGraph(out);
}

class HostOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Exists(SharedPath(kEt)) || !Exists(SharedPath(kKineto)))
      GTEST_SKIP() << "shared traces not found under " << ET_SHARED_TRACES;
  }
};

TEST_F(HostOpsTest, EveryEtHostOpIsCountedOnce) {
  // The ET: a flat "nodes" array of host ops only (GPU ops come from Kineto).
  const nlohmann::json et = ReadJson(SharedPath(kEt));
  ASSERT_TRUE(et.is_object() && et.contains("nodes")) << "bad ET JSON";
  int64_t et_ops = 0, roots = 0;
  for (const auto& n : et["nodes"]) {
    ++et_ops;
    if (n.value("name", "").rfind("[pytorch|profiler|execution_trace|", 0) == 0)
      ++roots;
  }
  ASSERT_GT(et_ops, 100);
  EXPECT_EQ(roots, 3);  // one process root, two thread roots

  absl::StatusOr<Graph> g = ConvertMlp("mlp1024_host_ops.et");
  ASSERT_TRUE(g.ok()) << g.status();
  int64_t host_ops = 0, host_nodes = 0, gpu_nodes = 0;
  for (const Node& n : g->nodes()) {
    if (IsGpu(n)) {
      ++gpu_nodes;
      EXPECT_FALSE(GetInt(n, attr::kHostOps).has_value()) << n.id();
      continue;
    }
    ++host_nodes;
    const int64_t ops = GetInt(n, attr::kHostOps).value_or(1);
    EXPECT_GE(ops, 1) << n.id() << " " << n.name();
    host_ops += ops;
  }
  EXPECT_GT(gpu_nodes, 0);
  EXPECT_LT(host_nodes, et_ops);  // folding happened
  EXPECT_EQ(host_ops + roots, et_ops);
}

TEST_F(HostOpsTest, GpuOpsCarryTheirLaunchersStep) {
  absl::StatusOr<Graph> g = ConvertMlp("mlp1024_steps.et");
  ASSERT_TRUE(g.ok()) << g.status();
  int64_t launched = 0, with_step = 0;
  for (NodeIndex i = 0; i < g->size(); ++i) {
    const Node& n = g->node(i);
    if (!IsGpu(n)) continue;
    std::optional<NodeIndex> launcher;
    for (NodeIndex d : g->ctrl_deps(i)) {
      if (!IsGpu(g->node(d))) {
        launcher = d;
        break;
      }
    }
    if (!launcher) continue;
    ++launched;
    const std::optional<int64_t> step = GetInt(n, attr::kStep);
    with_step += step.has_value();
    EXPECT_EQ(step, GetInt(g->node(*launcher), attr::kStep))
        << "GPU node " << n.id() << " " << n.name() << ", launcher "
        << g->node(*launcher).id() << " " << g->node(*launcher).name();
  }
  EXPECT_GT(launched, 0);
  EXPECT_GT(with_step, 0);
}

TEST_F(HostOpsTest, MetadataHasDeviceAndProfiledStepPeriods) {
  // ProfilerStep#N starts, read from the Kineto JSON's CPU annotations.
  const nlohmann::json kineto = ReadJson(SharedPath(kKineto));
  const nlohmann::json& events =
      kineto.is_array() ? kineto : kineto["traceEvents"];
  std::vector<std::pair<std::string, double>> starts;  // (name, ts us)
  for (const auto& e : events) {
    const std::string name = e.value("name", "");
    if (name.rfind("ProfilerStep#", 0) == 0 &&
        e.value("cat", "") == "user_annotation") {
      starts.emplace_back(name, e["ts"].get<double>());
    }
  }
  std::sort(starts.begin(), starts.end());
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(starts[0].first, "ProfilerStep#1");
  ASSERT_EQ(starts[2].first, "ProfilerStep#3");

  absl::StatusOr<Graph> g = ConvertMlp("mlp1024_meta.et");
  ASSERT_TRUE(g.ok()) << g.status();
  const auto& meta = g->metadata().attr();
  EXPECT_EQ(GetString(meta, attr::kDeviceName).value_or(""),
            "NVIDIA H100 80GB HBM3");
  std::optional<std::vector<double>> steps =
      GetDoubleList(meta, attr::kStepTimesUs);
  ASSERT_TRUE(steps.has_value());
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_NEAR((*steps)[0], starts[1].second - starts[0].second, 0.01);
  EXPECT_NEAR((*steps)[1], starts[2].second - starts[1].second, 0.01);
  EXPECT_GT((*steps)[2], 0);
  // No --measured-step-ms and no truth recorded in the Kineto trace.
  EXPECT_FALSE(GetDouble(meta, attr::kUnprofiledStepUs).has_value());
}

// The GPU front end's spacing, computed here from the Kineto JSON by the
// rule in gpu_queued_gap.h: consecutive ops of a stream whose second was
// launched (runtime call start) before the first started.
TEST_F(HostOpsTest, MetadataHasTheMedianGapBetweenQueuedGpuOps) {
  const nlohmann::json kineto = ReadJson(SharedPath(kKineto));
  const nlohmann::json& events =
      kineto.is_array() ? kineto : kineto["traceEvents"];
  std::map<int64_t, double> launch_ts;  // correlation -> runtime call start
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>>
      streams;  // (device, stream) -> (start, end) us
  std::vector<std::pair<double, int64_t>> corr_of_start;
  for (const auto& e : events) {
    const std::string cat = e.value("cat", "");
    if (!e.contains("args") || !e["args"].contains("correlation")) continue;
    const int64_t corr = e["args"]["correlation"].get<int64_t>();
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      launch_ts[corr] = e["ts"].get<double>();
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      const double ts = e["ts"].get<double>();
      streams[{e["args"].value("device", -1), e["args"].value("stream", -1)}]
          .emplace_back(ts, ts + e.value("dur", 0.0));
      corr_of_start.emplace_back(ts, corr);
    }
  }
  std::map<double, int64_t> corr_at(corr_of_start.begin(), corr_of_start.end());
  std::vector<double> gaps;
  for (auto& [key, ops] : streams) {
    std::sort(ops.begin(), ops.end());
    for (size_t k = 1; k < ops.size(); ++k) {
      auto launch = launch_ts.find(corr_at[ops[k].first]);
      if (launch == launch_ts.end() || launch->second >= ops[k - 1].first)
        continue;
      if (ops[k].first - ops[k - 1].second >= 0)
        gaps.push_back(ops[k].first - ops[k - 1].second);
    }
  }
  ASSERT_GE(gaps.size(), 20u);
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  const double median_us = gaps[gaps.size() / 2];

  absl::StatusOr<Graph> g = ConvertMlp("mlp1024_gap.et");
  ASSERT_TRUE(g.ok()) << g.status();
  std::optional<double> gap =
      GetDouble(g->metadata().attr(), attr::kGpuQueuedGapUs);
  ASSERT_TRUE(gap.has_value());
  EXPECT_NEAR(*gap, median_us, 0.002);
  // A front end's spacing: about a microsecond, far below any kernel here.
  EXPECT_GT(*gap, 0.5);
  EXPECT_LT(*gap, 3.0);
}

TEST_F(HostOpsTest, MeasuredStepMsBecomesTheUnprofiledStep) {
  absl::StatusOr<Graph> g = ConvertMlp("mlp1024_truth.et", 1.86);
  ASSERT_TRUE(g.ok()) << g.status();
  std::optional<double> us =
      GetDouble(g->metadata().attr(), attr::kUnprofiledStepUs);
  ASSERT_TRUE(us.has_value());
  EXPECT_NEAR(*us, 1860, 1e-6);
}

}  // namespace
}  // namespace et::convert
