// Tests of the device-memory plan: one buffer per storage, sized to its largest
// view, live from first to last device use, and the cap error naming the op at
// the peak.
#include "replay/storage_plan.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "replay/replay_plan.h"
#include "replay_test_graphs.h"

namespace et::replay {
namespace {

using testing::CompNode;

// A device aten::mm whose inputs are storages `a`, `b` and output `c`, 64x64
// float each.
ChakraProtoMsg::Node Mm(uint64_t id, int a, int b, int c,
                        std::vector<uint64_t> deps) {
  ChakraProtoMsg::Node n =
      CompNode(id, "aten::mm", 10, deps, /*host=*/false, 7);
  auto tensor = [](int storage) {
    return "[" + std::to_string(storage * 10) + ", " + std::to_string(storage) +
           ", 0, 4096, 4, 'cuda:0']";
  };
  n.mutable_inputs()->set_values("[" + tensor(a) + ", " + tensor(b) + "]");
  n.mutable_inputs()->set_shapes("[[64, 64], [64, 64]]");
  n.mutable_inputs()->set_types("['Tensor(float)', 'Tensor(float)']");
  n.mutable_outputs()->set_values("[" + tensor(c) + "]");
  return n;
}

TEST(StoragePlanTest, FreesAfterLastUseSoThePeakIsTheLargestLiveSet) {
  // mm1: 1,2 -> 3; mm2: 3,4 -> 5; mm3: 5,5 -> 6. 16 KiB per storage.
  Graph graph = Graph::Build(
      {}, {Mm(1, 1, 2, 3, {}), Mm(2, 3, 4, 5, {1}), Mm(3, 5, 5, 6, {2})});
  auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), PlanOptions{});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ops[0].kind, ReplayOpKind::kGemm);
  StoragePlan sp = StoragePlan::Build(NodeModel::FromGraph(graph), *plan);
  ASSERT_EQ(sp.storage_count(), 6u);
  EXPECT_EQ(sp.storage_bytes(0), 16384u);
  // Live sets: {1,2,3} = 3, then {3,4,5} = 3, then {5,6} = 2 storages.
  EXPECT_EQ(sp.peak_bytes(), 3u * 16384u);
  EXPECT_EQ(sp.allocate_before(0).size(), 3u);
  EXPECT_EQ(sp.free_after(0).size(), 2u);  // 1 and 2; 3 lives on into mm2
  EXPECT_EQ(sp.allocate_before(2).size(), 1u);
  EXPECT_EQ(sp.free_after(2).size(), 2u);
  EXPECT_EQ(sp.uses(2).size(), 3u);  // two views of storage 5 and the output
  EXPECT_TRUE(sp.CheckCap(*plan, 3 * 16384).ok());
  absl::Status over = sp.CheckCap(*plan, 2 * 16384);
  EXPECT_EQ(over.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(over.message().find("node 1 (aten::mm)"), std::string::npos)
      << over;
}

TEST(StoragePlanTest, HostOpsHoldNoDeviceMemory) {
  ChakraProtoMsg::Node host = Mm(1, 1, 2, 3, {});
  SetBool(host.mutable_attr(), attr::kIsGpuOp, false);
  SetBool(host.mutable_attr(), attr::kIsCpuOp, true);
  Graph graph = Graph::Build({}, {host});
  auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), PlanOptions{});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->ops[0].kind, ReplayOpKind::kHostCompute);
  EXPECT_GT(plan->ops[0].flops, 0);  // GEMM FLOPs kept for the report
  EXPECT_EQ(
      StoragePlan::Build(NodeModel::FromGraph(graph), *plan).storage_count(),
      0u);
}

}  // namespace
}  // namespace et::replay
