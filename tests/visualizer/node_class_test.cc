// Tests of how et-viz classifies nodes now that every fact comes from the node
// model (model/node_model.h): where the model's rules differ from the ones
// et-viz had (device of a node without host/device flags, the track of a
// collective without a stream, a collective without comm_type, shapes text),
// the test says which rule it is and what et-viz did before.
#include "visualizer/node_class.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"
#include "visualizer/trace_report.h"

namespace et::viz {
namespace {

using ChakraProtoMsg::Node;

Node MakeNode(uint64_t id, const std::string& name,
              ChakraProtoMsg::NodeType type) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(type);
  return n;
}

NodeIndex IndexOf(const NodeModel& model, uint64_t id) {
  return *model.Find(id);
}

TEST(NodeClassTest, NodeWithoutHostOrDeviceFlagIsAGpuOp) {
  Node host = MakeNode(1, "aten::add", ChakraProtoMsg::COMP_NODE);
  SetBool(host.mutable_attr(), attr::kIsCpuOp, true);
  SetInt64(host.mutable_attr(), attr::kTid, 3);
  Node kernel = MakeNode(2, "kernel", ChakraProtoMsg::COMP_NODE);
  SetBool(kernel.mutable_attr(), attr::kIsGpuOp, true);
  SetInt64(kernel.mutable_attr(), attr::kStream, 7);
  Node bare = MakeNode(3, "bare", ChakraProtoMsg::COMP_NODE);
  SetInt64(bare.mutable_attr(), attr::kTid, 3);
  const NodeModel m =
      NodeModel::FromGraph(Graph::Build({}, {host, kernel, bare}));
  EXPECT_EQ(DeviceOf(m, IndexOf(m, 1)), Device::kCpu);
  EXPECT_EQ(QueueName(m.queue(IndexOf(m, 1))), "thread 3");
  EXPECT_EQ(DeviceOf(m, IndexOf(m, 2)), Device::kGpu);
  EXPECT_EQ(QueueName(m.queue(IndexOf(m, 2))), "stream 7");
  // The model's host/device rule: neither is_cpu_op nor is_gpu_op recorded is
  // a device op (Chakra's feeder and ASTRA-sim run such nodes on the NPU), on
  // stream 0 when it records none. et-viz used to say "unknown" and put it on
  // the thread of its tid.
  EXPECT_EQ(DeviceOf(m, IndexOf(m, 3)), Device::kGpu);
  EXPECT_EQ(QueueName(m.queue(IndexOf(m, 3))), "stream 0");
}

TEST(NodeClassTest, CollectiveTypeIsCommTypeElseItsNameElseUnknown) {
  Node typed = MakeNode(1, "whatever", ChakraProtoMsg::COMM_COLL_NODE);
  SetInt64(typed.mutable_attr(), attr::kCommType,
           ChakraProtoMsg::REDUCE_SCATTER);
  Node named = MakeNode(2, "nccl:all_gather", ChakraProtoMsg::COMM_COLL_NODE);
  Node unnamed = MakeNode(3, "mystery", ChakraProtoMsg::COMM_COLL_NODE);
  SetInt64(unnamed.mutable_attr(), attr::kCommSize, 64);
  Node send = MakeNode(4, "send", ChakraProtoMsg::COMM_SEND_NODE);
  Node compute = MakeNode(5, "aten::mm", ChakraProtoMsg::COMP_NODE);
  const NodeModel m = NodeModel::FromGraph(
      Graph::Build({}, {typed, named, unnamed, send, compute}));
  EXPECT_EQ(CommTypeLabel(m, IndexOf(m, 1)), "REDUCE_SCATTER");
  // The model's communication rule: without comm_type the type its name
  // spells, else none. et-viz used to read a missing comm_type as ALL_REDUCE
  // (the proto3 default) whatever the name said.
  EXPECT_EQ(CommTypeLabel(m, IndexOf(m, 2)), "ALL_GATHER");
  EXPECT_EQ(CommTypeLabel(m, IndexOf(m, 3)), "UNKNOWN");
  // Still drawn and filtered as a collective: the kind is the node type.
  EXPECT_EQ(KindOf(m, IndexOf(m, 3)), DrawKind::kCollective);
  EXPECT_EQ(CommTypeLabel(m, IndexOf(m, 4)), "SEND");
  EXPECT_EQ(CommTypeLabel(m, IndexOf(m, 5)), "");
}

TEST(NodeClassTest, BytesAreCommSizeElseRecordedTensorSize) {
  Node coll = MakeNode(1, "all_reduce", ChakraProtoMsg::COMM_COLL_NODE);
  SetInt64(coll.mutable_attr(), attr::kCommType, ChakraProtoMsg::ALL_REDUCE);
  SetInt64(coll.mutable_attr(), attr::kCommSize, 1 << 20);
  Node recorded = MakeNode(2, "aten::mm", ChakraProtoMsg::COMP_NODE);
  SetBool(recorded.mutable_attr(), attr::kIsCpuOp, true);
  SetUint64(recorded.mutable_attr(), attr::kTensorSize, 4096);
  Node estimated = MakeNode(3, "aten::mm", ChakraProtoMsg::COMP_NODE);
  SetBool(estimated.mutable_attr(), attr::kIsCpuOp, true);
  estimated.mutable_inputs()->set_shapes("[[64,32],[32,16]]");
  estimated.mutable_inputs()->set_types(
      "[\"Tensor(float)\",\"Tensor(float)\"]");
  const NodeModel m =
      NodeModel::FromGraph(Graph::Build({}, {coll, recorded, estimated}));
  EXPECT_EQ(BytesOf(m, IndexOf(m, 1)), 1 << 20);
  EXPECT_EQ(BytesOf(m, IndexOf(m, 2)), 4096);
  // The model estimates a size from the shapes; et-viz shows recorded sizes
  // only, as it did.
  ASSERT_TRUE(m.cost_from_shapes(IndexOf(m, 3)));
  EXPECT_EQ(BytesOf(m, IndexOf(m, 3)), 0);
}

TEST(NodeClassTest, CollectiveWithoutStreamRunsOnItsGroupsChannel) {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ProcessGroup> groups(2);
  groups[0].name = "0";
  groups[1].name = "1";
  groups[1].ranks = {0, 1};
  EncodeProcessGroups(groups, metadata.mutable_attr());
  Node in_group = MakeNode(1, "all_reduce", ChakraProtoMsg::COMM_COLL_NODE);
  SetInt64(in_group.mutable_attr(), attr::kCommType,
           ChakraProtoMsg::ALL_REDUCE);
  SetString(in_group.mutable_attr(), attr::kPgName, "1");
  SetBool(in_group.mutable_attr(), attr::kIsCpuOp, true);
  SetInt64(in_group.mutable_attr(), attr::kTid, 2);
  Node on_stream = in_group;
  on_stream.set_id(2);
  SetInt64(on_stream.mutable_attr(), attr::kStream, 9);
  const NodeModel m =
      NodeModel::FromGraph(Graph::Build(metadata, {in_group, on_stream}));
  // The model's queue rule: communication on its stream when one is
  // recorded, else on its process group's channel. et-viz used to put the
  // first on "thread 2".
  EXPECT_EQ(QueueName(m.queue(IndexOf(m, 1))), "comm group 1");
  EXPECT_EQ(QueueName(m.queue(IndexOf(m, 2))), "stream 9");
  EXPECT_EQ(QueueName({QueueKind::kCommGroup, -1}), "comm group <all>");
}

TEST(NodeClassTest, ReportByShapesUsesTheModelsShapesText) {
  std::vector<Node> nodes;
  for (uint64_t id : {1, 2, 3}) {
    Node n = MakeNode(id, "aten::add", ChakraProtoMsg::COMP_NODE);
    SetBool(n.mutable_attr(), attr::kIsCpuOp, true);
    n.set_duration_micros(10);
    // Two spellings of one shape list, and one other shape.
    n.mutable_inputs()->set_shapes(id == 3   ? "[[8], []]"
                                   : id == 2 ? "[[4, 4], []]"
                                             : "[[4,4],[]]");
    n.mutable_inputs()->set_types("[\"Tensor(float)\",\"Int\"]");
    nodes.push_back(n);
  }
  std::vector<RankTrace> traces;
  traces.push_back(MakeRankTrace(NodeModel::FromGraph(Graph::Build({}, nodes)),
                                 0, "shapes.et"));
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  const TraceReport r = BuildReport(traces, *sel, {/*by_input_shapes=*/true});
  // One canonical text per shape list (NodeModel::input_shapes_key): the two
  // spellings of [[4,4],[]] are one row; et-viz used to group by the raw text.
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(r.ops[0].input_shapes, "[[4,4],[]]");
  EXPECT_EQ(r.ops[0].calls, 2);
  EXPECT_EQ(r.ops[1].input_shapes, "[[8],[]]");
}

TEST(RankTracesTest, RankComesFromTheModelsMetadata) {
  const std::string dir = ::testing::TempDir();
  std::vector<std::string> paths;
  for (int rank : {5, 2}) {
    ChakraProtoMsg::GlobalMetadata metadata;
    SetInt64(metadata.mutable_attr(), attr::kRank, rank);
    Node n = MakeNode(1, "aten::add", ChakraProtoMsg::COMP_NODE);
    const std::string path =
        dir + "/rank_meta_" + std::to_string(rank) + "_trace.et";
    ASSERT_TRUE(SaveGraph(Graph::Build(metadata, {n}), path).ok());
    paths.push_back(path);
  }
  auto traces = LoadRankTraces(paths);
  ASSERT_TRUE(traces.ok()) << traces.status();
  ASSERT_EQ(traces->size(), 2u);
  EXPECT_EQ((*traces)[0].rank, 2);
  EXPECT_EQ((*traces)[1].rank, 5);
  EXPECT_EQ((*traces)[0].model.info().rank, 2);
  // Without --by-shape the IO table is not kept.
  EXPECT_EQ((*traces)[0].model.input_shapes_key(0), "");
}

}  // namespace
}  // namespace et::viz
