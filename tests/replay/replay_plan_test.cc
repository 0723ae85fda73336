// Tests of the replay's planning layer: op classification (GEMM shapes,
// collectives) and the dependency engine (issue order, queues,
// cross-queue waits), on real .et files from tests/data and on small graphs
// built here.
#include "replay/replay_plan.h"

#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "replay/op_classifier.h"
#include "replay/replay_report.h"
#include "replay_test_graphs.h"

namespace et::replay {
namespace {

// The replay's GEMM for one node: the model's shape with the replay's types.
bool GemmShapeFromNode(const ChakraProtoMsg::Node& node, GemmShape* gemm) {
  const NodeModel model = NodeModel::FromGraph(
      Graph::Build(ChakraProtoMsg::GlobalMetadata(), {node}));
  if (model.gemm(0) == nullptr) return false;
  *gemm = ClassifyNode(model, 0).gemm;
  return true;
}

using testing::CollNode;
using testing::CompNode;
using testing::Metadata;

const std::string kData = ET_TEST_DATA;

ChakraProtoMsg::Node GemmNode(const std::string& name,
                              const std::string& shapes,
                              const std::string& types) {
  ChakraProtoMsg::Node n = CompNode(1, name, 10, {}, /*host=*/false, 7);
  n.mutable_inputs()->set_shapes(shapes);
  n.mutable_inputs()->set_types(types);
  return n;
}

TEST(OpClassifierTest, GemmShapesFollowPyTorchSemantics) {
  GemmShape g;
  ASSERT_TRUE(GemmShapeFromNode(GemmNode("aten::mm", "[[64, 32], [32, 16]]",
                                         "['Tensor(float)', 'Tensor(float)']"),
                                &g));
  EXPECT_EQ(g.m, 64);
  EXPECT_EQ(g.k, 32);
  EXPECT_EQ(g.n, 16);
  EXPECT_EQ(g.flops(), 2.0 * 64 * 32 * 16);
  // addmm(bias, a, b): the operands are arguments 1 and 2.
  ASSERT_TRUE(GemmShapeFromNode(
      GemmNode("aten::addmm", "[[16], [8, 32], [32, 16], [], []]",
               "['Tensor(c10::Half)', 'Tensor(c10::Half)', "
               "'Tensor(c10::Half)', 'Int', "
               "'Int']"),
      &g));
  EXPECT_EQ(g.m, 8);
  EXPECT_EQ(g.dtype, Dtype::kFloat16);
  // linear(x[4, 8, 32], W[16, 32]): y = x W^T, the batch dims fold into M.
  ASSERT_TRUE(
      GemmShapeFromNode(GemmNode("aten::linear", "[[4, 8, 32], [16, 32], [16]]",
                                 "['Tensor(c10::BFloat16)']"),
                        &g));
  EXPECT_EQ(g.m, 32);
  EXPECT_EQ(g.k, 32);
  EXPECT_EQ(g.n, 16);
  EXPECT_TRUE(g.trans_b);
  EXPECT_EQ(g.dtype, Dtype::kBFloat16);
  ASSERT_TRUE(GemmShapeFromNode(
      GemmNode("aten::bmm", "[[2, 3, 4], [2, 4, 5]]", "[]"), &g));
  EXPECT_EQ(g.batch, 2);
  EXPECT_EQ(g.n, 5);
  // Mismatched inner dimensions are not a GEMM.
  EXPECT_FALSE(GemmShapeFromNode(
      GemmNode("aten::mm", "[[64, 32], [31, 16]]", "[]"), &g));
  EXPECT_FALSE(
      GemmShapeFromNode(GemmNode("aten::relu", "[[64, 32]]", "[]"), &g));
}

// Transposed operands are read from input_strides: a [rows, cols] operand with
// strides [1, rows] is stored column-major. Unit dims decide nothing.
TEST(OpClassifierTest, TransposesFollowTheRecordedStrides) {
  GemmShape g;
  ChakraProtoMsg::Node mm = GemmNode("aten::mm", "[[64, 32], [32, 16]]",
                                     "['Tensor(float)', 'Tensor(float)']");
  SetString(mm.mutable_attr(), attr::kInputStrides, "[[1, 64], [16, 1]]");
  ASSERT_TRUE(GemmShapeFromNode(mm, &g));
  EXPECT_TRUE(g.trans_a);
  EXPECT_FALSE(g.trans_b);
  SetString(mm.mutable_attr(), attr::kInputStrides, "[[32, 1], [1, 32]]");
  ASSERT_TRUE(GemmShapeFromNode(mm, &g));
  EXPECT_FALSE(g.trans_a);
  EXPECT_TRUE(g.trans_b);
  // A row slice of a wider matrix (leading stride 48) is still row-major.
  SetString(mm.mutable_attr(), attr::kInputStrides, "[[48, 1], [16, 1]]");
  ASSERT_TRUE(GemmShapeFromNode(mm, &g));
  EXPECT_FALSE(g.trans_a);
  // linear's weight [N, K] stored transposed is B untransposed.
  ChakraProtoMsg::Node linear =
      GemmNode("aten::linear", "[[8, 32], [16, 32], [16]]",
               "['Tensor(float)', 'Tensor(float)', 'Tensor(float)']");
  SetString(linear.mutable_attr(), attr::kInputStrides,
            "[[32, 1], [1, 16], [1]]");
  ASSERT_TRUE(GemmShapeFromNode(linear, &g));
  EXPECT_FALSE(g.trans_b);
  // bmm: the last two dims decide; a [1, K] row has no layout to infer.
  ChakraProtoMsg::Node bmm = GemmNode("aten::bmm", "[[2, 3, 4], [2, 4, 5]]",
                                      "['Tensor(float)', 'Tensor(float)']");
  SetString(bmm.mutable_attr(), attr::kInputStrides,
            "[[12, 1, 3], [20, 5, 1]]");
  ASSERT_TRUE(GemmShapeFromNode(bmm, &g));
  EXPECT_TRUE(g.trans_a);
  EXPECT_FALSE(g.trans_b);
  ChakraProtoMsg::Node row = GemmNode("aten::mm", "[[1, 32], [32, 16]]",
                                      "['Tensor(float)', 'Tensor(float)']");
  SetString(row.mutable_attr(), attr::kInputStrides, "[[1, 1], [16, 1]]");
  ASSERT_TRUE(GemmShapeFromNode(row, &g));
  EXPECT_FALSE(g.trans_a);
}

// The GEMM's dtype comes from attr `dtype`, else its first tensor input; a type
// no backend implements (complex, float8) leaves the float32 default. JSON
// types (our converter) read like Python ones (Chakra's reference converter).
TEST(OpClassifierTest, GemmDtypeIsOneTheBackendsImplement) {
  GemmShape g;
  ChakraProtoMsg::Node mm =
      GemmNode("aten::mm", "[[64, 32], [32, 16]]",
               R"j(["Tensor(c10::complex<float>)", "Tensor(double)"])j");
  ASSERT_TRUE(GemmShapeFromNode(mm, &g));
  EXPECT_EQ(g.dtype, Dtype::kFloat64);  // the first replayable tensor type
  SetString(mm.mutable_attr(), attr::kDtype, "bfloat16");
  ASSERT_TRUE(GemmShapeFromNode(mm, &g));
  EXPECT_EQ(g.dtype, Dtype::kBFloat16);
  ASSERT_TRUE(GemmShapeFromNode(
      GemmNode("aten::mm", "[[64, 32], [32, 16]]",
               "['Tensor(c10::Float8_e4m3fn)', 'Tensor(c10::Float8_e4m3fn)']"),
      &g));
  EXPECT_EQ(g.dtype, Dtype::kFloat32);
  EXPECT_EQ(ElementBytes(g.dtype), 4);
}

// An unprofiled replay says what the recording says about it, as et-sim
// does: the page faults added (the truth's run paid 1,000 a step more than
// the recorded steps, at 2 us) and recorded steps 60% apart.
TEST(ReplayPlanTest, UnprofiledReplayCarriesTheRecordingsNotes) {
  ChakraProtoMsg::GlobalMetadata meta = Metadata();
  auto* attrs = meta.mutable_attr();
  SetDouble(attrs, attr::kUnprofiledStepUs, 900);
  SetDoubleList(attrs, attr::kStepTimesUs, {1000, 1600});
  SetStringList(attrs, attr::kStepNames, {"ProfilerStep#1", "ProfilerStep#2"});
  SetDouble(attrs, attr::kUnprofiledPageFaultsPerStep, 1500);
  SetDouble(attrs, attr::kProfiledPageFaultsPerStep, 500);
  SetInt64(attrs, attr::kPageFaultNs, 2000);
  std::vector<ChakraProtoMsg::Node> nodes = {
      CompNode(1, "aten::mm", 900, {}, true, 0),
      CompNode(2, "aten::mm", 1500, {1}, true, 0)};
  SetInt64(nodes[0].mutable_attr(), attr::kStep, 1);
  SetInt64(nodes[1].mutable_attr(), attr::kStep, 2);
  const Graph graph = Graph::Build(meta, nodes);
  PlanOptions options;
  options.host_time = HostTimeMode::kUnprofiled;
  auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto has = [&](const std::string& text) {
    for (const std::string& note : plan->notes) {
      if (note.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(
      has("the unprofiled run paid 1500 a step, the recorded steps 500"));
  EXPECT_TRUE(has("the step gains 2.000 ms"));
  EXPECT_TRUE(has("the recorded steps took 1.000 to 1.600 ms"));
  // The recorded run is compared with the recorded steps: no such notes.
  options.host_time = HostTimeMode::kRecorded;
  plan = BuildReplayPlan(NodeModel::FromGraph(graph), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(has("page faults"));
}

// The truth's timing blocks reach the replay's report through what each rank
// sends the others (StepValues), as they reach et-sim's.
TEST(ReplayPlanTest, TheTruthsTimingBlocksReachTheReplaysReport) {
  ChakraProtoMsg::GlobalMetadata meta = Metadata();
  SetDouble(meta.mutable_attr(), attr::kUnprofiledStepUs, 900);
  SetDoubleList(meta.mutable_attr(), attr::kUnprofiledStepBlocksUs,
                {900, 850, 1000});
  const Graph graph =
      Graph::Build(meta, {CompNode(1, "aten::mm", 900, {}, true, 0)});
  PlanOptions options;
  options.host_time = HostTimeMode::kUnprofiled;
  auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const RankSteps local = MakeRankSteps({0}, {950000}, plan->Truth());
  const StepReport report = StepReportOfRanks(*plan, {StepValues(local)});
  ASSERT_TRUE(report.measured_fastest_block_us);
  EXPECT_DOUBLE_EQ(*report.measured_fastest_block_us, 850);
  EXPECT_DOUBLE_EQ(*report.measured_slowest_block_us, 1000);
  ASSERT_EQ(report.ranks.size(), 1u);
  EXPECT_EQ(report.ranks[0].step_us, std::vector<double>{950});
  bool noted = false;
  for (const std::string& n : report.notes)
    noted |=
        n.find("timing blocks took 0.850 to 1.000 ms") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(ReplayPlanTest, RealModelParallelMlpKeepsEveryNodeAndOrdersDeps) {
  auto graph = LoadGraph(kData + "/chakra/mlp_mp.0.et");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto plan = BuildReplayPlan(NodeModel::FromGraph(*graph), PlanOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->ops.size(), graph->size());
  int colls = 0, comps = 0;
  for (const auto& node : graph->nodes()) {
    colls += node.type() == ChakraProtoMsg::COMM_COLL_NODE;
    comps += node.type() == ChakraProtoMsg::COMP_NODE;
  }
  int planned_colls = 0, planned_kernels = 0;
  std::vector<size_t> position(graph->size());
  for (size_t i = 0; i < plan->ops.size(); ++i) {
    position[plan->ops[i].node] = i;
    planned_colls += plan->ops[i].kind == ReplayOpKind::kCollective;
    planned_kernels += plan->ops[i].kind == ReplayOpKind::kKernel;
  }
  EXPECT_EQ(planned_colls, colls);
  EXPECT_EQ(planned_kernels, comps);
  EXPECT_GT(colls, 0);
  // Every dependency is issued first, and one on another queue is covered by a
  // wait on that queue at or after it.
  for (size_t i = 0; i < plan->ops.size(); ++i) {
    for (NodeIndex dep : graph->data_deps(plan->ops[i].node)) {
      const size_t d = position[dep];
      ASSERT_LT(d, i);
      if (plan->ops[d].queue == plan->ops[i].queue) continue;
      bool covered = false;
      for (uint32_t w : plan->waits(i)) {
        covered |= plan->ops[w].queue == plan->ops[d].queue && w >= d;
      }
      EXPECT_TRUE(covered) << "op " << i << " dep " << d;
    }
  }
  // The recorded COMP nodes carry durations: the recorded time is known.
  EXPECT_EQ(plan->ops[position[*graph->Find(0)]].recorded_ns, 32291000);
}

TEST(ReplayPlanTest, CrossStreamDependencyWaitsOnlyForTheLatestProducer) {
  std::vector<ChakraProtoMsg::Node> nodes = {
      CompNode(1, "launch", 5, {}, /*host=*/true, 1),
      CompNode(2, "k_a", 10, {1}, false, 7),
      CompNode(3, "k_b", 10, {2}, false, 7),
      CompNode(4, "k_c", 10, {2, 3}, false, 13),
      CollNode(5, ChakraProtoMsg::ALL_REDUCE, 4096, {4}),
  };
  Graph graph = Graph::Build({}, nodes);
  auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), PlanOptions{});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->ops.size(), 5u);
  // Queues: thread 1, stream 7, stream 13, and the communication stream.
  ASSERT_EQ(plan->queues.size(), 4u);
  EXPECT_EQ(plan->queues[plan->ops[0].queue].kind,
            ReplayQueueKind::kHostThread);
  EXPECT_EQ(plan->ops[1].queue, plan->ops[2].queue);
  EXPECT_NE(plan->ops[3].queue, plan->ops[2].queue);
  // k_b follows k_a on its stream: no wait. k_c waits for k_b only (k_a is
  // implied).
  EXPECT_TRUE(plan->waits(2).empty());
  ASSERT_EQ(plan->waits(3).size(), 1u);
  EXPECT_EQ(plan->waits(3)[0], 2u);
  // The collective runs on its own stream and waits for k_c.
  EXPECT_EQ(plan->queues[plan->ops[4].queue].recorded_id, -1);
  ASSERT_EQ(plan->waits(4).size(), 1u);
  EXPECT_EQ(plan->waits(4)[0], 3u);
  EXPECT_EQ(plan->ops[4].comm.bytes, 4096);
}

// Each process group's collectives get their own stream (data parallel and
// tensor parallel overlap, as with PyTorch's one NCCL stream per
// communicator); collectives of one group stay in order on one stream.
TEST(ReplayPlanTest, EachProcessGroupHasItsOwnCommunicationStream) {
  ChakraProtoMsg::GlobalMetadata meta;
  ProcessGroup dp, tp;
  dp.name = "0";
  tp.name = "1";
  EncodeProcessGroups({dp, tp}, meta.mutable_attr());
  Graph graph = Graph::Build(
      meta, {CollNode(1, ChakraProtoMsg::ALL_REDUCE, 64, {}, "0"),
             CollNode(2, ChakraProtoMsg::ALL_GATHER, 64, {}, "1"),
             CollNode(3, ChakraProtoMsg::ALL_REDUCE, 64, {}, "0")});
  auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), PlanOptions{});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->queues.size(), 2u);
  EXPECT_EQ(plan->ops[0].queue, plan->ops[2].queue);
  EXPECT_NE(plan->ops[0].queue, plan->ops[1].queue);
  EXPECT_EQ(plan->queues[plan->ops[0].queue].comm_group, 0);
  EXPECT_EQ(plan->queues[plan->ops[1].queue].comm_group, 1);
  EXPECT_TRUE(plan->waits(1).empty());  // independent groups: no wait
}

TEST(ReplayPlanTest, CyclicCtrlDepsOfThe2023ConverterFallBackToDataDeps) {
  auto graph = LoadGraph(kData + "/chakra/feeder_tests_chakra.0.et");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto plan = BuildReplayPlan(NodeModel::FromGraph(*graph), PlanOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->used_data_deps_only);
  EXPECT_EQ(plan->ops.size(), graph->size());
}

TEST(ReplayPlanTest, RequiredRanksComeFromMetadataGroupsAndPeers) {
  ChakraProtoMsg::GlobalMetadata meta;
  SetInt64(meta.mutable_attr(), attr::kWorldSize, 4);
  ProcessGroup pg;
  pg.name = "1";
  pg.ranks = {0, 5};
  EncodeProcessGroups({pg}, meta.mutable_attr());
  Graph graph = Graph::Build(
      meta, {CollNode(1, ChakraProtoMsg::ALL_GATHER, 64, {}, "1")});
  auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), PlanOptions{});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->RequiredRanks(), 6);
  EXPECT_EQ(plan->ops[0].comm.group, 0);
  EXPECT_EQ(plan->unknown_group_ops, 0);
}

