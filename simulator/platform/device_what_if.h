// What-if on other hardware (et-sim --device X on a trace recorded on Y):
// scales each recorded GPU op by what the device changes, instead of keeping
// its recorded time or falling back to a plain roofline.
//
//   compute-bound (FLOPs / peak >= bytes / bandwidth on the recorded device):
//       time x peak_Y / peak_X
//   memory-bound: the part of its time that moved its bytes at the recorded
//       device's bandwidth scales by bandwidth_Y / bandwidth_X; the rest
//       (launch latency, tails, low occupancy) stays
//   neither FLOPs nor bytes known: kept
//
// docs/step-model.md has the evidence (five H100 models against their true
// H200 steps). Peaks are the presets' data-sheet values, not derated: only
// ratios matter. Immutable; thread-safe.
#ifndef SIMULATOR_PLATFORM_DEVICE_WHAT_IF_H_
#define SIMULATOR_PLATFORM_DEVICE_WHAT_IF_H_

#include <cstdint>

#include "simulator/platform/compute_cost_model.h"

namespace et::sim {

// How many GPU ops fell in each class (for the report's note).
struct WhatIfStats {
  int64_t compute_bound = 0;
  int64_t memory_bound = 0;
  int64_t unknown = 0;
};

class DeviceWhatIf {
 public:
  DeviceWhatIf(const DeviceProfile& recorded, const DeviceProfile& target)
      : recorded_(recorded), target_(target) {}

  // The GPU op's time on the target device.
  int64_t ScaleNs(int64_t recorded_ns, double flops, double bytes,
                  WhatIfStats* counts) const;

  const DeviceProfile& recorded() const { return recorded_; }
  const DeviceProfile& target() const { return target_; }

 private:
  DeviceProfile recorded_;
  DeviceProfile target_;
};

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_DEVICE_WHAT_IF_H_
