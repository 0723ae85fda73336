// The node model's decoding rules (docs/node-model.md), one test each, and
// the calibration key they feed: where the tools used to disagree, the test
// names the rule that now holds for all of them.
#include "model/node_model.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_writer.h"
#include "step/calibration.h"

namespace et {
namespace {

using ChakraProtoMsg::Node;

Node Make(uint64_t id, ChakraProtoMsg::NodeType type, const std::string& name) {
  Node n;
  n.set_id(id);
  n.set_type(type);
  n.set_name(name);
  return n;
}

Node Comp(uint64_t id, const std::string& name) {
  return Make(id, ChakraProtoMsg::COMP_NODE, name);
}

Node Coll(uint64_t id, const std::string& name) {
  return Make(id, ChakraProtoMsg::COMM_COLL_NODE, name);
}

NodeModel Model(std::vector<Node> nodes, ModelOptions options = {},
                ChakraProtoMsg::GlobalMetadata meta = {}) {
  return NodeModel::FromGraph(Graph::Build(meta, std::move(nodes)), options);
}

NodeModel One(Node n, ModelOptions options = {}) {
  return Model({std::move(n)}, options);
}

Node WithShapes(Node n, const std::string& shapes, const std::string& types) {
  n.mutable_inputs()->set_shapes(shapes);
  n.mutable_inputs()->set_types(types);
  return n;
}

// The rule et-sim, et-replay and et-viz now share: is_gpu_op true is the
// device, else is_cpu_op's value, else (neither recorded) the device. et-viz
// called the last case "unknown", et-sim a CPU op once.
TEST(NodeModelTest, HostOrDeviceRule) {
  Node cpu = Comp(1, "a"), gpu = Comp(2, "b"), both = Comp(3, "c"),
       neither = Comp(4, "d");
  SetBool(cpu.mutable_attr(), attr::kIsCpuOp, true);
  SetBool(gpu.mutable_attr(), attr::kIsCpuOp, false);
  SetBool(both.mutable_attr(), attr::kIsCpuOp, true);
  SetBool(both.mutable_attr(), attr::kIsGpuOp, true);
  const NodeModel m = Model({cpu, gpu, both, neither});
  EXPECT_TRUE(m.on_host(0));
  EXPECT_EQ(m.kind(0), NodeKind::kHostOp);
  EXPECT_FALSE(m.on_host(1));
  EXPECT_EQ(m.kind(1), NodeKind::kKernel);
  EXPECT_FALSE(m.on_host(2));
  EXPECT_FALSE(m.on_host(3));
  EXPECT_EQ(m.kind(3), NodeKind::kKernel);
}

// duration_ns when positive, else duration_micros; clamped so that sums of a
// few never overflow. Four readers had four fallbacks for a 0 duration_ns.
TEST(NodeModelTest, DurationRule) {
  Node ns = Comp(1, "a"), zero_ns = Comp(2, "b"), huge = Comp(3, "c");
  ns.set_duration_micros(5);
  SetInt64(ns.mutable_attr(), attr::kDurationNs, 1234);
  zero_ns.set_duration_micros(5);
  SetInt64(zero_ns.mutable_attr(), attr::kDurationNs, 0);
  huge.set_duration_micros(~uint64_t{0});
  SetInt64(huge.mutable_attr(), attr::kInclusiveDurNs, 9999);
  const NodeModel m = Model({ns, zero_ns, huge, Comp(4, "d")});
  EXPECT_EQ(m.duration_ns(0), 1234);
  EXPECT_EQ(m.inclusive_duration_ns(0), 1234);  // none recorded: the duration
  EXPECT_EQ(m.duration_ns(1), 5000);
  EXPECT_EQ(m.duration_ns(2), std::numeric_limits<int64_t>::max() / 4);
  EXPECT_EQ(m.inclusive_duration_ns(2), 9999);
  EXPECT_EQ(m.duration_ns(3), 0);
}

// start_ns, else start_time_micros, where 0 means "not recorded" (-1).
TEST(NodeModelTest, StartRule) {
  Node ns = Comp(1, "a"), micros = Comp(2, "b");
  ns.set_start_time_micros(9);
  SetInt64(ns.mutable_attr(), attr::kStartNs, 777);
  micros.set_start_time_micros(9);
  const NodeModel m = Model({ns, micros, Comp(3, "c")});
  EXPECT_EQ(m.start_ns(0), 777);
  EXPECT_EQ(m.start_ns(1), 9000);
  EXPECT_EQ(m.start_ns(2), -1);
}

// Host ops on their thread, device ops on their stream (0 when none is
// recorded), communication on its stream when one is recorded, else on its
// group's channel. et-sim put a collective with stream 0 on stream 0.
TEST(NodeModelTest, QueueRule) {
  Node host = Comp(1, "h"), kernel = Comp(2, "k"), bare = Comp(3, "b");
  SetBool(host.mutable_attr(), attr::kIsCpuOp, true);
  SetInt64(host.mutable_attr(), attr::kTid, 4);
  SetInt64(host.mutable_attr(), attr::kStream, 9);  // ignored: a host op
  SetInt64(kernel.mutable_attr(), attr::kStream, 7);
  Node on_stream = Coll(4, "nccl:all_reduce"), no_stream = Coll(5, "allreduce"),
       stream0 = Coll(6, "allreduce");
  SetInt64(on_stream.mutable_attr(), attr::kStream, 21);
  SetInt64(stream0.mutable_attr(), attr::kStream, 0);
  const NodeModel m =
      Model({host, kernel, bare, on_stream, no_stream, stream0});
  EXPECT_EQ(m.queue(0), (Queue{QueueKind::kThread, 4}));
  EXPECT_EQ(m.queue(1), (Queue{QueueKind::kStream, 7}));
  EXPECT_EQ(m.queue(2), (Queue{QueueKind::kStream, 0}));
  EXPECT_EQ(m.queue(3), (Queue{QueueKind::kStream, 21}));
  EXPECT_EQ(m.queue(4), (Queue{QueueKind::kCommGroup, -1}));
  EXPECT_EQ(m.queue(5), (Queue{QueueKind::kCommGroup, -1}));
}

// comm_type when valid, else the name's spelling, else counted and run as
// metadata. et-sim took a missing comm_type as ALL_REDUCE without a word.
TEST(NodeModelTest, CollectiveTypeRule) {
  Node typed = Coll(1, "whatever"), named = Coll(2, "nccl:all_gather"),
       unknown = Coll(3, "mystery"), bad_type = Coll(4, "mystery2"),
       numbered = Coll(5, "c10d::broadcast_(1)");  // Chakra's 2023 host call
  SetInt64(typed.mutable_attr(), attr::kCommType, ChakraProtoMsg::REDUCE);
  SetInt64(typed.mutable_attr(), attr::kCommRoot, 3);
  SetInt64(typed.mutable_attr(), attr::kCommSize, 4096);
  SetString(typed.mutable_attr(), attr::kDtype, "bfloat16");
  SetInt64(bad_type.mutable_attr(), attr::kCommType, 999);
  const NodeModel m = Model({typed, named, unknown, bad_type, numbered});
  ASSERT_NE(m.comm(0), nullptr);
  EXPECT_EQ(m.kind(0), NodeKind::kCollective);
  EXPECT_EQ(m.comm(0)->type, ChakraProtoMsg::REDUCE);
  EXPECT_EQ(m.comm(0)->root, 3);
  EXPECT_EQ(m.comm(0)->bytes, 4096);
  EXPECT_EQ(m.comm(0)->dtype, Dtype::kBFloat16);
  ASSERT_NE(m.comm(1), nullptr);
  EXPECT_EQ(m.comm(1)->type, ChakraProtoMsg::ALL_GATHER);
  EXPECT_EQ(m.comm(2), nullptr);
  EXPECT_EQ(m.kind(2), NodeKind::kMetadata);
  EXPECT_EQ(m.kind(3), NodeKind::kMetadata);
  EXPECT_EQ(m.counts().unknown_comm_type, 2);
  ASSERT_EQ(m.notes().size(), 1u);  // reported, not dropped
  EXPECT_EQ(m.notes()[0].rfind("2 collectives", 0), 0u) << m.notes()[0];
  ASSERT_NE(m.comm(4), nullptr);
  EXPECT_EQ(m.comm(4)->type, ChakraProtoMsg::BROADCAST);
}

// Send/recv peers: comm_dst / comm_src; a group name resolves against the
// metadata's process groups, an unknown one is counted.
TEST(NodeModelTest, PeerAndGroupRule) {
  Node send = Make(1, ChakraProtoMsg::COMM_SEND_NODE, "send");
  Node recv = Make(2, ChakraProtoMsg::COMM_RECV_NODE, "recv");
  SetInt64(send.mutable_attr(), attr::kCommDst, 5);
  SetInt64(recv.mutable_attr(), attr::kCommSrc, 6);
  SetString(send.mutable_attr(), attr::kPgName, "7");
  SetString(recv.mutable_attr(), attr::kPgName, "nope");
  ChakraProtoMsg::GlobalMetadata meta;
  ProcessGroup pg;
  pg.name = "7";
  EncodeProcessGroups({pg}, meta.mutable_attr());
  const NodeModel m = Model({send, recv}, {}, meta);
  EXPECT_EQ(m.kind(0), NodeKind::kSend);
  EXPECT_EQ(m.comm(0)->peer, 5);
  EXPECT_EQ(m.comm(0)->group, 0);
  EXPECT_EQ(m.string(m.comm(0)->pg_name), "7");
  EXPECT_EQ(m.kind(1), NodeKind::kRecv);
  EXPECT_EQ(m.comm(1)->peer, 6);
  EXPECT_EQ(m.comm(1)->group, -1);
  EXPECT_EQ(m.counts().unknown_groups, 1);
  EXPECT_EQ(m.groups().size(), 1u);
}

// A collective syncs a gradient when stamped grad_sync true, or when it ran
// under an AccumulateGrad op (grad_accumulator); et-sim's --recorded-layout
// check counts them per group from this column.
TEST(NodeModelTest, GradientSyncRule) {
  Node stamped = Coll(1, "nccl:all_reduce");
  SetBool(stamped.mutable_attr(), attr::kGradSync, true);
  Node under_hook = Coll(2, "nccl:all_reduce");
  SetInt64(under_hook.mutable_attr(), attr::kGradAccumulator, 77);
  Node stamped_false = Coll(3, "nccl:all_reduce");
  SetBool(stamped_false.mutable_attr(), attr::kGradSync, false);
  Node plain = Coll(4, "nccl:all_reduce");
  const NodeModel m = Model({stamped, under_hook, stamped_false, plain});
  EXPECT_TRUE(m.comm(0)->grad_sync);
  EXPECT_TRUE(m.comm(1)->grad_sync);
  EXPECT_FALSE(m.comm(2)->grad_sync);
  EXPECT_FALSE(m.comm(3)->grad_sync);
}

// MEM_LOAD / MEM_STORE move bytes on their queue (et-sim ran them as no-ops,
// et-replay as compute): the memory kind, which both tools now time.
TEST(NodeModelTest, MemoryNodesAreMemory) {
  Node load = Make(1, ChakraProtoMsg::MEM_LOAD_NODE, "load");
  SetInt64(load.mutable_attr(), attr::kTensorSize, 1 << 20);
  const NodeModel m =
      Model({load, Make(2, ChakraProtoMsg::METADATA_NODE, "m")});
  EXPECT_EQ(m.kind(0), NodeKind::kMemory);
  EXPECT_EQ(m.bytes(0), 1 << 20);
  EXPECT_EQ(m.kind(1), NodeKind::kMetadata);
}

// One GEMM list (model/gemm_shape.h) for the cost model and the replay: the
// names op_cost knew and et-replay did not are GEMMs in both now.
TEST(NodeModelTest, GemmRuleCoversEveryGemmName) {
  const std::string two = "[\"Tensor(float)\",\"Tensor(float)\"]";
  const std::string three =
      "[\"Tensor(float)\",\"Tensor(float)\",\"Tensor(float)\"]";
  struct Case {
    std::string name, shapes, types;
    int64_t m, n, k;
  };
  for (const Case& c : std::vector<Case>{
           {"aten::mm", "[[64,32],[32,16]]", two, 64, 16, 32},
           {"aten::_addmm_activation", "[[16],[64,32],[32,16]]", three, 64, 16,
            32},
           {"aten::mkldnn_linear", "[[8,32],[16,32]]", two, 8, 16, 32},
           {"aten::dot", "[[32],[32]]", two, 1, 1, 32},
           {"aten::mv", "[[64,32],[32]]", two, 64, 1, 32},
       }) {
    const NodeModel m = One(WithShapes(Comp(1, c.name), c.shapes, c.types));
    ASSERT_NE(m.gemm(0), nullptr) << c.name;
    EXPECT_EQ(m.kind(0), NodeKind::kGemm) << c.name;
    EXPECT_EQ(m.gemm(0)->m, c.m) << c.name;
    EXPECT_EQ(m.gemm(0)->n, c.n) << c.name;
    EXPECT_EQ(m.gemm(0)->k, c.k) << c.name;
    EXPECT_EQ(m.flops(0), 2.0 * c.m * c.n * c.k) << c.name;
  }
}

// K of A and B must agree (et-replay checked, op_cost did not); a mismatch
// is a kernel, not a GEMM of made-up shape.
TEST(NodeModelTest, GemmNeedsMatchingK) {
  const NodeModel m =
      One(WithShapes(Comp(1, "aten::matmul"), "[[4,64,32],[31,16]]",
                     "[\"Tensor(float)\",\"Tensor(float)\"]"));
  EXPECT_EQ(m.gemm(0), nullptr);
  EXPECT_EQ(m.kind(0), NodeKind::kKernel);
}

// A linked kernel carries its launcher's name in io_op; a kernel tagged
// op_kind gemm reads as a matmul; strides mark a transposed operand; a host
// GEMM keeps its shape (for FLOPs) but stays a host op.
TEST(NodeModelTest, GemmFromLauncherTagAndStrides) {
  Node kernel = WithShapes(Comp(1, "sm90_xmma_gemm"), "[[64,32],[32,16]]",
                           "[\"Tensor(c10::Half)\",\"Tensor(c10::Half)\"]");
  SetString(kernel.mutable_attr(), attr::kIoOp, "aten::mm");
  SetString(kernel.mutable_attr(), attr::kInputStrides, "[[1,64],[16,1]]");
  Node tagged = WithShapes(Comp(2, "gemm_kernel"), "[[8,4],[4,2]]",
                           "[\"Tensor(float)\",\"Tensor(float)\"]");
  SetString(tagged.mutable_attr(), attr::kOpKind, "gemm");
  Node host = WithShapes(Comp(3, "aten::mm"), "[[8,4],[4,2]]",
                         "[\"Tensor(float)\",\"Tensor(float)\"]");
  SetBool(host.mutable_attr(), attr::kIsCpuOp, true);
  const NodeModel m = Model({kernel, tagged, host});
  ASSERT_NE(m.gemm(0), nullptr);
  EXPECT_TRUE(m.gemm(0)->trans_a);
  EXPECT_FALSE(m.gemm(0)->trans_b);
  EXPECT_EQ(m.gemm(0)->dtype, Dtype::kFloat16);
  EXPECT_EQ(m.kind(1), NodeKind::kGemm);
  EXPECT_EQ(m.kind(2), NodeKind::kHostOp);
  ASSERT_NE(m.gemm(2), nullptr);
  EXPECT_EQ(m.flops(2), 2.0 * 8 * 2 * 4);
}

// FLOPs and bytes: num_ops / tensor_size when recorded, else from the shapes
// (a graph from another converter), marked so.
TEST(NodeModelTest, CostRule) {
  Node recorded = Comp(1, "aten::relu");
  SetInt64(recorded.mutable_attr(), attr::kNumOps, 100);
  const std::string types = "[\"Tensor(float)\"]";
  Node derived = WithShapes(Comp(2, "aten::relu"), "[[1024]]", types);
  derived.mutable_outputs()->set_shapes("[[1024]]");
  derived.mutable_outputs()->set_types(types);
  const NodeModel m = Model({recorded, derived});
  EXPECT_EQ(m.flops(0), 100);
  EXPECT_FALSE(m.cost_from_shapes(0));
  EXPECT_TRUE(m.cost_from_shapes(1));
  EXPECT_EQ(m.bytes(1), 2 * 1024 * 4);
}

// The IO table: positions typed once, dims flat, recorded tensors kept for
// device nodes only; bad values counted with the first named.
TEST(NodeModelTest, IoTable) {
  Node k =
      WithShapes(Comp(1, "k"), "[[2,3],[],[[4],[5]]]",
                 "[\"Tensor(float)\",\"Int\",\"GenericList[Tensor(float)]\"]");
  k.mutable_inputs()->set_values("[[10,20,0,6,4,\"cuda:0\"],3,[]]");
  Node host = WithShapes(Comp(2, "h"), "[[2]]", "[\"Tensor(float)\"]");
  host.mutable_inputs()->set_values("[[11,21,0,2,4,\"cpu\"]]");
  SetBool(host.mutable_attr(), attr::kIsCpuOp, true);
  Node bad = WithShapes(Comp(3, "b"), "[[2,", "[\"Tensor(float)\"]");
  const NodeModel m = Model({k, host, bad});
  ASSERT_EQ(m.inputs(0).size(), 3u);
  EXPECT_EQ(m.inputs(0)[0].kind, IoKind::kTensor);
  EXPECT_EQ(m.inputs(0)[0].dtype, Dtype::kFloat32);
  EXPECT_EQ(std::vector<int64_t>(m.dims(m.inputs(0)[0]).begin(),
                                 m.dims(m.inputs(0)[0]).end()),
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(m.inputs(0)[1].kind, IoKind::kScalar);
  EXPECT_EQ(m.inputs(0)[2].kind, IoKind::kTensorList);
  ASSERT_EQ(m.recorded_tensors(0, false).size(), 1u);
  EXPECT_EQ(m.recorded_tensors(0, false)[0].storage_id, 20u);
  EXPECT_EQ(m.recorded_tensors(0, false)[0].bytes(), 24u);
  EXPECT_TRUE(m.recorded_tensors(1, false).empty());  // host memory
  EXPECT_GE(m.counts().io_bad_values, 1);
  EXPECT_EQ(m.counts().first_io_error.rfind("node 3: ", 0), 0u)
      << m.counts().first_io_error;
  ModelOptions lean;
  lean.keep_io = false;
  EXPECT_TRUE(Model({k}, lean).inputs(0).empty());
}

// The calibration key: the canonical shapes text, whatever the quoting (the
// writer re-dumped parsed JSON, the reader stripped blanks from raw text:
// Python-quoted shapes never matched).
TEST(NodeModelTest, ShapesKeyIsCanonical) {
  const NodeModel json =
      One(WithShapes(Comp(1, "aten::mm"), "[[64, 32], [32, 16], []]",
                     "[\"Tensor(float)\", \"Tensor(float)\", \"Int\"]"));
  const NodeModel python =
      One(WithShapes(Comp(1, "aten::mm"), "[[64, 32], [32, 16], []]",
                     "['Tensor(float)', 'Tensor(float)', 'Int']"));
  EXPECT_EQ(json.input_shapes_key(0), "[[64,32],[32,16],[]]");
  EXPECT_EQ(python.input_shapes_key(0), json.input_shapes_key(0));
}

// What a replay writes, a simulation finds; a file of the wrong shape is one
// error line, never an exception.
TEST(NodeModelTest, CalibrationRoundTrip) {
  const NodeModel m =
      One(WithShapes(Comp(1, "aten::mm"), "[[64, 32], [32, 16]]",
                     "['Tensor(float)', 'Tensor(float)']"));
  const std::string path = ::testing::TempDir() + "/node_model_cal.json";
  CalibrationEntry e;
  e.name = std::string(m.name(0));
  e.shapes_key = std::string(m.input_shapes_key(0));
  e.samples_ns = {2000, 4000};
  ASSERT_TRUE(WriteCalibration(path, {e}, "H100").ok());
  absl::StatusOr<CalibrationTable> table = LoadCalibration(path);
  ASSERT_TRUE(table.ok()) << table.status();
  auto it = table->find(CalibrationKey(m.name(0), m.input_shapes_key(0)));
  ASSERT_NE(it, table->end());
  EXPECT_DOUBLE_EQ(it->second, 3000);
  std::ofstream(path) << R"({"format": "et-calibration", "entries": [
      {"name": "aten::mm", "mean_us": 1, "input_shapes": "not a list"}]})";
  absl::StatusOr<CalibrationTable> bad = LoadCalibration(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("input_shapes is not a list"),
            std::string::npos)
      << bad.status();
  std::remove(path.c_str());
}

