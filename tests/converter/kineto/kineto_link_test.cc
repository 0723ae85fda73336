// Tests of LinkKineto on the real ET + Kineto pairs in tests/data.
#include "converter/kineto/kineto_link.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "tests/converter/kineto/kineto_test_loader.h"

namespace et::kineto {
namespace {

using testing::DataPath;
using testing::DurationMicrosToNanos;
using testing::KinetoEvents;
using testing::LoadedEt;
using testing::LoadEtHostOps;

struct Linked {
  LoadedEt et;
  KinetoTrace trace;
  LinkResult result;
};

Linked LinkPair(const std::string& et_path, const std::string& kineto_path) {
  Linked linked;
  linked.et = LoadEtHostOps(DataPath(et_path));
  EXPECT_FALSE(linked.et.ops.empty()) << et_path;
  auto trace = KinetoTrace::Load(DataPath(kineto_path));
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return linked;
  linked.trace = std::move(*trace);
  auto result = LinkKineto(linked.trace, linked.et.ops, LinkOptions());
  EXPECT_TRUE(result.ok()) << result.status();
  if (result.ok()) linked.result = std::move(*result);
  return linked;
}

absl::flat_hash_map<uint64_t, const HostOpView*> ById(const LoadedEt& et) {
  absl::flat_hash_map<uint64_t, const HostOpView*> by_id;
  for (const HostOpView& op : et.ops) by_id[op.et_id] = &op;
  return by_id;
}

void ExpectEveryThreadMatched(const LinkResult& result, double fraction) {
  ASSERT_FALSE(result.per_thread.empty());
  for (const ThreadMatchStats& t : result.per_thread) {
    EXPECT_GE(t.matched_fraction(), fraction)
        << "ET thread " << t.tid << ": " << t.matched << "/" << t.host_ops;
  }
}

// GPU ops come grouped by stream in start order, and one stream runs one op at
// a time.
void ExpectStreamOrder(const LinkResult& result) {
  for (size_t i = 1; i < result.gpu_ops.size(); ++i) {
    const GpuOp& prev = result.gpu_ops[i - 1];
    const GpuOp& op = result.gpu_ops[i];
    if (prev.device != op.device || prev.stream != op.stream) continue;
    EXPECT_LE(prev.start_ns + prev.dur_ns, op.start_ns) << "gpu op " << i;
  }
}

// Every GPU op was launched while its launcher ran (the launcher's measured
// interval contains the launch call's start).
void ExpectLaunchInsideLauncher(const LinkResult& result) {
  absl::flat_hash_map<uint64_t, HostTiming> timing;
  for (const HostTiming& t : result.timings) timing[t.et_id] = t;
  for (const GpuOp& op : result.gpu_ops) {
    if (op.launcher_et_id == 0 || op.launch_ns < 0) continue;
    const HostTiming& t = timing.at(op.launcher_et_id);
    EXPECT_GE(op.launch_ns, t.start_ns) << op.name;
    EXPECT_LE(op.launch_ns, t.start_ns + t.dur_ns) << op.name;
  }
}

TEST(KinetoLinkTest, SimpleAddLinksItsFourKernels) {
  Linked l =
      LinkPair("hta/simple_add_et.json.gz", "hta/simple_add_kineto.json.gz");
  const LinkResult& r = l.result;
  EXPECT_FALSE(r.used_record_function_id);
  ExpectEveryThreadMatched(r, 1.0);
  ASSERT_EQ(r.gpu_ops.size(), 4u);
  EXPECT_EQ(r.orphan_gpu_ops, 0);
  // Kernel durations and streams, read independently from the file.
  std::vector<int64_t> expected_dur_ns;
  for (const auto& e :
       KinetoEvents(DataPath("hta/simple_add_kineto.json.gz"))) {
    if (e.value("cat", "") == "kernel")
      expected_dur_ns.push_back(DurationMicrosToNanos(e["dur"]));
  }
  auto by_id = ById(l.et);
  std::map<std::string, int> launchers;
  for (size_t i = 0; i < r.gpu_ops.size(); ++i) {
    const GpuOp& op = r.gpu_ops[i];
    EXPECT_EQ(op.stream, 7);
    EXPECT_EQ(op.device, 0);
    EXPECT_EQ(op.category, "kernel");
    EXPECT_EQ(op.dur_ns, expected_dur_ns[i]);
    ASSERT_NE(op.launcher_et_id, 0u);
    ++launchers[std::string(by_id.at(op.launcher_et_id)->name)];
  }
  // Two uniform-distribution kernels from aten::rand, two add kernels from
  // aten::add.
  EXPECT_EQ(launchers["aten::uniform_"], 2);
  EXPECT_EQ(launchers["aten::add"], 2);
  EXPECT_EQ(r.gpu_ops[0].grid, (std::vector<int64_t>{256, 1, 1}));
  ExpectStreamOrder(r);
  ExpectLaunchInsideLauncher(r);
  // The outermost annotation's duration is the Kineto one.
  for (const HostTiming& t : r.timings) {
    if (by_id.at(t.et_id)->name == "[param|cuda]") {
      EXPECT_EQ(t.dur_ns, 19814157000);
    }
  }
  // cudaDeviceSynchronize inside the warmup/measure loops: GPU -> host edges.
  int host_edges = 0;
  for (const SyncEdge& e : r.sync_edges) {
    if (e.kind == SyncEdge::Kind::kGpuToHost) {
      ++host_edges;
      EXPECT_EQ(e.reason, "cudaDeviceSynchronize");
      EXPECT_NE(by_id.count(e.to_host_et_id), 0u);
    }
  }
  EXPECT_GE(host_edges, 1);
}

void ExpectMultiIterationPair(const std::string& et_path,
                              const std::string& kineto_path) {
  Linked l = LinkPair(et_path, kineto_path);
  const LinkResult& r = l.result;
  ExpectEveryThreadMatched(r, 0.99);
  EXPECT_EQ(r.per_thread.size(), 2u);  // forward thread and autograd thread
  // One iteration picked: its span is a small part of the whole trace.
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const KinetoEvent& e : l.trace.events()) {
    if (e.kind != EventKind::kCpuOp) continue;
    first = std::min(first, e.ts_ns);
    last = std::max(last, e.ts_ns + e.dur_ns);
  }
  EXPECT_LT(r.window_end_ns - r.window_start_ns, (last - first) / 10);
  // Every kernel attached to a host op, and launched while that op ran.
  int kernels = 0;
  for (const GpuOp& op : r.gpu_ops) {
    if (op.category != "kernel") continue;
    ++kernels;
    EXPECT_NE(op.launcher_et_id, 0u) << op.name;
  }
  EXPECT_GT(kernels, 100);
  EXPECT_GT(r.gpu_ops_outside_window, 10 * kernels);
  ExpectLaunchInsideLauncher(r);
  ExpectStreamOrder(r);
  // Each GEMM op of the ET launched at least one kernel.
  auto by_id = ById(l.et);
  std::map<uint64_t, int> launched;
  for (const GpuOp& op : r.gpu_ops) ++launched[op.launcher_et_id];
  int gemms = 0;
  for (const HostOpView& op : l.et.ops) {
    if (op.name != "aten::mm" && op.name != "aten::addmm") continue;
    ++gemms;
    EXPECT_GT(launched[op.et_id], 0) << op.name << " " << op.et_id;
  }
  EXPECT_GT(gemms, 0);
}

TEST(KinetoLinkTest, ParamLinearFindsItsIteration) {
  ExpectMultiIterationPair("param/linear_et.json.gz",
                           "param/linear_kineto.json.gz");
}

TEST(KinetoLinkTest, ParamResnetFindsItsIteration) {
  ExpectMultiIterationPair("param/resnet_et.1.0.1.json.gz",
                           "param/resnet_kineto.json.gz");
}

// The legacy (PyTorch 1.13, CPU) pairs: durations from the trace, no GPU work.
void ExpectCpuOnlyPair(const std::string& et_path,
                       const std::string& trace_path,
                       const std::string& probe_name) {
  Linked l = LinkPair(et_path, trace_path);
  const LinkResult& r = l.result;
  ExpectEveryThreadMatched(r, 0.99);
  EXPECT_TRUE(r.gpu_ops.empty());
  EXPECT_TRUE(r.sync_edges.empty());
  EXPECT_EQ(static_cast<int64_t>(r.timings.size()), r.host_ops_matched);
  // The probe op (a unique annotation) has the trace's duration.
  int64_t expected_dur_ns = -1;
  for (const auto& e : KinetoEvents(DataPath(trace_path))) {
    if (e.value("name", "") == probe_name)
      expected_dur_ns = DurationMicrosToNanos(e["dur"]);
  }
  ASSERT_GE(expected_dur_ns, 0);
  auto by_id = ById(l.et);
  bool found = false;
  for (const HostTiming& t : r.timings) {
    EXPECT_GE(t.dur_ns, t.exclusive_dur_ns);
    if (by_id.at(t.et_id)->name != probe_name) continue;
    EXPECT_EQ(t.dur_ns, expected_dur_ns);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(KinetoLinkTest, LegacyCpuPairsNnDemo) {
  ExpectCpuOnlyPair("pytorch-1.13-cpu/nn_demo_et.json.gz",
                    "pytorch-1.13-cpu/nn_demo_trace.json.gz", "epoch_0");
}

TEST(KinetoLinkTest, LegacyCpuPairsDdp) {
  for (int rank = 0; rank < 4; ++rank) {
    ExpectCpuOnlyPair(
        "pytorch-1.13-cpu/ddp_mlp_et_r" + std::to_string(rank) + ".json.gz",
        "pytorch-1.13-cpu/ddp_mlp_trace_r" + std::to_string(rank) + ".json.gz",
        "## step_1 ##");
  }
}

TEST(KinetoLinkTest, LegacyCpuPairsTransformer) {
  ExpectCpuOnlyPair("pytorch-1.13-cpu/tfm_small_et.json.gz",
                    "pytorch-1.13-cpu/tfm_small_trace.json.gz", "## step_1 ##");
}

// Host ops made from a trace's own CPU ops, for traces that come without an ET.
LoadedEt HostOpsFromKineto(const KinetoTrace& trace) {
  LoadedEt et;
  uint64_t id = 1;
  for (const KinetoEvent& e : trace.events()) {
    if (e.kind != EventKind::kCpuOp && e.kind != EventKind::kUserAnnotation)
      continue;
    et.names.emplace_back(trace.name(e.name));
    HostOpView op;
    op.et_id = id++;
    op.name = et.names.back();
    op.tid = e.tid;
    op.order = e.ts_ns;
    et.ops.push_back(op);
  }
  return et;
}

TEST(KinetoLinkTest, StreamWaitEventBecomesCrossStreamEdge) {
  auto trace =
      KinetoTrace::Load(DataPath("hta/event_sync_multi_stream_kineto.json.gz"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  LoadedEt et = HostOpsFromKineto(*trace);
  ASSERT_EQ(et.ops.size(), 6u);
  auto result = LinkKineto(*trace, et.ops, LinkOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectEveryThreadMatched(*result, 1.0);
  // cudaEventRecord (corr 1385) on stream 20 then cudaStreamWaitEvent on stream
  // 24: the sgemm on stream 20 must finish before the next work on stream 24 (a
  // memset).
  int cross = 0;
  for (const SyncEdge& e : result->sync_edges) {
    if (e.kind != SyncEdge::Kind::kGpuToGpu) continue;
    ++cross;
    EXPECT_EQ(e.reason, "cudaStreamWaitEvent");
    const GpuOp& from = result->gpu_ops[e.from_gpu_op];
    const GpuOp& to = result->gpu_ops[e.to_gpu_op];
    EXPECT_EQ(from.stream, 20);
    EXPECT_EQ(from.name, "ampere_sgemm_128x64_nn");
    EXPECT_EQ(to.stream, 24);
    EXPECT_EQ(to.category, "gpu_memset");
    EXPECT_LT(from.start_ns, to.start_ns);
  }
  EXPECT_EQ(cross, 1);
  EXPECT_EQ(result->gpu_ops.size(), 6u);
  EXPECT_EQ(result->orphan_gpu_ops, 0);
}

TEST(KinetoLinkTest, StepSpansAreProfilerSteps) {
  const std::string path = "hta/sampled_rank-0_kineto.json.gz";
  auto trace = KinetoTrace::Load(DataPath(path));
  ASSERT_TRUE(trace.ok()) << trace.status();
  LoadedEt et = HostOpsFromKineto(*trace);
  auto result = LinkKineto(*trace, et.ops, LinkOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  std::map<std::string, int64_t> expected;
  for (const auto& e : KinetoEvents(DataPath(path))) {
    const std::string name = e.value("name", "");
    if (name.rfind("ProfilerStep#", 0) == 0)
      expected[name] = DurationMicrosToNanos(e["dur"]);
  }
  ASSERT_EQ(expected.size(), 2u);
  ASSERT_EQ(result->steps.size(), 2u);
  for (const StepSpan& step : result->steps)
    EXPECT_EQ(step.dur_ns, expected.at(step.name));
  EXPECT_EQ(result->steps[0].name, "ProfilerStep#551");
  EXPECT_GE(result->matched_step, 0);
  // NCCL kernels are flagged and tied to the collective that issued them.
  auto by_id = ById(et);
  int nccl = 0;
  for (const GpuOp& op : result->gpu_ops) {
    if (!op.is_nccl) continue;
    ++nccl;
    ASSERT_NE(op.collective_et_id, 0u) << op.name;
    const absl::string_view issuer = by_id.at(op.collective_et_id)->name;
    EXPECT_TRUE(issuer.rfind("nccl:", 0) == 0 ||
                issuer.rfind("c10d::", 0) == 0 ||
                issuer == "record_param_comms")
        << issuer;
  }
  EXPECT_GT(nccl, 0);
  ExpectStreamOrder(*result);
}

TEST(KinetoLinkTest, RecordFunctionIdsWinOverOrder) {
  // Two ops with the same name: record-function ids decide which is which, even
  // though the ET lists them in the opposite order.
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 10,
     "args": {"Record function id": 7}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 200, "dur": 30,
     "args": {"Record function id": 8}}]})";
  auto trace = KinetoTrace::Parse(json, "rf.json");
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::vector<HostOpView> ops(2);
  ops[0] = HostOpView{11, 0, "aten::mm", 1, 8, 0};
  ops[1] = HostOpView{12, 0, "aten::mm", 1, 7, 1};
  auto result = LinkKineto(*trace, ops, LinkOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->used_record_function_id);
  ASSERT_EQ(result->timings.size(), 2u);
  EXPECT_EQ(result->timings[0].et_id, 11u);
  EXPECT_EQ(result->timings[0].dur_ns, 30000);
  EXPECT_EQ(result->timings[1].dur_ns, 10000);
}

TEST(KinetoLinkTest, DuplicateHostIdsAreAnError) {
  auto trace = KinetoTrace::Parse(R"({"traceEvents": []})", "empty.json");
  ASSERT_TRUE(trace.ok());
  std::vector<HostOpView> ops(2);
  ops[0].et_id = ops[1].et_id = 5;
  EXPECT_FALSE(LinkKineto(*trace, ops, LinkOptions()).ok());
}

}  // namespace
}  // namespace et::kineto
