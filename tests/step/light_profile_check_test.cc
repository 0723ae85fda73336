// Which GPU kernels are launched inside a host range of their own (Inductor's
// records around Triton kernels) on a real torch.compile'd job, and whether
// a light profile's costs are kept for it (step/light_profile_check.h).
#include "step/light_profile_check.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "converter/converter.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_def.pb.h"

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

// The rule on a step as Inductor's wrapper records it under a profiler: each
// Triton kernel launched inside a host range of its name. Three of four
// kernels so: the light profile's costs are not kept; without a light
// profile there is nothing to refuse.
TEST(LightProfileCheckTest, ARecordPerKernelRefusesTheLightProfile) {
  using ChakraProtoMsg::Node;
  std::vector<Node> nodes;
  auto add = [&](uint64_t id, const std::string& name, bool host,
                 uint64_t dep) {
    Node n;
    n.set_id(id);
    n.set_name(name);
    n.set_type(ChakraProtoMsg::COMP_NODE);
    SetBool(n.mutable_attr(), host ? attr::kIsCpuOp : attr::kIsGpuOp, true);
    SetInt64(n.mutable_attr(), attr::kDurationNs, 1000);
    if (dep != 0) n.add_ctrl_deps(dep);
    nodes.push_back(n);
  };
  for (uint64_t k = 0; k < 4; ++k) {
    const std::string kernel = "triton_poi_fused_add_" + std::to_string(k);
    add(10 * k + 1, k < 3 ? kernel : "aten::mm", true, 0);
    add(10 * k + 2, k < 3 ? kernel : "sm90_xmma_gemm", false, 10 * k + 1);
  }
  const NodeModel model =
      NodeModel::FromGraph(Graph::Build({}, std::move(nodes)));
  HostTimeModel light;
  light.light_step_ns = 1'000'000;
  const LightProfileVerdict v = CheckLightProfile(model, light);
  EXPECT_EQ(v.kernels, 4);
  EXPECT_EQ(v.kernels_in_own_record, 3);
  EXPECT_FALSE(v.usable);
  EXPECT_NE(v.why.find("3 of the trace's 4 GPU kernels"), std::string::npos)
      << v.why;
  EXPECT_TRUE(CheckLightProfile(model, HostTimeModel()).usable);
}

}  // namespace
}  // namespace et
