// Unit tests of LinkGpuOps (converter/kineto/gpu_op_linker.h) on small
// hand-made Kineto traces, one rule per test: GPU work reaches its launcher
// through the correlation id and CPU-op nesting (or the External id), work
// without a launch record or without a matched launcher is an orphan counted by
// cause, work of other iterations and of the profiler's warm-up is set apart,
// launches without GPU work make nothing, and NCCL kernels find their
// collective.
#include "converter/kineto/gpu_op_linker.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "converter/kineto/cpu_op_nesting.h"
#include "tests/converter/kineto/kineto_events_test_util.h"

namespace et::kineto {
namespace {

using testing::CpuOp;
using testing::EventAt;
using testing::GpuEvent;
using testing::Kernel;
using testing::ParseEvents;
using testing::Runtime;

constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

// A trace with its nesting and the ET ids of the CPU ops that have a twin.
struct Linked {
  KinetoTrace trace;
  GpuLink link;
};

// `twins`: (CPU op name, start us) -> ET id; `host_ops` are the ET's ops.
Linked Link(
    const std::vector<std::string>& events,
    const std::vector<std::pair<std::pair<std::string, int64_t>, uint64_t>>&
        twins,
    const std::vector<HostOpView>& host_ops = {},
    int64_t window_start_ns = std::numeric_limits<int64_t>::min(),
    int64_t window_end_ns = kNoLimit) {
  Linked l;
  l.trace = ParseEvents(events);
  std::vector<uint64_t> event_et_id(l.trace.events().size(), 0);
  for (const auto& [where, et_id] : twins) {
    const int32_t e = EventAt(l.trace, where.first, where.second);
    EXPECT_GE(e, 0) << where.first << " at " << where.second;
    if (e >= 0) event_et_id[e] = et_id;
  }
  CpuOpNesting nesting(l.trace);
  l.link = LinkGpuOps(l.trace, nesting, event_et_id, host_ops, window_start_ns,
                      window_end_ns);
  return l;
}

TEST(GpuOpLinkerTest, KernelReachesTheInnermostMatchedOpAroundItsLaunch) {
  Linked l =
      Link({CpuOp("aten::linear", 1, 100, 50), CpuOp("aten::addmm", 1, 110, 30),
            Runtime("cudaLaunchKernel", 1, 115, 5, 10),
            Kernel("gemm", 7, 200, 20, 10, R"("grid": [4, 2, 1])")},
           {{{"aten::linear", 100}, 1}, {{"aten::addmm", 110}, 2}});
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  const GpuOp& op = l.link.gpu_ops[0];
  EXPECT_EQ(op.launcher_et_id, 2u);
  EXPECT_EQ(op.launch_ns, 115000);
  EXPECT_EQ(op.start_ns, 200000);
  EXPECT_EQ(op.dur_ns, 20000);
  EXPECT_EQ(op.category, "kernel");
  EXPECT_EQ(op.stream, 7);
  EXPECT_EQ(op.device, 0);
  EXPECT_EQ(op.correlation, 10);
  EXPECT_EQ(op.grid, (std::vector<int64_t>{4, 2, 1}));
  EXPECT_FALSE(op.is_nccl);
  EXPECT_EQ(l.link.launch_event[0], EventAt(l.trace, "cudaLaunchKernel", 115));
  EXPECT_EQ(l.link.orphans, 0);
}

TEST(GpuOpLinkerTest, UnmatchedInnerOpPassesTheKernelToItsMatchedAncestor) {
  // aten::addmm has no ET twin: the kernel belongs to aten::linear.
  Linked l =
      Link({CpuOp("aten::linear", 1, 100, 50), CpuOp("aten::addmm", 1, 110, 30),
            Runtime("cudaLaunchKernel", 1, 115, 5, 10),
            Kernel("gemm", 7, 200, 20, 10)},
           {{{"aten::linear", 100}, 1}});
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 1u);
}

TEST(GpuOpLinkerTest, KernelWithoutCorrelationIsAnOrphanWithoutLaunchRecord) {
  // The launch call exists, but the kernel names no correlation id (and a
  // second kernel names one no runtime call carries).
  Linked l = Link({CpuOp("aten::add", 1, 100, 50),
                   Runtime("cudaLaunchKernel", 1, 110, 5, 10),
                   Kernel("add_kernel", 7, 200, 20, -1),
                   Kernel("other_kernel", 7, 300, 20, 99)},
                  {{{"aten::add", 100}, 1}});
  ASSERT_EQ(l.link.gpu_ops.size(), 2u);
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 0u);
  EXPECT_EQ(l.link.gpu_ops[0].launch_ns, -1);
  EXPECT_EQ(l.link.gpu_ops[1].launcher_et_id, 0u);
  EXPECT_EQ(l.link.launch_event[0], -1);
  EXPECT_EQ(l.link.orphans, 2);
  EXPECT_EQ(l.link.orphans_without_launch_record, 2);
  EXPECT_EQ(l.link.orphans_with_unmatched_launch, 0);
  EXPECT_EQ(l.link.before_trace, 0);
}

