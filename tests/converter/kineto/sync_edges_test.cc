// Unit tests of BuildSyncEdges (converter/kineto/sync_edges.h) on small
// hand-made Kineto traces, one rule per test: cudaEventRecord +
// cudaStreamWaitEvent make a GPU -> GPU edge (through CUPTI's cuda_sync record
// when there is one, through the thread's launch order when not), blocking
// syncs make GPU -> host edges to the next matched host op, and calls with
// nothing to tie are counted, not guessed. GPU ops come from the real
// LinkGpuOps, so their indices are the linker's.
#include "converter/kineto/sync_edges.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/gpu_op_linker.h"
#include "tests/converter/kineto/kineto_events_test_util.h"

namespace et::kineto {
namespace {

using testing::CpuOp;
using testing::CudaSync;
using testing::EventAt;
using testing::Kernel;
using testing::ParseEvents;
using testing::Runtime;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Synced {
  KinetoTrace trace;
  GpuLink link;
  std::vector<SyncEdge> edges;
  int64_t unresolved = 0;

  // Index in link.gpu_ops of the GPU op named `name`, or -1.
  int64_t Gpu(absl::string_view name) const {
    for (size_t g = 0; g < link.gpu_ops.size(); ++g) {
      if (link.gpu_ops[g].name == name) return static_cast<int64_t>(g);
    }
    return -1;
  }
};

// Every CPU op of the trace is matched; its ET id is `ids[name]`.
Synced Build(const std::vector<std::string>& events,
             const std::vector<std::pair<std::string, uint64_t>>& ids,
             int64_t window_start_ns = kMin, int64_t window_end_ns = kMax) {
  Synced s;
  s.trace = ParseEvents(events);
  std::vector<uint64_t> event_et_id(s.trace.events().size(), 0);
  for (size_t e = 0; e < s.trace.events().size(); ++e) {
    for (const auto& [name, id] : ids) {
      if (s.trace.name(s.trace.events()[e].name) == name) event_et_id[e] = id;
    }
  }
  CpuOpNesting nesting(s.trace);
  s.link = LinkGpuOps(s.trace, nesting, event_et_id, {}, kMin, kMax);
  s.edges = BuildSyncEdges(s.trace, nesting, s.link, event_et_id,
                           window_start_ns, window_end_ns, &s.unresolved);
  return s;
}

// Thread 1 inside aten::foo: launches k1 on stream 7, records an event,
// launches k1b on stream 7, makes stream 8 wait for the event, launches k2 on
// stream 8. `with_sync_record` adds CUPTI's record of the wait (2024+).
std::vector<std::string> RecordThenWait(bool with_sync_record) {
  std::vector<std::string> events = {
      CpuOp("aten::foo", 1, 100, 100),
      Runtime("cudaLaunchKernel", 1, 105, 2, 10),
      Runtime("cudaEventRecord", 1, 110, 1, 11),
      Runtime("cudaLaunchKernel", 1, 112, 2, 14),
      Runtime("cudaStreamWaitEvent", 1, 115, 1, 12),
      Runtime("cudaLaunchKernel", 1, 120, 2, 13),
      Kernel("k1", 7, 200, 20, 10),
      Kernel("k1b", 7, 250, 20, 14),
      Kernel("k2", 8, 300, 20, 13),
  };
  if (with_sync_record) {
    events.push_back(CudaSync("Stream Wait Event", 8, 115, 12, 7, 11));
  }
  return events;
}

TEST(SyncEdgesTest, StreamWaitEventTiesTheRecordedOpToTheWaitingStream) {
  // The cuda_sync record names the streams and the record call: the edge runs
  // from the last op on stream 7 at the record (k1, not k1b launched after
  // it) to the first op on stream 8 after the wait (k2).
  Synced s = Build(RecordThenWait(true), {{"aten::foo", 1}});
  ASSERT_EQ(s.edges.size(), 1u);
  EXPECT_EQ(s.edges[0].kind, SyncEdge::Kind::kGpuToGpu);
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].from_gpu_op), s.Gpu("k1"));
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].to_gpu_op), s.Gpu("k2"));
  EXPECT_EQ(s.edges[0].reason, "cudaStreamWaitEvent");
  EXPECT_EQ(s.unresolved, 0);
}

TEST(SyncEdgesTest, StreamWaitEventWithoutSyncRecordUsesLaunchOrder) {
  // Older traces: the record is the thread's last cudaEventRecord (k1 was the
  // last launch before it) and the waiter the next launch on another stream.
  Synced s = Build(RecordThenWait(false), {{"aten::foo", 1}});
  ASSERT_EQ(s.edges.size(), 1u);
  EXPECT_EQ(s.edges[0].kind, SyncEdge::Kind::kGpuToGpu);
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].from_gpu_op), s.Gpu("k1"));
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].to_gpu_op), s.Gpu("k2"));
}

