// MeasureQueuedGap: only ops that waited for their stream count, NCCL kernels
// (which wait for peers) do not, and too few pairs say nothing.
#include "converter/kineto/gpu_queued_gap.h"

#include <vector>

#include "gtest/gtest.h"

namespace et::convert {
namespace {

kineto::GpuOp Op(int64_t start_ns, int64_t dur_ns, int64_t launch_ns,
                 int64_t stream = 7, bool nccl = false) {
  kineto::GpuOp op;
  op.device = 0;
  op.stream = stream;
  op.start_ns = start_ns;
  op.dur_ns = dur_ns;
  op.launch_ns = launch_ns;
  op.is_nccl = nccl;
  return op;
}

// `n` ops of 10 us on one stream, each launched at 0 (queued), `gap_ns` apart.
std::vector<kineto::GpuOp> Queued(int n, int64_t gap_ns, int64_t stream = 7) {
  std::vector<kineto::GpuOp> ops;
  for (int k = 0; k < n; ++k)
    ops.push_back(Op(1000 + k * (10000 + gap_ns), 10000, 0, stream));
  return ops;
}

TEST(GpuQueuedGapTest, MedianOfQueuedPairsAcrossStreams) {
  std::vector<kineto::GpuOp> ops = Queued(15, 1200, 7);
  for (const kineto::GpuOp& op : Queued(12, 1500, 9)) ops.push_back(op);
  std::optional<QueuedGap> gap = MeasureQueuedGap(ops);
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->pairs, 14 + 11);
  EXPECT_EQ(gap->median_ns, 1200);
}

TEST(GpuQueuedGapTest, OpsLaunchedOntoAnIdleStreamAreNotQueued) {
  std::vector<kineto::GpuOp> ops = Queued(21, 1000);
  // Launched 50 us after the last op started: it waited for its launch.
  const int64_t last_start = ops.back().start_ns;
  ops.push_back(Op(last_start + 90000, 10000, last_start + 50000));
  std::optional<QueuedGap> gap = MeasureQueuedGap(ops);
  ASSERT_TRUE(gap.has_value());
  EXPECT_EQ(gap->pairs, 20);
  EXPECT_EQ(gap->median_ns, 1000);
}

TEST(GpuQueuedGapTest, NcclKernelsAndTooFewPairsSayNothing) {
  std::vector<kineto::GpuOp> ops = Queued(20, 1000);  // 19 pairs
  EXPECT_FALSE(MeasureQueuedGap(ops).has_value());
  for (kineto::GpuOp& op : ops) op.is_nccl = true;
  ops.push_back(Op(ops.back().start_ns + 11000, 10000, 0));
  EXPECT_FALSE(MeasureQueuedGap(ops).has_value());
}

}  // namespace
}  // namespace et::convert
