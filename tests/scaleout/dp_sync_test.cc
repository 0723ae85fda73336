// The synthesized data-parallel sync on hand-made graphs: what is found, what
// is added, and the errors (the real pairs are in dp_sync_recorded_test.cc).
#include "scaleout/dp_sync.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "model/node_model.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/gradients.h"

namespace et::scaleout {
namespace {

using ChakraProtoMsg::Node;

Node Op(uint64_t id, const std::string& name, std::vector<uint64_t> deps) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(10);
  for (uint64_t d : deps) n.add_data_deps(d);
  SetBool(n.mutable_attr(), attr::kIsCpuOp, true);
  return n;
}

Node Grad(uint64_t id, uint64_t accumulator, const std::string& shapes,
          const std::string& types, const std::string& values) {
  Node n = Op(id, "aten::add_", {id - 1});
  n.mutable_inputs()->set_shapes(shapes);
  n.mutable_inputs()->set_types(types);
  n.mutable_inputs()->set_values(values);
  SetUint64(n.mutable_attr(), attr::kGradAccumulator, accumulator);
  return n;
}

Node Optim(uint64_t id, const std::string& values) {
  Node n = Op(id, "aten::add_", {id - 1});
  n.mutable_inputs()->set_values(values);
  SetUint64(n.mutable_attr(), attr::kOptimizerStep, 200);
  return n;
}

// A forward op, three gradients (float32 4x4, float16 [8], bfloat16 [1000])
// and an optimizer that reads them in the order B, A, C.
Graph ThreeGradients() {
  std::vector<Node> nodes;
  nodes.push_back(Op(1, "aten::linear", {}));
  nodes.push_back(Grad(2, 100, "[[4,4],[4,4],[]]",
                       R"j(["Tensor(float)","Tensor(float)","Int"])j",
                       R"j([[10,11,0,16,4,"cpu"],[12,13,0,16,4,"cpu"],1])j"));
  nodes.push_back(Grad(3, 101, "[[8]]", R"j(["Tensor(c10::Half)"])j",
                       R"j([[20,21,0,8,2,"cpu"]])j"));
  nodes.push_back(Grad(4, 102, "[[1000]]", R"j(["Tensor(c10::BFloat16)"])j",
                       R"j([[30,31,0,1000,2,"cpu"]])j"));
  nodes.push_back(
      Optim(5, R"j([[40,41,0,8,2,"cpu"],[20,21,0,8,2,"cpu"],-0.1])j"));
  nodes.push_back(
      Optim(6, R"j([[42,43,0,16,4,"cpu"],[10,11,0,16,4,"cpu"],-0.1])j"));
  nodes.push_back(
      Optim(7, R"j([[44,45,0,1000,2,"cpu"],[30,31,0,1000,2,"cpu"],-0.1])j"));
  return Graph::Build({}, std::move(nodes));
}

DpSyncOptions Options(DpSyncMode mode) {
  DpSyncOptions o;
  o.mode = mode;
  o.dp_size = 4;
  o.first_bucket_bytes = 32;
  o.bucket_cap_bytes = 1000;
  return o;
}

TEST(GradientsTest, SizesDtypesReadyNodesAndRegistrationOrder) {
  auto found = FindGradients(ThreeGradients());
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->iterations.size(), 1u);
  const Iteration& it = found->iterations[0];
  ASSERT_EQ(it.gradients.size(), 3u);
  EXPECT_EQ(it.gradients[0].bytes, 64);  // float32: 4 bytes
  EXPECT_EQ(it.gradients[0].dtype, Dtype::kFloat32);
  EXPECT_EQ(it.gradients[1].bytes, 16);  // float16: 2 bytes
  EXPECT_EQ(it.gradients[1].dtype, Dtype::kFloat16);
  EXPECT_EQ(it.gradients[2].bytes, 2000);  // bfloat16: 2 bytes
  EXPECT_EQ(it.gradients[2].dtype, Dtype::kBFloat16);
  EXPECT_EQ(it.gradients[2].storage_id, 31u);
  EXPECT_EQ(it.Bytes(), 2080);
  EXPECT_EQ(it.registration_order, (std::vector<int>{1, 0, 2}));
  ASSERT_TRUE(it.optimizer_first.has_value());
  EXPECT_EQ(*it.optimizer_first, 4u);  // node 5
  EXPECT_EQ(*it.optimizer_last, 6u);   // node 7
}

TEST(GradientsTest, NoGradientsIsAClearError) {
  std::vector<Node> nodes = {Op(1, "aten::linear", {}),
                             Op(2, "aten::relu", {1})};
  auto found = FindGradients(Graph::Build({}, std::move(nodes)));
  ASSERT_FALSE(found.ok());
  EXPECT_TRUE(absl::StrContains(found.status().message(),
                                "no parameter gradients found"))
      << found.status();
  // And AddDpSync passes it on.
  std::vector<Node> again = {Op(1, "aten::linear", {})};
  auto sync =
      AddDpSync(Graph::Build({}, std::move(again)), Options(DpSyncMode::kDdp));
  EXPECT_FALSE(sync.ok());
}

