// et-sim --device what-if: DeviceWhatIf, between two hand-built device
// profiles, scales a compute-bound GPU op by the raw FLOP/s ratio, scales the
// part of a memory-bound op's time that moved its bytes (at the recorded raw
// bandwidth) by the bandwidth ratio and keeps the rest, keeps an op with
// neither FLOPs nor bytes and counts every op in its class.
// DeviceProfileForName maps recorded CUDA device names onto the shipped presets
// (longest preset name contained in the device name) and fails with NotFound
// for unknown devices.
#include "simulator/platform/device_what_if.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "simulator/platform/compute_cost_model.h"

namespace et::sim {
namespace {

DeviceProfile Profile(const std::string& name, double flops_per_ns,
                      double bytes_per_ns) {
  DeviceProfile p;
  p.name = name;
  p.raw_flops_per_ns = flops_per_ns;
  p.raw_bytes_per_ns = bytes_per_ns;
  // Effective values differ from the raw ones: the what-if must not use them.
  p.peak_flops_per_ns = flops_per_ns * 0.5;
  p.mem_bytes_per_ns = bytes_per_ns * 0.25;
  return p;
}

// Recorded: 1000 FLOP/ns, 2000 B/ns. Target: 4x the FLOP/s, 1.5x the bytes/s.
const DeviceWhatIf& WhatIf() {
  static const DeviceWhatIf* what_if =
      new DeviceWhatIf(Profile("old", 1000, 2000), Profile("new", 4000, 3000));
  return *what_if;
}

TEST(DeviceWhatIfTest, ComputeBoundOpScalesByThePeakRatio) {
  WhatIfStats counts;
  // 1e6 FLOPs = 1000 ns of compute, 1000 B = 0.5 ns of memory.
  EXPECT_EQ(WhatIf().ScaleNs(2000, 1e6, 1000, &counts), 500);
  // Compute time equal to memory time counts as compute-bound.
  EXPECT_EQ(WhatIf().ScaleNs(2000, 2e6, 4e6, &counts), 500);
  EXPECT_EQ(counts.compute_bound, 2);
  EXPECT_EQ(counts.memory_bound, 0);
  EXPECT_EQ(counts.unknown, 0);
}

TEST(DeviceWhatIfTest, MemoryBoundOpThatOnlyMovedBytesScalesByBandwidth) {
  WhatIfStats counts;
  // 2e6 B = 1000 ns at 2000 B/ns: the whole recorded time -> x 2000/3000.
  EXPECT_EQ(WhatIf().ScaleNs(1000, 0, 2e6, &counts), 667);
  // Bytes that need more than the recorded time: still all of it scales.
  EXPECT_EQ(WhatIf().ScaleNs(600, 1000, 2e6, &counts), 400);
  EXPECT_EQ(counts.memory_bound, 2);
  EXPECT_EQ(counts.compute_bound, 0);
}

TEST(DeviceWhatIfTest, MemoryBoundOpKeepsTheTimeItDidNotSpendMovingBytes) {
  WhatIfStats counts;
  // 4x the 1000 ns its bytes need: 1000 ns scale to 667, 3000 ns stay.
  EXPECT_EQ(WhatIf().ScaleNs(4000, 0, 2e6, &counts), 667 + 3000);
  EXPECT_EQ(counts.memory_bound, 1);
}

TEST(DeviceWhatIfTest, OpWithoutFlopsOrBytesIsKeptAndCountedUnknown) {
  WhatIfStats counts;
  EXPECT_EQ(WhatIf().ScaleNs(1234, 0, 0, &counts), 1234);
  EXPECT_EQ(counts.unknown, 1);
  EXPECT_EQ(counts.compute_bound + counts.memory_bound, 0);
}

TEST(DeviceWhatIfTest, CountsEachClass) {
  WhatIfStats counts;
  WhatIf().ScaleNs(2000, 1e6, 0, &counts);    // compute
  WhatIf().ScaleNs(2000, 2e6, 10, &counts);   // compute
  WhatIf().ScaleNs(2000, 0, 1e6, &counts);    // memory
  WhatIf().ScaleNs(2000, 10, 1e7, &counts);   // memory
  WhatIf().ScaleNs(2000, 100, 1e6, &counts);  // memory
  WhatIf().ScaleNs(2000, 0, 0, &counts);      // unknown
  EXPECT_EQ(counts.compute_bound, 2);
  EXPECT_EQ(counts.memory_bound, 3);
  EXPECT_EQ(counts.unknown, 1);
}

TEST(DeviceWhatIfTest, SameDeviceKeepsTheRecordedTime) {
  const DeviceProfile h = Profile("same", 1000, 2000);
  DeviceWhatIf same(h, h);
  WhatIfStats counts;
  EXPECT_EQ(same.ScaleNs(2000, 1e6, 1000, &counts), 2000);
  EXPECT_EQ(same.ScaleNs(4000, 0, 2e6, &counts), 4000);
}

TEST(DeviceProfileForNameTest, RecordedNamesMapOntoPresets) {
  const std::string presets = DefaultDevicePresetsPath();
  auto h100 = DeviceProfileForName(presets, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(h100.ok()) << h100.status();
  EXPECT_EQ(h100->name, "H100");
  auto h200 = DeviceProfileForName(presets, "NVIDIA H200");
  ASSERT_TRUE(h200.ok()) << h200.status();
  EXPECT_EQ(h200->name, "H200");
  auto a100 = DeviceProfileForName(presets, "NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(a100.ok()) << a100.status();
  EXPECT_EQ(a100->name, "A100");
  // The what-if between the two Hopper parts is a bandwidth-only change.
  EXPECT_DOUBLE_EQ(h100->raw_flops_per_ns, h200->raw_flops_per_ns);
  EXPECT_GT(h200->raw_bytes_per_ns, h100->raw_bytes_per_ns);
}

TEST(DeviceProfileForNameTest, UnknownDeviceIsNotFound) {
  auto unknown =
      DeviceProfileForName(DefaultDevicePresetsPath(), "AMD Instinct MI300X");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("AMD Instinct MI300X"),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace et::sim