TEST(GpuOpLinkerTest, KernelWithoutLaunchRecordFindsItsOpByExternalId) {
  Linked l =
      Link({CpuOp("aten::add", 1, 100, 50, R"("External id": 42)"),
            Kernel("add_kernel", 7, 200, 20, -1, R"("External id": 42)")},
           {{{"aten::add", 100}, 1}});
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 1u);
  EXPECT_EQ(l.link.orphans, 0);
}

TEST(GpuOpLinkerTest,
     LaunchOutsideEveryMatchedOpIsAnOrphanWithUnmatchedLaunch) {
  // The launch lies outside aten::add, and aten::mul around it has no twin.
  Linked l =
      Link({CpuOp("aten::add", 1, 100, 10), CpuOp("aten::mul", 1, 150, 50),
            Runtime("cudaLaunchKernel", 1, 160, 5, 10),
            Kernel("mul_kernel", 7, 200, 20, 10)},
           {{{"aten::add", 100}, 1}});
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 0u);
  EXPECT_EQ(l.link.gpu_ops[0].launch_ns, 160000);
  EXPECT_EQ(l.link.orphans_with_unmatched_launch, 1);
  EXPECT_EQ(l.link.orphans_without_launch_record, 0);
}

TEST(GpuOpLinkerTest, RuntimeExternalIdFindsTheOpWhenNestingCannot) {
  // The launch runs on a thread with no CPU op around it; its External id
  // names aten::add on thread 1.
  Linked l = Link({CpuOp("aten::add", 1, 100, 50, R"("External id": 42)"),
                   Runtime("cudaLaunchKernel", 2, 110, 5, 10, 42),
                   Kernel("add_kernel", 7, 200, 20, 10)},
                  {{{"aten::add", 100}, 1}});
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 1u);
}

TEST(GpuOpLinkerTest, ExternalIdDisagreeingWithNestingIsCountedNestingWins) {
  Linked l = Link({CpuOp("aten::add", 1, 100, 50, R"("External id": 42)"),
                   CpuOp("aten::mul", 1, 300, 50, R"("External id": 43)"),
                   Runtime("cudaLaunchKernel", 1, 110, 5, 10, 43),
                   Kernel("add_kernel", 7, 200, 20, 10)},
                  {{{"aten::add", 100}, 1}, {{"aten::mul", 300}, 2}});
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 1u);
  EXPECT_EQ(l.link.external_id_mismatches, 1);
}

TEST(GpuOpLinkerTest, ExternalIdEqualToCorrelationSaysNothing) {
  // Old Kineto wrote the correlation id as the runtime call's External id.
  Linked l = Link({CpuOp("aten::add", 1, 100, 50, R"("External id": 42)"),
                   Runtime("cudaLaunchKernel", 1, 110, 5, 10, 10),
                   Kernel("add_kernel", 7, 200, 20, 10)},
                  {{{"aten::add", 100}, 1}});
  EXPECT_EQ(l.link.external_id_mismatches, 0);
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 1u);
}

TEST(GpuOpLinkerTest, LaunchesWithoutGpuWorkMakeNothing) {
  // Three launches, one kernel: only the kernel becomes a GPU op.
  Linked l = Link({CpuOp("aten::add", 1, 100, 50),
                   Runtime("cudaLaunchKernel", 1, 105, 2, 10),
                   Runtime("cudaLaunchKernel", 1, 110, 2, 11),
                   Runtime("cudaMemcpyAsync", 1, 115, 2, 12),
                   Kernel("add_kernel", 7, 200, 20, 11)},
                  {{{"aten::add", 100}, 1}});
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_EQ(l.link.gpu_ops[0].correlation, 11);
  EXPECT_EQ(l.link.gpu_ops[0].launch_ns, 110000);
  EXPECT_EQ(l.link.orphans, 0);
}

TEST(GpuOpLinkerTest, WorkLaunchedOutsideTheWindowIsLeftOut) {
  // Window [100, 150] us: the second launch (at 500) is the next iteration's;
  // the kernel without a launch record is placed by its own start (900).
  Linked l = Link(
      {CpuOp("aten::add", 1, 100, 50),
       Runtime("cudaLaunchKernel", 1, 110, 5, 10),
       CpuOp("aten::add", 1, 490, 50),
       Runtime("cudaLaunchKernel", 1, 500, 5, 11), Kernel("k", 7, 200, 20, 10),
       Kernel("k", 7, 600, 20, 11), Kernel("k", 7, 900, 20, 12)},
      {{{"aten::add", 100}, 1}}, {}, 100000, 150000);
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_EQ(l.link.gpu_ops[0].correlation, 10);
  EXPECT_EQ(l.link.outside_window, 2);
  EXPECT_EQ(l.link.orphans, 0);
}