// Values that would hang the replay (it really waits for recorded times) or
// hand MPI a negative count are refused while planning, naming the node.
TEST(ReplayPlanTest, AbsurdDurationsSizesAndPeersAreRefused) {
  auto expect_refused = [](ChakraProtoMsg::Node n, const std::string& what) {
    const uint64_t id = n.id();
    Graph graph = Graph::Build({}, {std::move(n)});
    auto plan = BuildReplayPlan(NodeModel::FromGraph(graph), PlanOptions{});
    ASSERT_FALSE(plan.ok()) << what;
    const std::string message(plan.status().message());
    EXPECT_NE(message.find("node " + std::to_string(id)), std::string::npos)
        << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
  };
  ChakraProtoMsg::Node held = CompNode(3, "k", 0, {}, false, 7);
  SetInt64(held.mutable_attr(), attr::kDurationNs,
           std::numeric_limits<int64_t>::max());
  expect_refused(held, "duration");
  ChakraProtoMsg::Node micros = CompNode(4, "k", 0, {}, false, 7);
  micros.set_duration_micros(~uint64_t{0});
  expect_refused(micros, "duration");
  expect_refused(CollNode(5, ChakraProtoMsg::ALL_REDUCE, -1, {}), "comm_size");
  ChakraProtoMsg::Node send;
  send.set_id(6);
  send.set_name("send");
  send.set_type(ChakraProtoMsg::COMM_SEND_NODE);
  SetInt64(send.mutable_attr(), attr::kCommSize, 64);
  expect_refused(send, "comm_dst");
  SetInt64(send.mutable_attr(), attr::kCommDst, int64_t{1} << 40);
  expect_refused(send, "peer");
}

// A replay on another GPU than the recording's compares with no truth (a
// prediction for another machine has none); the same GPU, or a GPU the trace
// does not name, keeps it.
TEST(TruthWithheldForDeviceTest, AnotherGpuIsAnotherMachine) {
  EXPECT_EQ(
      TruthWithheldForDevice("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"),
      "");
  EXPECT_EQ(TruthWithheldForDevice("", "NVIDIA H200"), "");
  EXPECT_EQ(TruthWithheldForDevice("NVIDIA H100 80GB HBM3", ""), "");
  const std::string why =
      TruthWithheldForDevice("NVIDIA H100 80GB HBM3", "NVIDIA H200");
  EXPECT_NE(why.find("ran on NVIDIA H100 80GB HBM3, not the NVIDIA H200"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace et::replay