// Structure, checked once for every tool: cyclic ctrl deps are dropped (data
// deps followed), dangling deps counted, a data cycle is not executable.
TEST(NodeModelTest, StructureCheck) {
  Node a = Comp(1, "a"), b = Comp(2, "b");
  a.add_ctrl_deps(2);
  b.add_ctrl_deps(1);
  b.add_data_deps(1);
  b.add_data_deps(99);
  const NodeModel ctrl_cycle = Model({a, b});
  EXPECT_TRUE(ctrl_cycle.executable().ok());
  EXPECT_EQ(ctrl_cycle.followed_deps(), DepSelection::kDataOnly);
  EXPECT_EQ(ctrl_cycle.order(), (std::vector<NodeIndex>{0, 1}));
  ASSERT_EQ(ctrl_cycle.notes().size(), 1u);
  EXPECT_NE(ctrl_cycle.notes()[0].find("ctrl_deps are cyclic"),
            std::string::npos);
  EXPECT_NE(ctrl_cycle.notes()[0].find("1 deps name ids not in the graph"),
            std::string::npos);

  a.add_data_deps(2);
  const NodeModel data_cycle = Model({a, b});
  EXPECT_FALSE(data_cycle.executable().ok());
  EXPECT_NE(data_cycle.executable().message().find("cyclic"),
            std::string::npos);
}

// Load streams the file: nodes out of id order come out sorted, repeated ids
// are refused naming the node.
TEST(NodeModelTest, LoadSortsAndRefusesRepeatedIds) {
  const std::string path = ::testing::TempDir() + "/node_model_load.et";
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  Node late = Comp(5, "late"), early = Comp(2, "early");
  SetInt64(late.mutable_attr(), attr::kDurationNs, 50);
  absl::Status written = WriteEtFile(path, meta, {late, early});
  ASSERT_TRUE(written.ok()) << written;
  absl::StatusOr<NodeModel> m = NodeModel::Load(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->id(0), 2u);
  EXPECT_EQ(m->name(1), "late");
  EXPECT_EQ(m->duration_ns(1), 50);
  ASSERT_TRUE(WriteEtFile(path, meta, {late, early, late}).ok());
  absl::StatusOr<NodeModel> dup = NodeModel::Load(path);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("node 5: id repeated"),
            std::string::npos)
      << dup.status();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace et