TEST(GpuOpLinkerTest, WorkLaunchedBeforeTheTraceIsKeptWithoutLauncher) {
  // Correlation 3 is below every recorded runtime call's (10): the profiler's
  // warm-up step launched it. Kept even outside the window, not an orphan.
  Linked l = Link({CpuOp("aten::add", 1, 100, 50),
                   Runtime("cudaLaunchKernel", 1, 110, 5, 10),
                   Kernel("warmup", 7, 20, 20, 3), Kernel("k", 7, 200, 20, 10)},
                  {{{"aten::add", 100}, 1}}, {}, 100000, 150000);
  ASSERT_EQ(l.link.gpu_ops.size(), 2u);
  EXPECT_EQ(l.link.gpu_ops[0].name, "warmup");
  EXPECT_EQ(l.link.gpu_ops[0].launcher_et_id, 0u);
  EXPECT_EQ(l.link.before_trace, 1);
  EXPECT_EQ(l.link.orphans, 0);
  EXPECT_EQ(l.link.outside_window, 0);
}

TEST(GpuOpLinkerTest, GpuOpsComeInStreamOrder) {
  Linked l =
      Link({CpuOp("aten::add", 1, 100, 50),
            Runtime("cudaLaunchKernel", 1, 105, 1, 10),
            Runtime("cudaLaunchKernel", 1, 110, 1, 11),
            Runtime("cudaMemcpyAsync", 1, 115, 1, 12),
            Kernel("late_on_8", 8, 400, 20, 10), Kernel("on_7", 7, 300, 20, 11),
            GpuEvent("gpu_memcpy", "Memcpy HtoD", 8, 200, 5, 12,
                     R"("bytes": 4096)")},
           {{{"aten::add", 100}, 1}});
  ASSERT_EQ(l.link.gpu_ops.size(), 3u);
  EXPECT_EQ(l.link.gpu_ops[0].name, "on_7");
  EXPECT_EQ(l.link.gpu_ops[1].name, "Memcpy HtoD");
  EXPECT_EQ(l.link.gpu_ops[1].category, "gpu_memcpy");
  EXPECT_EQ(l.link.gpu_ops[1].bytes, 4096);
  EXPECT_EQ(l.link.gpu_ops[2].name, "late_on_8");
  // launch_event follows the sorted order.
  EXPECT_EQ(l.link.launch_event[0], EventAt(l.trace, "cudaLaunchKernel", 110));
  EXPECT_EQ(l.link.launch_event[1], EventAt(l.trace, "cudaMemcpyAsync", 115));
}

TEST(GpuOpLinkerTest, NcclKernelFindsTheCollectiveAboveItsLauncher) {
  // c10d::allreduce_ (ET 5) calls aten::foo (ET 6), which launches the NCCL
  // kernel: the launcher is aten::foo, the collective the c10d call.
  const std::vector<HostOpView> host_ops = {
      HostOpView{5, 0, "c10d::allreduce_", 1, -1, 5},
      HostOpView{6, 5, "aten::foo", 1, -1, 6}};
  Linked l = Link(
      {CpuOp("c10d::allreduce_", 1, 100, 50), CpuOp("aten::foo", 1, 105, 30),
       Runtime("cudaLaunchKernel", 1, 110, 5, 10),
       Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 9, 200, 20, 10,
              R"("Process Group Name": "0")")},
      {{{"c10d::allreduce_", 100}, 5}, {{"aten::foo", 105}, 6}}, host_ops);
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  const GpuOp& op = l.link.gpu_ops[0];
  EXPECT_TRUE(op.is_nccl);
  EXPECT_EQ(op.launcher_et_id, 6u);
  EXPECT_EQ(op.collective_et_id, 5u);
  EXPECT_EQ(op.pg_name, "0");
}

TEST(GpuOpLinkerTest, NcclKernelWithoutCollectiveAboveHasNone) {
  const std::vector<HostOpView> host_ops = {
      HostOpView{6, 0, "aten::foo", 1, -1, 6}};
  Linked l = Link({CpuOp("aten::foo", 1, 105, 30),
                   Runtime("cudaLaunchKernel", 1, 110, 5, 10),
                   Kernel("ncclKernel_AllGather_RING_LL", 9, 200, 20, 10)},
                  {{{"aten::foo", 105}, 6}}, host_ops);
  ASSERT_EQ(l.link.gpu_ops.size(), 1u);
  EXPECT_TRUE(l.link.gpu_ops[0].is_nccl);
  EXPECT_EQ(l.link.gpu_ops[0].collective_et_id, 0u);
}

TEST(GpuOpLinkerTest, CollectiveOpNames) {
  EXPECT_TRUE(IsCollectiveOpName("record_param_comms"));
  EXPECT_TRUE(IsCollectiveOpName("c10d::allreduce_"));
  EXPECT_TRUE(IsCollectiveOpName("nccl:all_reduce"));
  EXPECT_TRUE(IsCollectiveOpName("gloo:broadcast"));
  EXPECT_FALSE(IsCollectiveOpName("aten::all_reduce"));
  EXPECT_FALSE(IsCollectiveOpName("record_param_comms_x"));
}

}  // namespace
}  // namespace et::kineto
