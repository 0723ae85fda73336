// GEMMs of real recorded traces as the replay sees them, converted here with
// our converter: a linked (ET + Kineto) trace's GEMM kernels become cuBLAS
// GEMMs on their recorded stream, and the transposes of a 1.1.1 trace come
// from its recorded strides.
#include <algorithm>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "replay/op_classifier.h"
#include "replay/replay_plan.h"
#include "replay_test_graphs.h"

namespace et::replay {
namespace {

// The replay's GEMM for one node, as if it ran on the device: the model
// decodes a host op's shape only when its FLOPs are not recorded, and these
// CPU-trace ops carry theirs.
bool GemmShapeFromNode(ChakraProtoMsg::Node node, GemmShape* gemm) {
  SetBool(node.mutable_attr(), attr::kIsGpuOp, true);
  const NodeModel model = NodeModel::FromGraph(
      Graph::Build(ChakraProtoMsg::GlobalMetadata(), {node}));
  if (model.gemm(0) == nullptr) return false;
  *gemm = ClassifyNode(model, 0).gemm;
  return true;
}

absl::StatusOr<Graph> Convert(const std::string& et, const std::string& kineto,
                              convert::Granularity granularity,
                              const std::string& out_name) {
  convert::ConvertOptions options;
  options.granularity = granularity;
  if (!kineto.empty()) options.kineto_path = std::string(ET_TEST_DATA) + kineto;
  const std::string out = testing::TempEtPath(out_name);
  auto summary =
      convert::ConvertFile(std::string(ET_TEST_DATA) + et, out, options);
  if (!summary.ok()) return summary.status();
  return LoadGraph(out);
}

// resnet's fc layer, batch 128: addmm x[128, 512] . W^T[512, 1000] forward;
// backward mm grad[128, 1000] . W[1000, 512] and grad^T[1000, 128] . x[128,
// 512]. The 1.0.1 ET has no strides, so no transposes are inferred.
TEST(LinkedGemmTest, ResnetGemmKernelsReplayAsCublasGemmsOnTheirStream) {
  auto graph =
      Convert("/param/resnet_et.1.0.1.json.gz", "/param/resnet_kineto.json.gz",
              convert::Granularity::kSimulation, "resnet_linked.et");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto plan = BuildReplayPlan(NodeModel::FromGraph(*graph), PlanOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<std::vector<int64_t>> mnk;
  for (const ReplayOp& op : plan->ops) {
    if (op.kind != ReplayOpKind::kGemm) continue;
    mnk.push_back({op.gemm.m, op.gemm.n, op.gemm.k, op.gemm.batch});
    EXPECT_EQ(plan->queues[op.queue].kind, ReplayQueueKind::kDeviceStream);
    EXPECT_EQ(op.gemm.dtype, Dtype::kFloat32);
    EXPECT_GT(op.recorded_ns, 0);
    EXPECT_EQ(op.flops, 2.0 * 128 * 512 * 1000);
  }
  std::sort(mnk.begin(), mnk.end());
  const std::vector<std::vector<int64_t>> expected = {
      {128, 512, 1000, 1}, {128, 1000, 512, 1}, {1000, 512, 128, 1}};
  EXPECT_EQ(mnk, expected);
}

// resnet_1gpu 1.1.1 records strides: addmm's weight is a transposed view
// ([2048, 1000] with strides [1, 2048]), as is the first operand of the weight
// gradient's mm ([1000, 32] with strides [1, 1000]); linear's weight is
// contiguous [1000, 2048], B transposed by linear's definition.
TEST(LinkedGemmTest, TransposesComeFromTheRecordedStrides) {
  auto graph = Convert("/param/resnet_1gpu_et.1.1.1.json.gz", "",
                       convert::Granularity::kAll, "resnet_1gpu_all.et");
  ASSERT_TRUE(graph.ok()) << graph.status();
  int addmm = 0, linear = 0, mm_ta = 0, mm_plain = 0;
  for (const ChakraProtoMsg::Node& n : graph->nodes()) {
    GemmShape g;
    if (!GemmShapeFromNode(n, &g)) continue;
    ASSERT_TRUE(GetString(n, attr::kInputStrides).has_value()) << n.id();
    if (n.name() == "aten::addmm") {
      ++addmm;
      EXPECT_FALSE(g.trans_a);
      EXPECT_TRUE(g.trans_b);
      EXPECT_EQ(g.m, 32);
      EXPECT_EQ(g.k, 2048);
      EXPECT_EQ(g.n, 1000);
    } else if (n.name() == "aten::linear") {
      ++linear;
      EXPECT_FALSE(g.trans_a);
      EXPECT_TRUE(g.trans_b);
    } else if (n.name() == "aten::mm" && g.m == 1000) {
      ++mm_ta;
      EXPECT_TRUE(g.trans_a);
      EXPECT_FALSE(g.trans_b);
    } else if (n.name() == "aten::mm") {
      ++mm_plain;
      EXPECT_FALSE(g.trans_a);
      EXPECT_FALSE(g.trans_b);
    }
  }
  EXPECT_GT(addmm, 0);
  EXPECT_EQ(addmm, linear);
  EXPECT_EQ(mm_ta, addmm);
  EXPECT_EQ(mm_plain, addmm);
}

}  // namespace
}  // namespace et::replay