TEST(SyncEdgesTest, WaitWithoutSyncRecordSkipsARunOnTheRecordedStream) {
  // After the wait, k3..k5 go to the recorded stream 7 again and k6 to stream
  // 8, then k7 to stream 9: the waiter is k6, the first launch after the wait
  // on another stream (found past the run, not the last one).
  Synced s = Build({CpuOp("aten::foo", 1, 100, 100),
                    Runtime("cudaLaunchKernel", 1, 105, 2, 10),
                    Runtime("cudaEventRecord", 1, 110, 1, 11),
                    Runtime("cudaStreamWaitEvent", 1, 115, 1, 12),
                    Runtime("cudaLaunchKernel", 1, 120, 2, 13),
                    Runtime("cudaLaunchKernel", 1, 125, 2, 14),
                    Runtime("cudaLaunchKernel", 1, 130, 2, 15),
                    Runtime("cudaLaunchKernel", 1, 135, 2, 16),
                    Runtime("cudaLaunchKernel", 1, 140, 2, 17),
                    Kernel("k1", 7, 200, 20, 10), Kernel("k3", 7, 230, 5, 13),
                    Kernel("k4", 7, 240, 5, 14), Kernel("k5", 7, 250, 5, 15),
                    Kernel("k6", 8, 300, 20, 16), Kernel("k7", 9, 330, 5, 17)},
                   {{"aten::foo", 1}});
  ASSERT_EQ(s.edges.size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].from_gpu_op), s.Gpu("k1"));
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].to_gpu_op), s.Gpu("k6"));
  EXPECT_EQ(s.unresolved, 0);
}

TEST(SyncEdgesTest, WaitWithNothingRecordedIsUnresolved) {
  // No cudaEventRecord before the wait and no cuda_sync record.
  Synced s = Build({CpuOp("aten::foo", 1, 100, 100),
                    Runtime("cudaLaunchKernel", 1, 105, 2, 10),
                    Runtime("cudaStreamWaitEvent", 1, 115, 1, 12),
                    Runtime("cudaLaunchKernel", 1, 120, 2, 13),
                    Kernel("k1", 7, 200, 20, 10), Kernel("k2", 8, 300, 20, 13)},
                   {{"aten::foo", 1}});
  EXPECT_TRUE(s.edges.empty());
  EXPECT_EQ(s.unresolved, 1);
}

TEST(SyncEdgesTest, WaitWhoseStreamGetsNoLaterWorkIsUnresolved) {
  // Recorded k1, but nothing is launched on another stream after the wait.
  Synced s = Build({CpuOp("aten::foo", 1, 100, 100),
                    Runtime("cudaLaunchKernel", 1, 105, 2, 10),
                    Runtime("cudaEventRecord", 1, 110, 1, 11),
                    Runtime("cudaStreamWaitEvent", 1, 115, 1, 12),
                    Kernel("k1", 7, 200, 20, 10)},
                   {{"aten::foo", 1}});
  EXPECT_TRUE(s.edges.empty());
  EXPECT_EQ(s.unresolved, 1);
}

// aten::foo launches k1 on stream 7 and k2 on stream 8, then the thread calls
// `sync` (corr 20, 130..180 us) and starts aten::bar at 190.
std::vector<std::string> LaunchThenBlock(absl::string_view sync) {
  return {CpuOp("aten::foo", 1, 100, 20),
          Runtime("cudaLaunchKernel", 1, 105, 2, 10),
          Runtime("cudaLaunchKernel", 1, 110, 2, 11),
          Runtime(sync, 1, 130, 50, 20),
          CpuOp("aten::bar", 1, 190, 10),
          Kernel("k1", 7, 200, 20, 10),
          Kernel("k2", 8, 210, 20, 11)};
}

TEST(SyncEdgesTest, StreamSynchronizeMakesTheNextHostOpWaitForThatStream) {
  // The cuda_sync record says stream 7 was synchronised: only k1 is waited
  // for, by aten::bar, the first matched op after the call returned.
  std::vector<std::string> events = LaunchThenBlock("cudaStreamSynchronize");
  events.push_back(CudaSync("Stream Sync", 7, 130, 20));
  Synced s = Build(events, {{"aten::foo", 1}, {"aten::bar", 2}});
  ASSERT_EQ(s.edges.size(), 1u);
  EXPECT_EQ(s.edges[0].kind, SyncEdge::Kind::kGpuToHost);
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].from_gpu_op), s.Gpu("k1"));
  EXPECT_EQ(s.edges[0].to_host_et_id, 2u);
  EXPECT_EQ(s.edges[0].reason, "cudaStreamSynchronize");
}

