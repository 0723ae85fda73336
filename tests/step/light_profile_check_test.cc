// Which GPU kernels are launched inside a host range of their own (Inductor's
// records around Triton kernels) on a real torch.compile'd job, and whether
// a light profile's costs are kept for it (step/light_profile_check.h).
#include "step/light_profile_check.h"

#include <gtest/gtest.h>

#include <string>

#include "converter/converter.h"
#include "model/graph.h"
#include "model/node_model.h"

namespace et {
namespace {

// Megatron-LM TP8 rank 0 (tests/data/public, MIT): PyTorch 2 with Inductor's
// fused activations: 80 `triton_poi_fused_add_0` and 40
// `triton_poi_fused_add_mul_tanh_0` records, each around one Triton kernel
// named `triton__0d1d2d3d4de` / `triton__0d1d2d3de` (counted in its Kineto
// trace), among 777 GPU ops.
TEST(LightProfileCheckTest, CountsInductorsRecordsOnMegatron) {
  const std::string data = std::string(ET_TEST_DATA) + "/public/";
  const std::string out = ::testing::TempDir() + "/megatron_lpc.et";
  convert::ConvertOptions options;
  options.kineto_path = data + "megatron_kineto_0.json.gz";
  ASSERT_TRUE(
      convert::ConvertFile(data + "megatron_et_0.json.gz", out, options).ok());
  auto graph = LoadGraph(out);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const NodeModel model = NodeModel::FromGraph(*graph);
  HostTimeModel light;
  light.light_step_ns = 100'000'000;  // as if learned from a light profile
  const LightProfileVerdict v = CheckLightProfile(model, light);
  EXPECT_EQ(v.kernels_in_own_record, 120);
  EXPECT_GT(v.kernels, 600);
  EXPECT_LT(v.kernels, 777);       // memcpy and memset are not kernels
  EXPECT_TRUE(v.usable) << v.why;  // 120 of them: below half
}

// HTA's torch.compile example (tests/data/public, MIT): its one Triton kernel
// is launched inside Inductor's record of the same name, so a light
// profile's costs would time the record: refused, and said why; without a
// light profile there is nothing to refuse.
TEST(LightProfileCheckTest, ACompiledTracesRecordPerKernelRefusesIt) {
  const std::string out = ::testing::TempDir() + "/triton_lpc.et";
  ASSERT_TRUE(convert::ConvertFile(std::string(ET_TEST_DATA) +
                                       "/public/hta_triton_example.json.gz",
                                   out, convert::ConvertOptions())
                  .ok());
  auto graph = LoadGraph(out);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const NodeModel model = NodeModel::FromGraph(*graph);
  HostTimeModel light;
  light.light_step_ns = 1'000'000;
  const LightProfileVerdict v = CheckLightProfile(model, light);
  EXPECT_EQ(v.kernels, 1);
  EXPECT_EQ(v.kernels_in_own_record, 1);
  EXPECT_FALSE(v.usable);
  EXPECT_NE(v.why.find("1 of the trace's 1 GPU kernels"), std::string::npos)
      << v.why;
  EXPECT_TRUE(CheckLightProfile(model, HostTimeModel()).usable);
}

}  // namespace
}  // namespace et