TEST(GradientsTest, AGradientWithoutAKnownDtypeNamesItsNode) {
  std::vector<Node> nodes = {
      Op(1, "aten::linear", {}),
      Grad(2, 100, "[[4]]", R"j(["Tensor(weird)"])j", "")};
  auto found = FindGradients(Graph::Build({}, std::move(nodes)));
  ASSERT_FALSE(found.ok());
  EXPECT_TRUE(absl::StartsWith(found.status().message(), "node 2 (aten::add_)"))
      << found.status();
}

TEST(DpSyncTest,
     DdpAllReducesEachBucketAfterItsGradientsAndBeforeTheOptimizer) {
  auto sync = AddDpSync(ThreeGradients(), Options(DpSyncMode::kDdp));
  ASSERT_TRUE(sync.ok()) << sync.status();
  ASSERT_TRUE(sync->graph.has_value());
  EXPECT_FALSE(sync->recorded);
  // float32 {A} reaches 32 bytes; bfloat16 {C} too; float16 {B} stays open.
  ASSERT_EQ(sync->buckets.size(), 3u);
  EXPECT_EQ(sync->buckets[0].bytes, 64);
  EXPECT_EQ(sync->buckets[1].bytes, 2000);
  EXPECT_EQ(sync->buckets[2].bytes, 16);
  EXPECT_EQ(sync->collectives_added, 3);
  const Graph& g = *sync->graph;
  ASSERT_EQ(g.size(), 10u);
  const NodeModel m = NodeModel::FromGraph(g);
  const uint64_t ready[] = {2, 4, 3};  // the bucket's gradient's node
  for (int k = 0; k < 3; ++k) {
    const NodeIndex i = static_cast<NodeIndex>(7 + k);
    EXPECT_TRUE(m.synthesized(i));
    EXPECT_EQ(m.kind(i), NodeKind::kCollective);
    EXPECT_FALSE(m.on_host(i));
    ASSERT_NE(m.comm(i), nullptr);
    EXPECT_EQ(m.comm(i)->type, ChakraProtoMsg::ALL_REDUCE);
    EXPECT_EQ(m.comm(i)->bytes, sync->buckets[k].bytes);
    ASSERT_GE(m.comm(i)->group, 0);
    EXPECT_EQ(m.groups()[m.comm(i)->group].MemberCount(1), 4);
    ASSERT_EQ(g.data_deps(i).size(), 1u);
    EXPECT_EQ(g.node(g.data_deps(i)[0]).id(), ready[k]);
  }
  EXPECT_FALSE(m.synthesized(0));
  // The optimizer's first op (node 5) waits for all three.
  EXPECT_EQ(g.data_deps(4).size(), 4u);
  EXPECT_TRUE(m.executable().ok()) << m.executable();
}

TEST(DpSyncTest, ZeroAndFsdpIssueTheirPatterns) {
  auto zero = AddDpSync(ThreeGradients(), Options(DpSyncMode::kZero));
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->collectives_added, 6);  // reduce-scatter + all-gather each
  const NodeModel mz = NodeModel::FromGraph(*zero->graph);
  EXPECT_EQ(mz.comm(7)->type, ChakraProtoMsg::REDUCE_SCATTER);
  EXPECT_EQ(mz.comm(7)->bytes, 64);
  EXPECT_EQ(mz.comm(10)->type, ChakraProtoMsg::ALL_GATHER);
  EXPECT_EQ(mz.comm(10)->bytes, 16);  // the shard: 64 / 4
  EXPECT_EQ(mz.comm(12)->bytes, 4);   // 16 / 4

  auto fsdp = AddDpSync(ThreeGradients(), Options(DpSyncMode::kFsdp));
  ASSERT_TRUE(fsdp.ok()) << fsdp.status();
  EXPECT_EQ(fsdp->collectives_added, 9);  // 2 all-gathers + 1 reduce-scatter
  const NodeModel mf = NodeModel::FromGraph(*fsdp->graph);
  EXPECT_TRUE(mf.executable().ok()) << mf.executable();
}

TEST(DpSyncTest, NoneAndOneReplicaAddNothing) {
  auto none = AddDpSync(ThreeGradients(), Options(DpSyncMode::kNone));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->graph.has_value());
  DpSyncOptions one = Options(DpSyncMode::kDdp);
  one.dp_size = 1;
  auto single = AddDpSync(ThreeGradients(), one);
  ASSERT_TRUE(single.ok());
  EXPECT_FALSE(single->graph.has_value());
  EXPECT_FALSE(ParseDpSyncMode("allreduce").ok());
  EXPECT_EQ(*ParseDpSyncMode("fsdp"), DpSyncMode::kFsdp);
}

}  // namespace
}  // namespace et::scaleout