TEST(SyncEdgesTest, StreamSynchronizeWithoutRecordWaitsForTheLastLaunch) {
  // No cuda_sync record: the stream of the thread's last launch (k2's, 8).
  Synced s = Build(LaunchThenBlock("cudaStreamSynchronize"),
                   {{"aten::foo", 1}, {"aten::bar", 2}});
  ASSERT_EQ(s.edges.size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].from_gpu_op), s.Gpu("k2"));
  EXPECT_EQ(s.edges[0].to_host_et_id, 2u);
}

TEST(SyncEdgesTest, DeviceSynchronizeWaitsForEveryStream) {
  Synced s = Build(LaunchThenBlock("cudaDeviceSynchronize"),
                   {{"aten::foo", 1}, {"aten::bar", 2}});
  ASSERT_EQ(s.edges.size(), 2u);
  for (const SyncEdge& e : s.edges) {
    EXPECT_EQ(e.kind, SyncEdge::Kind::kGpuToHost);
    EXPECT_EQ(e.to_host_et_id, 2u);
    EXPECT_EQ(e.reason, "cudaDeviceSynchronize");
  }
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].from_gpu_op), s.Gpu("k1"));
  EXPECT_EQ(static_cast<int64_t>(s.edges[1].from_gpu_op), s.Gpu("k2"));
}

TEST(SyncEdgesTest, EventSynchronizeWaitsForTheRecordedOp) {
  // cudaEventRecord (corr 11) after k1 on stream 7; k1b is launched on stream
  // 7 after the record, so the event does not cover it.
  Synced s = Build({CpuOp("aten::foo", 1, 100, 20),
                    Runtime("cudaLaunchKernel", 1, 105, 2, 10),
                    Runtime("cudaEventRecord", 1, 108, 1, 11),
                    Runtime("cudaLaunchKernel", 1, 110, 2, 12),
                    Runtime("cudaEventSynchronize", 1, 130, 50, 20),
                    CpuOp("aten::bar", 1, 190, 10),
                    Kernel("k1", 7, 200, 20, 10), Kernel("k1b", 7, 230, 20, 12),
                    CudaSync("Event Sync", 7, 130, 20, 7, 11)},
                   {{"aten::foo", 1}, {"aten::bar", 2}});
  ASSERT_EQ(s.edges.size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(s.edges[0].from_gpu_op), s.Gpu("k1"));
  EXPECT_EQ(s.edges[0].to_host_et_id, 2u);
  EXPECT_EQ(s.edges[0].reason, "cudaEventSynchronize");
}

TEST(SyncEdgesTest, RepeatedSyncsMakeOneEdge) {
  // Two cudaDeviceSynchronize calls before aten::bar tie the same ops.
  Synced s =
      Build({CpuOp("aten::foo", 1, 100, 20),
             Runtime("cudaLaunchKernel", 1, 105, 2, 10),
             Runtime("cudaDeviceSynchronize", 1, 130, 10, 20),
             Runtime("cudaDeviceSynchronize", 1, 150, 10, 21),
             CpuOp("aten::bar", 1, 190, 10), Kernel("k1", 7, 200, 20, 10)},
            {{"aten::foo", 1}, {"aten::bar", 2}});
  EXPECT_EQ(s.edges.size(), 1u);
  EXPECT_EQ(s.unresolved, 0);
}

TEST(SyncEdgesTest, SyncWithNoLaterHostOpIsUnresolved) {
  // aten::bar has no ET twin: nothing on the host to make wait.
  Synced s =
      Build(LaunchThenBlock("cudaDeviceSynchronize"), {{"aten::foo", 1}});
  EXPECT_TRUE(s.edges.empty());
  EXPECT_EQ(s.unresolved, 1);
}

TEST(SyncEdgesTest, SyncBeforeAnyGpuWorkIsUnresolved) {
  Synced s = Build({CpuOp("aten::foo", 1, 100, 20),
                    Runtime("cudaDeviceSynchronize", 1, 130, 10, 20),
                    CpuOp("aten::bar", 1, 190, 10)},
                   {{"aten::foo", 1}, {"aten::bar", 2}});
  EXPECT_TRUE(s.edges.empty());
  EXPECT_EQ(s.unresolved, 1);
}

TEST(SyncEdgesTest, CallsOutsideTheWindowAreIgnored) {
  // Window [100, 125] us: the sync at 130 belongs to another iteration.
  Synced s = Build(LaunchThenBlock("cudaDeviceSynchronize"),
                   {{"aten::foo", 1}, {"aten::bar", 2}}, 100000, 125000);
  EXPECT_TRUE(s.edges.empty());
  EXPECT_EQ(s.unresolved, 0);
}

}  // namespace
}  // namespace et::kineto
