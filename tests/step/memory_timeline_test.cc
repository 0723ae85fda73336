// The memory timeline's sums and the allocators' rules (step/memory_timeline.h;
// the model against real runs is tests/scaleout/memory_recorded_test.cc).
#include "step/memory_timeline.h"

#include "gtest/gtest.h"

namespace et {
namespace {

StorageLife Life(int32_t device, int64_t bytes, NodeIndex first, NodeIndex last,
                 MemoryKind kind, bool persistent = false) {
  StorageLife l;
  l.device = device;
  l.bytes = bytes;
  l.first = first;
  l.last = last;
  l.kind = kind;
  l.persistent = persistent;
  return l;
}

TEST(MemoryTimelineTest, CudaRoundsToTheCachingAllocatorsBlocks) {
  EXPECT_EQ(AllocatedBytes(0, 0), 0);
  EXPECT_EQ(AllocatedBytes(0, 1), 512);
  EXPECT_EQ(AllocatedBytes(0, 512), 512);
  EXPECT_EQ(AllocatedBytes(0, 513), 1024);
  EXPECT_EQ(AllocatedBytes(3, 4 << 20), 4 << 20);
}

TEST(MemoryTimelineTest, HostTakesTheRequestAsIs) {
  EXPECT_EQ(AllocatedBytes(kHostDevice, 4), 4);
  EXPECT_EQ(AllocatedBytes(kHostDevice, 1000), 1000);
}

TEST(MemoryTimelineTest, PeakIsTheBaselinePlusTheLivesOverlappingAtANode) {
  // A parameter held throughout; an activation from node 1 to node 4; a
  // temporary in node 2 only; another temporary after the activation died.
  const std::vector<StorageLife> lives = {
      Life(kHostDevice, 100, 0, 5, MemoryKind::kParameter, true),
      Life(kHostDevice, 40, 1, 4, MemoryKind::kActivation),
      Life(kHostDevice, 30, 2, 2, MemoryKind::kTemporary),
      Life(kHostDevice, 60, 5, 5, MemoryKind::kTemporary),
  };
  const MemoryTimelineResult t = BuildMemoryTimeline(lives, 6, true);
  ASSERT_EQ(t.devices.size(), 1u);
  const DeviceMemory& d = t.devices[0];
  EXPECT_EQ(d.baseline_bytes, 100);
  EXPECT_EQ(d.peak_bytes, 170);
  EXPECT_EQ(d.peak_node, 2u);
  EXPECT_EQ(d.curve, (std::vector<int64_t>{100, 140, 170, 140, 140, 160}));
  EXPECT_EQ(d.peak_parts[static_cast<int>(MemoryKind::kParameter)], 100);
  EXPECT_EQ(d.peak_parts[static_cast<int>(MemoryKind::kActivation)], 40);
  EXPECT_EQ(d.peak_parts[static_cast<int>(MemoryKind::kTemporary)], 30);
}

TEST(MemoryTimelineTest, DevicesAreSeparateAndTheGpuIsTheAnswer) {
  const std::vector<StorageLife> lives = {
      Life(kHostDevice, 1000, 0, 1, MemoryKind::kOther, true),
      Life(0, 100, 0, 1, MemoryKind::kActivation),
      Life(0, 600, 1, 1, MemoryKind::kTemporary),
  };
  const MemoryTimelineResult t = BuildMemoryTimeline(lives, 2);
  ASSERT_EQ(t.devices.size(), 2u);
  ASSERT_NE(t.main(), nullptr);
  EXPECT_EQ(t.main()->device, 0);
  EXPECT_EQ(t.main()->peak_bytes, 512 + 1024);  // rounded blocks
  EXPECT_EQ(t.main()->peak_node, 1u);
}

TEST(MemoryTimelineTest, TheCurveByKindSumsToTheCurveOfItsDevice) {
  const std::vector<StorageLife> lives = {
      Life(0, 100, 0, 3, MemoryKind::kParameter, true),
      Life(0, 1000, 1, 2, MemoryKind::kActivation),
      Life(0, 300, 2, 3, MemoryKind::kTemporary),
      Life(kHostDevice, 7, 0, 3, MemoryKind::kOther),  // another device
  };
  const MemoryTimelineResult t = BuildMemoryTimeline(lives, 4, true);
  const DeviceMemory* gpu = t.main();
  ASSERT_NE(gpu, nullptr);
  const std::vector<MemoryByKind> by_kind = MemoryCurveByKind(lives, 4, 0);
  ASSERT_EQ(by_kind.size(), 4u);
  for (size_t i = 0; i < by_kind.size(); ++i) {
    int64_t sum = 0;
    for (int64_t b : by_kind[i]) sum += b;
    EXPECT_EQ(sum, gpu->curve[i]) << "node " << i;
  }
  // At the peak, the kinds are the peak's parts (blocks of 512 bytes).
  EXPECT_EQ(by_kind[gpu->peak_node], gpu->peak_parts);
  EXPECT_EQ(by_kind[2][static_cast<int>(MemoryKind::kActivation)], 1024);
  EXPECT_EQ(by_kind[3][static_cast<int>(MemoryKind::kActivation)], 0);
  EXPECT_EQ(by_kind[0][static_cast<int>(MemoryKind::kOther)], 0);
}

TEST(MemoryTimelineTest, APeakThatNeverRisesAboveTheBaselineIsTheBaseline) {
  const std::vector<StorageLife> lives = {
      Life(kHostDevice, 100, 0, 2, MemoryKind::kParameter, true)};
  const MemoryTimelineResult t = BuildMemoryTimeline(lives, 3);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].peak_bytes, 100);
  EXPECT_EQ(t.devices[0].peak_parts[static_cast<int>(MemoryKind::kParameter)],
            100);
}

}  // namespace
}  // namespace et
