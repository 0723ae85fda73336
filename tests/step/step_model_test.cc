// StepModel's rules, one test each, on small graphs built in memory: which
// steps a graph holds and which nodes run in each host-time mode, which nodes
// are host nodes, how recorded starts and durations are read, how GPU ops are
// tied to their launchers (launch counts, shared FLOPs and bytes), how host
// gaps are measured (per thread, dependency-aware), how the unprofiled
// host-time model shortens host ops and gaps (GPU traces: dispatch + launches;
// CPU-only traces: the recorded time less the profiler's per-op cost
// estimated from trivial ops), what measured step each mode compares with, and
// how --host-time values are parsed.
#include "step/step_model.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/gzip_input.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_def.pb.h"
#include "step/host_profile.h"

namespace et {
namespace {

using ChakraProtoMsg::GlobalMetadata;
using ChakraProtoMsg::Node;

// A host op (is_cpu_op) on thread `tid` recorded at [start_ns, start_ns +
// dur_ns), with control deps `deps`.
Node HostOp(uint64_t id, int64_t start_ns, int64_t dur_ns, int64_t tid = 0,
            std::vector<uint64_t> deps = {}) {
  Node n;
  n.set_id(id);
  n.set_name("host" + std::to_string(id));
  n.set_type(ChakraProtoMsg::COMP_NODE);
  SetBool(n.mutable_attr(), attr::kIsCpuOp, true);
  SetInt64(n.mutable_attr(), attr::kStartNs, start_ns);
  SetInt64(n.mutable_attr(), attr::kDurationNs, dur_ns);
  SetInt64(n.mutable_attr(), attr::kTid, tid);
  for (uint64_t d : deps) n.add_ctrl_deps(d);
  return n;
}

// A GPU op (is_gpu_op) launched by `launcher` (a control dep), or by none
// when `launcher` is 0.
Node GpuOp(uint64_t id, int64_t dur_ns, uint64_t launcher) {
  Node n;
  n.set_id(id);
  n.set_name("kernel" + std::to_string(id));
  n.set_type(ChakraProtoMsg::COMP_NODE);
  SetBool(n.mutable_attr(), attr::kIsGpuOp, true);
  SetBool(n.mutable_attr(), attr::kIsCpuOp, false);
  SetInt64(n.mutable_attr(), attr::kDurationNs, dur_ns);
  if (launcher != 0) n.add_ctrl_deps(launcher);
  return n;
}

Node WithStep(Node n, int64_t step) {
  SetInt64(n.mutable_attr(), attr::kStep, step);
  return n;
}

Node WithHostOps(Node n, int64_t host_ops) {
  SetInt64(n.mutable_attr(), attr::kHostOps, host_ops);
  return n;
}

Node WithFlops(Node n, int64_t flops) {
  SetInt64(n.mutable_attr(), attr::kNumOps, flops);
  return n;
}

Node WithBytes(Node n, int64_t bytes) {
  SetUint64(n.mutable_attr(), attr::kTensorSize, static_cast<uint64_t>(bytes));
  return n;
}

Graph MakeGraph(std::vector<Node> nodes, GlobalMetadata meta = {}) {
  return Graph::Build(std::move(meta), std::move(nodes));
}

NodeIndex Index(const Graph& g, uint64_t id) {
  std::optional<NodeIndex> i = g.Find(id);
  EXPECT_TRUE(i.has_value()) << id;
  return i.value_or(0);
}

TEST(StepModelTest, StepsAreTheDistinctStepAttrsInOrder) {
  Graph g =
      MakeGraph({WithStep(HostOp(1, 0, 10), 5), WithStep(HostOp(2, 10, 10), 3),
                 WithStep(HostOp(3, 20, 10), 5), WithStep(HostOp(4, 30, 10), 7),
                 HostOp(5, 40, 10)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_EQ(m.step_ids(), (std::vector<int64_t>{3, 5, 7}));
  EXPECT_EQ(m.steps(), 3);
  EXPECT_EQ(m.step_index(Index(g, 1)), 1);  // step 5
  EXPECT_EQ(m.step_index(Index(g, 2)), 0);  // step 3
  EXPECT_EQ(m.step_index(Index(g, 3)), 1);
  EXPECT_EQ(m.step_index(Index(g, 4)), 2);  // step 7
  EXPECT_EQ(m.step_index(Index(g, 5)), -1);
}

TEST(StepModelTest, NoStepAttrIsOneStep) {
  Graph g = MakeGraph({HostOp(1, 0, 10), HostOp(2, 10, 10)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_TRUE(m.step_ids().empty());
  EXPECT_EQ(m.steps(), 1);
  EXPECT_EQ(m.step_index(0), -1);
  EXPECT_EQ(m.step_index(1), -1);
  EXPECT_EQ(m.nodes_outside_steps(), 0);
}

TEST(StepModelTest, UnprofiledLeavesOutNodesOutsideSteps) {
  Graph g = MakeGraph({HostOp(1, 0, 10), WithStep(HostOp(2, 10, 10), 1),
                       GpuOp(3, 50, 0), WithStep(GpuOp(4, 50, 2), 1)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_EQ(m.nodes_outside_steps(), 2);
  EXPECT_FALSE(m.Runs(Index(g, 1), HostTimeMode::kUnprofiled));
  EXPECT_TRUE(m.Runs(Index(g, 2), HostTimeMode::kUnprofiled));
  EXPECT_FALSE(m.Runs(Index(g, 3), HostTimeMode::kUnprofiled));
  EXPECT_TRUE(m.Runs(Index(g, 4), HostTimeMode::kUnprofiled));
  for (NodeIndex i = 0; i < g.size(); ++i)
    EXPECT_TRUE(m.Runs(i, HostTimeMode::kRecorded)) << i;
}

TEST(StepModelTest, GraphWithoutStepsRunsEverythingInBothModes) {
  Graph g = MakeGraph({HostOp(1, 0, 10), GpuOp(2, 50, 1), GpuOp(3, 50, 0)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_EQ(m.nodes_outside_steps(), 0);
  for (NodeIndex i = 0; i < g.size(); ++i) {
    EXPECT_TRUE(m.Runs(i, HostTimeMode::kUnprofiled)) << i;
    EXPECT_TRUE(m.Runs(i, HostTimeMode::kRecorded)) << i;
  }
}

TEST(StepModelTest, HostNodeRule) {
  auto comp = [](uint64_t id) {
    Node n;
    n.set_id(id);
    n.set_type(ChakraProtoMsg::COMP_NODE);
    return n;
  };
  Node gpu_and_cpu = comp(1);  // is_gpu_op wins over is_cpu_op
  SetBool(gpu_and_cpu.mutable_attr(), attr::kIsGpuOp, true);
  SetBool(gpu_and_cpu.mutable_attr(), attr::kIsCpuOp, true);
  Node cpu = comp(2);
  SetBool(cpu.mutable_attr(), attr::kIsCpuOp, true);
  Node neither = comp(3);
  Node cpu_false = comp(4);
  SetBool(cpu_false.mutable_attr(), attr::kIsCpuOp, false);
  Node gpu_false_cpu = comp(5);  // is_gpu_op false, is_cpu_op true: host
  SetBool(gpu_false_cpu.mutable_attr(), attr::kIsGpuOp, false);
  SetBool(gpu_false_cpu.mutable_attr(), attr::kIsCpuOp, true);

  EXPECT_FALSE(IsHostNode(gpu_and_cpu));
  EXPECT_TRUE(IsHostNode(cpu));
  EXPECT_FALSE(IsHostNode(neither));
  EXPECT_FALSE(IsHostNode(cpu_false));
  EXPECT_TRUE(IsHostNode(gpu_false_cpu));

  Graph g = MakeGraph({gpu_and_cpu, cpu, neither, cpu_false, gpu_false_cpu});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_FALSE(m.is_host(Index(g, 1)));
  EXPECT_TRUE(m.is_host(Index(g, 2)));
  EXPECT_FALSE(m.is_host(Index(g, 3)));
  EXPECT_FALSE(m.is_host(Index(g, 4)));
  EXPECT_TRUE(m.is_host(Index(g, 5)));
  EXPECT_TRUE(m.has_gpu_ops());
}

TEST(StepModelTest, RecordedDurationPrefersPositiveDurationNs) {
  Node both;
  both.set_duration_micros(5);
  SetInt64(both.mutable_attr(), attr::kDurationNs, 1234);
  EXPECT_EQ(NodeModel::FromGraph(MakeGraph({both})).duration_ns(0), 1234);

  Node zero_ns;
  zero_ns.set_duration_micros(5);
  SetInt64(zero_ns.mutable_attr(), attr::kDurationNs, 0);
  EXPECT_EQ(NodeModel::FromGraph(MakeGraph({zero_ns})).duration_ns(0), 5000);

  Node micros_only;
  micros_only.set_duration_micros(7);
  EXPECT_EQ(NodeModel::FromGraph(MakeGraph({micros_only})).duration_ns(0),
            7000);

  EXPECT_EQ(NodeModel::FromGraph(MakeGraph({Node()})).duration_ns(0), 0);
}

TEST(StepModelTest, RecordedStartPrefersStartNs) {
  Node both;
  both.set_start_time_micros(9);
  SetInt64(both.mutable_attr(), attr::kStartNs, 777);
  EXPECT_EQ(NodeModel::FromGraph(MakeGraph({both})).start_ns(0), 777);

  Node micros_only;
  micros_only.set_start_time_micros(9);
  EXPECT_EQ(NodeModel::FromGraph(MakeGraph({micros_only})).start_ns(0), 9000);

  EXPECT_EQ(NodeModel::FromGraph(MakeGraph({Node()})).start_ns(0), -1);

  // The model's column agrees.
  Graph g = MakeGraph({HostOp(1, 4321, 10)});
  EXPECT_EQ(StepModel::Build(NodeModel::FromGraph(g)).recorded_start_ns(0),
            4321);
  EXPECT_EQ(StepModel::Build(NodeModel::FromGraph(g)).recorded_duration_ns(0),
            10);
}

TEST(StepModelTest, GpuOpsCountAsLaunchesAndShareTheirLaunchersWork) {
  // Host op 1 launches kernels 2, 3 and 4; kernel 4 carries FLOPs of its own.
  // Kernel 5 has no launcher.
  Graph g = MakeGraph({WithBytes(WithFlops(HostOp(1, 0, 1000), 600), 300),
                       GpuOp(2, 100, 1), GpuOp(3, 100, 1),
                       WithFlops(GpuOp(4, 100, 1), 50), GpuOp(5, 100, 0),
                       HostOp(6, 2000, 10)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  const NodeIndex host = Index(g, 1);
  EXPECT_EQ(m.launches(host), 3);
  EXPECT_EQ(m.launches(Index(g, 6)), 0);
  EXPECT_EQ(m.launcher(host), -1);
  EXPECT_EQ(m.launcher(Index(g, 2)), static_cast<int64_t>(host));
  EXPECT_EQ(m.launcher(Index(g, 3)), static_cast<int64_t>(host));
  EXPECT_EQ(m.launcher(Index(g, 4)), static_cast<int64_t>(host));
  EXPECT_EQ(m.launcher(Index(g, 5)), -1);
  EXPECT_DOUBLE_EQ(m.flops(host), 600);
  EXPECT_DOUBLE_EQ(m.bytes(host), 300);
  EXPECT_DOUBLE_EQ(m.flops(Index(g, 2)), 200);
  EXPECT_DOUBLE_EQ(m.bytes(Index(g, 2)), 100);
  EXPECT_DOUBLE_EQ(m.flops(Index(g, 3)), 200);
  EXPECT_DOUBLE_EQ(m.flops(Index(g, 4)), 50);  // its own
  EXPECT_DOUBLE_EQ(m.bytes(Index(g, 4)), 0);
  EXPECT_DOUBLE_EQ(m.flops(Index(g, 5)), 0);
}

TEST(StepModelTest, GapIsTheTimeSinceThePreviousOpOnTheThread) {
  Graph g = MakeGraph({HostOp(1, 1000, 500), HostOp(2, 2300, 100)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_EQ(m.HostGapNs(Index(g, 1), HostTimeMode::kRecorded), 0);  // first
  EXPECT_EQ(m.HostGapNs(Index(g, 2), HostTimeMode::kRecorded), 800);
}

TEST(StepModelTest, GapCountsFromALaterEndingDependencyOnAnotherThread) {
  // tid 0: op 1 [0, 1000), op 3 at 5000 waits for op 2 on tid 1, which ends
  // at 4000: only 1000 ns of the gap are tid 0's own.
  Graph g = MakeGraph({HostOp(1, 0, 1000, 0), HostOp(2, 500, 3500, 1),
                       HostOp(3, 5000, 100, 0, {2})});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_EQ(m.HostGapNs(Index(g, 3), HostTimeMode::kRecorded), 1000);
  EXPECT_EQ(m.HostGapNs(Index(g, 2), HostTimeMode::kRecorded), 0);  // first
  EXPECT_EQ(m.HostGapNs(Index(g, 1), HostTimeMode::kRecorded), 0);
}

TEST(StepModelTest, ThreadsDoNotAffectEachOthersGaps) {
  Graph g = MakeGraph({HostOp(1, 0, 1000, 0), HostOp(2, 0, 3000, 1),
                       HostOp(3, 1200, 100, 0), HostOp(4, 3500, 100, 1)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_EQ(m.HostGapNs(Index(g, 3), HostTimeMode::kRecorded), 200);
  EXPECT_EQ(m.HostGapNs(Index(g, 4), HostTimeMode::kRecorded), 500);
}

TEST(StepModelTest, UnprofiledHostTimeInAGpuTraceIsDispatchAndLaunches) {
  HostTimeModel model;
  model.op_ns = {100, 100, 100, 100};
  model.launch_ns = 1000;
  model.gap_ns = {300, 300};
  // Op 1: 4 ET ops launching 2 kernels, recorded 100 us. Op 2: 50 ops
  // recorded in 3000 ns (the model would exceed it). Op 3 follows op 1 after
  // 200 ns, op 4 follows op 3 after 5000 ns.
  Graph g = MakeGraph({WithHostOps(HostOp(1, 0, 100000), 4),
                       WithHostOps(HostOp(2, 0, 3000, 1), 50),
                       HostOp(3, 100200, 1000), HostOp(4, 106200, 1000),
                       GpuOp(10, 7000, 1), GpuOp(11, 8000, 1)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g), model);
  ASSERT_TRUE(m.has_gpu_ops());
  const NodeIndex op1 = Index(g, 1), op2 = Index(g, 2);
  const NodeIndex op3 = Index(g, 3), op4 = Index(g, 4);
  EXPECT_EQ(m.HostDurationNs(op1, HostTimeMode::kUnprofiled),
            4 * 100 + 2 * 1000);
  EXPECT_EQ(m.HostDurationNs(op1, HostTimeMode::kRecorded), 100000);
  EXPECT_EQ(m.HostDurationNs(op2, HostTimeMode::kUnprofiled), 3000);
  EXPECT_EQ(m.HostDurationNs(op3, HostTimeMode::kUnprofiled), 100);
  EXPECT_EQ(m.HostGapNs(op3, HostTimeMode::kRecorded), 200);
  EXPECT_EQ(m.HostGapNs(op3, HostTimeMode::kUnprofiled), 200);
  EXPECT_EQ(m.HostGapNs(op4, HostTimeMode::kRecorded), 5000);
  EXPECT_EQ(m.HostGapNs(op4, HostTimeMode::kUnprofiled), 300);
  // GPU ops keep their recorded time in both modes.
  EXPECT_EQ(m.HostDurationNs(Index(g, 10), HostTimeMode::kUnprofiled), 7000);
  EXPECT_EQ(m.HostDurationNs(Index(g, 11), HostTimeMode::kUnprofiled), 8000);
}

TEST(StepModelTest, UnprofiledHostTimeInACpuTraceTakesOutTheProfilerCost) {
  HostTimeModel model;
  model.op_ns[static_cast<int>(HostOpKind::kDispatch)] = 100;
  // Trivial ops (one op, no launches, no FLOPs or bytes): 1100, 1300, 1500:
  // median 1300, so the profiler costs 1200 ns per op. Ops 4 and 5 compute,
  // op 6 stands for two ops: none of them is trivial (op 6 would move the
  // median to 1500).
  Graph g = MakeGraph({HostOp(1, 0, 1100), HostOp(2, 2000, 1500),
                       HostOp(3, 4000, 1300),
                       WithFlops(WithHostOps(HostOp(4, 6000, 10000), 3), 1000),
                       WithBytes(WithHostOps(HostOp(5, 20000, 4000), 5), 64),
                       WithHostOps(HostOp(6, 30000, 100000), 2)});
  StepModel m = StepModel::Build(NodeModel::FromGraph(g), model);
  ASSERT_FALSE(m.has_gpu_ops());
  EXPECT_EQ(m.profiler_ns_per_op(), 1200);
  EXPECT_EQ(m.HostDurationNs(Index(g, 4), HostTimeMode::kUnprofiled),
            10000 - 3 * 1200);
  // 4000 - 5 x 1200 < 0: never below the dispatch of its 5 ops.
  EXPECT_EQ(m.HostDurationNs(Index(g, 5), HostTimeMode::kUnprofiled), 500);
  EXPECT_EQ(m.HostDurationNs(Index(g, 6), HostTimeMode::kUnprofiled),
            100000 - 2 * 1200);
  EXPECT_EQ(m.HostDurationNs(Index(g, 3), HostTimeMode::kUnprofiled), 100);
  EXPECT_EQ(m.HostDurationNs(Index(g, 1), HostTimeMode::kUnprofiled), 100);
}

// With the converter's two measures (a leaf view's span: the profiler's cost
// inside an op; the nested-op gap: outside it), a CPU-only trace loses their
// sum per op from each gap and then each span, down to the dispatch, what a
// node cannot give owed by the next: no cap on gaps.
TEST(StepModelTest, CpuTraceLosesTheProfilersSpansCostPerOp) {
  GlobalMetadata meta;
  SetDouble(meta.mutable_attr(), attr::kNestedOpGapUs, 6);
  SetDouble(meta.mutable_attr(), attr::kViewOpSpanUs, 9);
  HostTimeModel model;
  model.op_ns[static_cast<int>(HostOpKind::kDispatch)] = 100;
  // Gaps before ops 2, 3: 4000 and 40000 ns.
  Graph g = MakeGraph({WithHostOps(HostOp(1, 0, 50000), 2),
                       HostOp(2, 54000, 12000), HostOp(3, 106000, 30000)},
                      meta);
  StepModel m = StepModel::Build(NodeModel::FromGraph(g), model);
  ASSERT_TRUE(m.profiler_cost_from_spans());
  EXPECT_EQ(m.view_op_span_ns(), 9000);
  EXPECT_EQ(m.profiler_ns_per_op(), 15000);
  EXPECT_DOUBLE_EQ(m.host_ops_per_step(), 4);
  // Op 1: two ops' cost from its span (no gap before it).
  EXPECT_EQ(m.HostDurationNs(Index(g, 1), HostTimeMode::kUnprofiled), 20000);
  // Op 2: 4000 from its gap, then 11000 from its span.
  EXPECT_EQ(m.HostGapNs(Index(g, 2), HostTimeMode::kUnprofiled), 0);
  EXPECT_EQ(m.HostDurationNs(Index(g, 2), HostTimeMode::kUnprofiled), 1000);
  // Op 3: all from its 40000 gap, which keeps the rest uncapped.
  EXPECT_EQ(m.HostGapNs(Index(g, 3), HostTimeMode::kUnprofiled), 25000);
  EXPECT_EQ(m.HostDurationNs(Index(g, 3), HostTimeMode::kUnprofiled), 30000);
}

// The converter's nested-op gap (the profiler's cost outside two ops' spans)
// comes out of every gap of a CPU-only trace, before the cap on gaps; a GPU
// trace's gaps keep the cap alone.
TEST(StepModelTest, CpuTraceGapsLoseTheNestedOpGap) {
  GlobalMetadata meta;
  SetDouble(meta.mutable_attr(), attr::kNestedOpGapUs, 6);
  // Gaps before ops 2, 3, 4: 4000, 9000, 30000 ns.
  Graph g = MakeGraph({HostOp(1, 0, 1000), HostOp(2, 5000, 1000),
                       HostOp(3, 15000, 1000), HostOp(4, 46000, 1000)},
                      meta);
  StepModel m = StepModel::Build(NodeModel::FromGraph(g));
  ASSERT_FALSE(m.has_gpu_ops());
  EXPECT_EQ(m.nested_op_gap_ns(), 6000);
  EXPECT_EQ(m.HostGapNs(Index(g, 2), HostTimeMode::kRecorded), 4000);
  EXPECT_EQ(m.HostGapNs(Index(g, 2), HostTimeMode::kUnprofiled), 0);
  EXPECT_EQ(m.HostGapNs(Index(g, 3), HostTimeMode::kUnprofiled), 3000);
  EXPECT_EQ(m.HostGapNs(Index(g, 4), HostTimeMode::kUnprofiled), 10000);
  // Without the measure the gaps keep the cap alone.
  Graph b = MakeGraph(
      {HostOp(1, 0, 1000), HostOp(2, 5000, 1000), HostOp(3, 15000, 1000)});
  StepModel bare = StepModel::Build(NodeModel::FromGraph(b));
  EXPECT_EQ(bare.HostGapNs(Index(b, 2), HostTimeMode::kUnprofiled), 4000);
  EXPECT_EQ(bare.HostGapNs(Index(b, 3), HostTimeMode::kUnprofiled), 9000);
}

// The unprofiled run's page faults beyond the recorded steps', at the
// measured cost per fault, are shared by each step's host ops in proportion
// to the ops they stand for; fewer faults take time off, down to dispatch.
TEST(StepModelTest, PageFaultsTheTruthsRunPaidAreAdded) {
  auto graph = [](double unprofiled, double profiled, int64_t ns) {
    GlobalMetadata meta;
    SetDouble(meta.mutable_attr(), attr::kUnprofiledPageFaultsPerStep,
              unprofiled);
    SetDouble(meta.mutable_attr(), attr::kProfiledPageFaultsPerStep, profiled);
    if (ns > 0) SetInt64(meta.mutable_attr(), attr::kPageFaultNs, ns);
    return MakeGraph({WithStep(HostOp(1, 0, 10000), 0),
                      WithStep(WithHostOps(HostOp(2, 10000, 20000), 3), 0),
                      WithStep(HostOp(3, 30000, 10000), 1),
                      WithStep(WithHostOps(HostOp(4, 40000, 20000), 3), 1)},
                     meta);
  };
  HostTimeModel model;
  model.op_ns[static_cast<int>(HostOpKind::kDispatch)] = 100;
  const Graph plain = graph(0, 0, 0);
  const StepModel base = StepModel::Build(NodeModel::FromGraph(plain), model);
  EXPECT_FALSE(base.page_faults().known());

  // 1000 faults a step more than recorded, 2 us each: 2 ms a step, 0.5 ms
  // per op (4 ops a step).
  const Graph more = graph(1500, 500, 2000);
  const StepModel m = StepModel::Build(NodeModel::FromGraph(more), model);
  ASSERT_TRUE(m.page_faults().known());
  EXPECT_EQ(m.page_faults().base, "recorded steps");
  EXPECT_EQ(m.page_faults().ns_per_step, 2000000);
  for (uint64_t id : {1, 2, 3, 4}) {
    const int64_t ops = id % 2 == 0 ? 3 : 1;
    EXPECT_EQ(m.HostDurationNs(Index(more, id), HostTimeMode::kUnprofiled),
              base.HostDurationNs(Index(plain, id), HostTimeMode::kUnprofiled) +
                  ops * 500000)
        << id;
    // The recorded run is the recorded run.
    EXPECT_EQ(m.HostDurationNs(Index(more, id), HostTimeMode::kRecorded),
              base.HostDurationNs(Index(plain, id), HostTimeMode::kRecorded));
  }
  // The recorded steps faulted more than the truth's run: time off, down to
  // each op's dispatch.
  const Graph fewer = graph(0, 1000000, 2000);
  const StepModel f = StepModel::Build(NodeModel::FromGraph(fewer), model);
  EXPECT_LT(f.page_faults().ns_per_step, 0);
  EXPECT_EQ(f.HostDurationNs(Index(fewer, 2), HostTimeMode::kUnprofiled), 300);
  // No measured cost: nothing added.
  const Graph uncosted = graph(1500, 500, 0);
  const StepModel u = StepModel::Build(NodeModel::FromGraph(uncosted), model);
  EXPECT_FALSE(u.page_faults().known());
  EXPECT_EQ(u.HostDurationNs(Index(uncosted, 2), HostTimeMode::kUnprofiled),
            base.HostDurationNs(Index(plain, 2), HostTimeMode::kUnprofiled));
}

TEST(StepModelTest, UnprofiledMeasuredStepComesFromMetadata) {
  GlobalMetadata meta;
  SetDouble(meta.mutable_attr(), attr::kUnprofiledStepUs, 1860);
  Graph with = MakeGraph({WithStep(HostOp(1, 0, 10), 1)}, meta);
  MeasuredStep m = StepModel::Build(NodeModel::FromGraph(with))
                       .Measured(HostTimeMode::kUnprofiled);
  ASSERT_TRUE(m.us.has_value());
  EXPECT_DOUBLE_EQ(*m.us, 1860);
  EXPECT_EQ(m.source, "unprofiled-run");

  Graph without = MakeGraph({WithStep(HostOp(1, 0, 10), 1)});
  MeasuredStep none = StepModel::Build(NodeModel::FromGraph(without))
                          .Measured(HostTimeMode::kUnprofiled);
  EXPECT_FALSE(none.us.has_value());
  EXPECT_EQ(none.source, "");
}

TEST(StepModelTest, RecordedMeasuredStepIsTheMeanOfTheGraphsSteps) {
  GlobalMetadata meta;
  SetStringList(meta.mutable_attr(), attr::kStepNames,
                {"ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"});
  SetDoubleList(meta.mutable_attr(), attr::kStepTimesUs, {100, 200, 400});
  SetDouble(meta.mutable_attr(), attr::kMeasuredStepUs, 999);  // not used
  Graph g = MakeGraph(
      {WithStep(HostOp(1, 0, 10), 2), WithStep(HostOp(2, 10, 10), 3)}, meta);
  StepModel model = StepModel::Build(NodeModel::FromGraph(g));
  EXPECT_EQ(model.profiled_step_us(), (std::vector<double>{200, 400}));
  MeasuredStep m = model.Measured(HostTimeMode::kRecorded);
  ASSERT_TRUE(m.us.has_value());
  EXPECT_DOUBLE_EQ(*m.us, 300);
  EXPECT_EQ(m.source, "profiled-run");
}

TEST(StepModelTest, RecordedMeasuredStepWithoutStepsIsMetadataElseSpan) {
  GlobalMetadata meta;
  SetDouble(meta.mutable_attr(), attr::kMeasuredStepUs, 555);
  Graph with = MakeGraph({HostOp(1, 1000, 500), HostOp(2, 3000, 2000)}, meta);
  MeasuredStep m = StepModel::Build(NodeModel::FromGraph(with))
                       .Measured(HostTimeMode::kRecorded);
  ASSERT_TRUE(m.us.has_value());
  EXPECT_DOUBLE_EQ(*m.us, 555);
  EXPECT_EQ(m.source, "profiled-run");

  // First start 1000 ns, last end 5000 ns: 4 us.
  Graph span = MakeGraph({HostOp(1, 1000, 500), HostOp(2, 3000, 2000)});
  MeasuredStep s = StepModel::Build(NodeModel::FromGraph(span))
                       .Measured(HostTimeMode::kRecorded);
  ASSERT_TRUE(s.us.has_value());
  EXPECT_DOUBLE_EQ(*s.us, 4.0);
  EXPECT_EQ(s.source, "profiled-run");

  Node untimed;
  untimed.set_id(1);
  untimed.set_type(ChakraProtoMsg::COMP_NODE);
  MeasuredStep none =
      StepModel::Build(NodeModel::FromGraph(MakeGraph({untimed})))
          .Measured(HostTimeMode::kRecorded);
  EXPECT_FALSE(none.us.has_value());
  EXPECT_EQ(none.source, "");
}

TEST(StepModelTest, ParseHostTimeMode) {
  absl::StatusOr<HostTimeMode> u = ParseHostTimeMode("unprofiled");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(*u, HostTimeMode::kUnprofiled);
  absl::StatusOr<HostTimeMode> r = ParseHostTimeMode("recorded");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, HostTimeMode::kRecorded);
  EXPECT_EQ(HostTimeModeName(HostTimeMode::kRecorded), "recorded");
  EXPECT_EQ(HostTimeModeName(HostTimeMode::kUnprofiled), "unprofiled");
  for (const char* bad : {"profiled", "Recorded", ""}) {
    absl::StatusOr<HostTimeMode> b = ParseHostTimeMode(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(b.status().message().find(std::string("'") + bad + "'"),
              std::string::npos)
        << b.status().message();
  }
}

// Each kind has its own cost per op: on the thread that holds an autograd
// node every op is the engine's; foreach ops are the optimizer's; a forward
// op launching a kernel differs from one that launches nothing. Gaps follow
// the thread's role; --host-speed 2 halves host time.
TEST(StepModelTest, HostCostFollowsTheOpKindAndTheThreadRole) {
  HostTimeModel model;
  model.op_ns = {100, 200, 300, 400};  // dispatch, launch, autograd, optimizer
  model.launch_ns = 1000;
  model.gap_ns = {50, 70};  // python, autograd
  Node backward = HostOp(3, 20000, 90000, 1);
  backward.set_name("MmBackward0");
  Node foreach_op = HostOp(5, 200000, 90000, 0);
  foreach_op.set_name("aten::_foreach_add_");
  Graph g =
      MakeGraph({HostOp(1, 0, 90000), HostOp(2, 100000, 90000), backward,
                 HostOp(4, 120000, 90000, 1), foreach_op, GpuOp(10, 7000, 1)});
  const NodeModel nodes = NodeModel::FromGraph(g);
  StepModel m = StepModel::Build(nodes, model);
  EXPECT_EQ(m.host_kind(Index(g, 1)), HostOpKind::kLaunch);
  EXPECT_EQ(m.host_kind(Index(g, 2)), HostOpKind::kDispatch);
  EXPECT_EQ(m.host_kind(Index(g, 3)), HostOpKind::kAutograd);
  EXPECT_EQ(m.host_kind(Index(g, 4)), HostOpKind::kAutograd);
  EXPECT_EQ(m.host_kind(Index(g, 5)), HostOpKind::kOptimizer);
  EXPECT_EQ(m.thread_role(Index(g, 4)), HostThreadRole::kAutograd);
  EXPECT_EQ(m.thread_role(Index(g, 2)), HostThreadRole::kPython);
  EXPECT_EQ(m.HostDurationNs(Index(g, 1), HostTimeMode::kUnprofiled),
            200 + 1000);
  EXPECT_EQ(m.HostDurationNs(Index(g, 2), HostTimeMode::kUnprofiled), 100);
  EXPECT_EQ(m.HostDurationNs(Index(g, 4), HostTimeMode::kUnprofiled), 300);
  EXPECT_EQ(m.HostDurationNs(Index(g, 5), HostTimeMode::kUnprofiled), 400);
  EXPECT_EQ(m.HostGapNs(Index(g, 2), HostTimeMode::kUnprofiled), 50);
  EXPECT_EQ(m.HostGapNs(Index(g, 4), HostTimeMode::kUnprofiled), 70);
  model.host_speed = 2.0;
  StepModel fast = StepModel::Build(nodes, model);
  EXPECT_EQ(fast.HostDurationNs(Index(g, 1), HostTimeMode::kUnprofiled), 600);
  EXPECT_EQ(fast.HostGapNs(Index(g, 4), HostTimeMode::kUnprofiled), 35);
  // The recorded mode replays the recorded host, whatever the speed.
  EXPECT_EQ(fast.HostDurationNs(Index(g, 1), HostTimeMode::kRecorded), 90000);
}

TEST(HostCostTest, AutogradNamesAreTheEngines) {
  EXPECT_TRUE(IsAutogradEngineName("MmBackward0"));
  EXPECT_TRUE(IsAutogradEngineName("AddBackward1"));
  EXPECT_TRUE(
      IsAutogradEngineName("autograd::engine::evaluate_function: MmBackward0"));
  EXPECT_FALSE(IsAutogradEngineName("aten::native_layer_norm_backward"));
  EXPECT_FALSE(IsAutogradEngineName("aten::mm"));
}

// A real light profile (the H100 mlp1024 one, tests/data/h100): its ops are
// read per kind inside ProfilerStep#1..3, less the light profiler's own cost.
TEST(HostProfileTest, LearnsPerKindCostsFromARealLightTrace) {
  absl::StatusOr<HostProfileResult> r = LearnHostProfile(
      std::string(ET_TEST_DATA) + "/h100/mlp1024_kineto_light.json.gz");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->gpu_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r->steps, 3);
  EXPECT_GT(r->ops, 100);
  const HostTimeModel& m = r->model;
  // The engine's ops and the launching ops do more than a view does.
  EXPECT_GT(m.OpNs(HostOpKind::kAutograd), m.OpNs(HostOpKind::kDispatch));
  EXPECT_GT(m.OpNs(HostOpKind::kLaunch), m.OpNs(HostOpKind::kDispatch));
  EXPECT_LT(m.OpNs(HostOpKind::kDispatch), 2000);
  // cudaLaunchKernel under CUPTI is 7-10 us; CUPTI's 4 us are taken out.
  EXPECT_GT(m.launch_ns, 2000);
  EXPECT_LT(m.launch_ns, 8000);
  EXPECT_GT(m.GapNs(HostThreadRole::kPython), 1000);
  EXPECT_GT(m.GapNs(HostThreadRole::kAutograd), 1000);
  EXPECT_NE(m.source.find("light profile"), std::string::npos);
}

// The H100 conv net's light trace: its first step holds one-time costs (8.5
// ms of host, then 4.3 and 4.0 ms); a kind's cost is the median over steps,
// so the first step does not double the launching ops' cost.
TEST(HostProfileTest, TheFirstStepsOneTimeCostsAreLeftOut) {
  absl::StatusOr<HostProfileResult> r =
      LearnHostProfile(std::string(ET_TEST_DATA) +
                       "/h100-gpu-session/conv_kineto_light.json.gz");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps, 3);
  // All three steps together: 29 us per launching op; the median step: 14.
  EXPECT_LT(r->model.OpNs(HostOpKind::kLaunch), 15000);
  EXPECT_GT(r->model.OpNs(HostOpKind::kLaunch), 8000);
  // Never below the documented cost of an op that only dispatches.
  EXPECT_GE(r->model.OpNs(HostOpKind::kDispatch),
            HostTimeModel().OpNs(HostOpKind::kDispatch));
}

// The legacy profiler's light trace (Debian's torch 1.13, a bare array of
// host ops without categories, tests/data/two-truths): every complete event
// inside a ProfilerStep is a host op but the optimizer's record_function
// ranges (Kineto's user_annotation); the light step is the lower median step.
TEST(HostProfileTest, ALegacyProfilersLightTraceIsRead) {
  const std::string path = std::string(ET_TEST_DATA) +
                           "/two-truths/cpu_mlp_w64_kineto_light.json.gz";
  std::string text;
  ASSERT_TRUE(ReadFileMaybeGzip(path, &text).ok());
  const nlohmann::json events = nlohmann::json::parse(text);
  ASSERT_TRUE(events.is_array());
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (const auto& e : events) {
    if (e.value("name", "").rfind("ProfilerStep#", 0) == 0)
      steps.emplace_back(e["ts"].get<int64_t>(),
                         e["ts"].get<int64_t>() + e["dur"].get<int64_t>());
  }
  int64_t ops = 0;
  std::vector<int64_t> step_us;
  for (const auto& [begin, end] : steps) {
    step_us.push_back(end - begin);
    for (const auto& e : events) {
      const int64_t ts = e.value("ts", int64_t{-1});
      const std::string name = e.value("name", "");
      if (e.value("ph", "") == "X" && ts >= begin && ts < end &&
          name.rfind("ProfilerStep#", 0) != 0 &&
          name.rfind("Optimizer.", 0) != 0)
        ++ops;
    }
  }
  std::sort(step_us.begin(), step_us.end());

  absl::StatusOr<HostProfileResult> r = LearnHostProfile(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps, static_cast<int64_t>(steps.size()));
  EXPECT_EQ(r->ops, ops);
  EXPECT_EQ(r->model.light_step_ns, step_us[(step_us.size() - 1) / 2] * 1000);
  EXPECT_DOUBLE_EQ(r->model.light_ops_per_step,
                   static_cast<double>(ops) / steps.size());
}

// The recorder wraps a legacy light trace in an object to add the faults its
// steps paid: the events keep their legacy reading (no category), the count
// is read. A Kineto light profile's count is read too.
TEST(HostProfileTest, ALightProfilesPageFaultsAreRead) {
  const std::string legacy = std::string(ET_TEST_DATA) +
                             "/two-truths/cpu_mlp_w64_kineto_light.json.gz";
  std::string text;
  ASSERT_TRUE(ReadFileMaybeGzip(legacy, &text).ok());
  nlohmann::json wrapped = {{"traceEvents", nlohmann::json::parse(text)},
                            {"light_page_faults_per_step", 55.25}};
  const std::string path =
      std::string(ET_BINARY_DIR) + "/wrapped_legacy_light.json";
  {
    std::ofstream out(path);
    out << wrapped.dump();
  }
  absl::StatusOr<HostProfileResult> bare = LearnHostProfile(legacy);
  absl::StatusOr<HostProfileResult> r = LearnHostProfile(path);
  ASSERT_TRUE(bare.ok() && r.ok()) << r.status();
  EXPECT_EQ(r->ops, bare->ops);
  EXPECT_EQ(r->model.light_step_ns, bare->model.light_step_ns);
  EXPECT_EQ(bare->model.light_page_faults_per_step, -1);
  EXPECT_EQ(r->model.light_page_faults_per_step, 55.25);

  const std::string kineto = std::string(ET_TEST_DATA) +
                             "/cpu-faults/cpu_rnn_w512_kineto_light.json.gz";
  ASSERT_TRUE(ReadFileMaybeGzip(kineto, &text).ok());
  const double counted =
      nlohmann::json::parse(text)["light_page_faults_per_step"].get<double>();
  absl::StatusOr<HostProfileResult> k = LearnHostProfile(kineto);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->model.light_page_faults_per_step, counted);
  EXPECT_GT(counted, 0);
}

TEST(HostCostMetadataTest, RoundTripsAndRefusesMalformedCosts) {
  HostTimeModel m;
  m.op_ns = {1600, 11200, 4900, 6500};
  m.launch_ns = 7800;
  m.gap_ns = {8300, 7000};
  m.source = "light profile x.json";
  m.host_speed = 2.0;  // a reader's what-if: not stored
  AttrList attrs;
  EXPECT_FALSE(GetHostTimeModel(attrs).has_value());
  SetHostTimeModel(m, &attrs);
  std::optional<HostTimeModel> back = GetHostTimeModel(attrs);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->op_ns, m.op_ns);
  EXPECT_EQ(back->launch_ns, m.launch_ns);
  EXPECT_EQ(back->gap_ns, m.gap_ns);
  EXPECT_EQ(back->source, m.source + ", stored in the .et by et-convert");
  EXPECT_EQ(back->host_speed, 1.0);
  EXPECT_EQ(back->light_step_ns, 0);  // none learned: none stored
  // The light step a CPU-only trace learns the full profiler's cost from
  // (docs/step-model.md, "The CPU corpus") travels with the costs; a hostile
  // value reads as absent, the costs stay.
  m.light_step_ns = 1696000;
  m.light_ops_per_step = 347;
  m.light_profiler_ns_per_op = 1020;
  m.light_profiler_source = "measured at record time";
  SetHostTimeModel(m, &attrs);
  back = GetHostTimeModel(attrs);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->light_step_ns, 1696000);
  EXPECT_EQ(back->light_ops_per_step, 347);
  EXPECT_EQ(back->light_profiler_ns_per_op, 1020);
  EXPECT_EQ(back->light_profiler_source, "measured at record time");
  EXPECT_EQ(back->light_page_faults_per_step, -1);  // none counted
  m.light_page_faults_per_step = 232.5;
  SetHostTimeModel(m, &attrs);
  EXPECT_EQ(GetHostTimeModel(attrs)->light_page_faults_per_step, 232.5);
  EXPECT_EQ(GetHostTimeModel(attrs)->probe_full_over_light_ns, 0);  // none
  m.probe_full_over_light_ns = 9810;
  SetHostTimeModel(m, &attrs);
  EXPECT_EQ(GetHostTimeModel(attrs)->probe_full_over_light_ns, 9810);
  SetInt64(&attrs, attr::kHostCostProbeFullOverLightNs, -3);  // hostile
  EXPECT_EQ(GetHostTimeModel(attrs)->probe_full_over_light_ns, 0);
  SetInt64(&attrs, attr::kHostCostLightProfilerNs, -5);
  back = GetHostTimeModel(attrs);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->light_step_ns, 0);
  EXPECT_EQ(back->op_ns, m.op_ns);
  SetInt64List(&attrs, attr::kHostCostOpNs, {1, 2, 3});  // a kind missing
  EXPECT_FALSE(GetHostTimeModel(attrs).has_value());
  SetInt64List(&attrs, attr::kHostCostOpNs, {1, 2, 3, -4});
  EXPECT_FALSE(GetHostTimeModel(attrs).has_value());
}

TEST(HostProfileTest, ATraceWithoutStepsOrNotKinetoIsAnError) {
  absl::StatusOr<HostProfileResult> r =
      LearnHostProfile(std::string(ET_TEST_DATA) + "/h100/mlp1024_meta.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("mlp1024_meta.json"), std::string::npos);
  EXPECT_NE(r.status().message().find("not a Kineto trace"), std::string::npos);
}

}  // namespace
}  // namespace et
