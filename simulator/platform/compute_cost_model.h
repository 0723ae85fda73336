// Compute time of one op: recorded (duration_ns attr, else duration_micros),
// roofline (max(flops / peak, bytes / mem_bw) on a device preset, FLOPs derived
// from input shapes for GEMM/conv/attention ops when num_ops is absent) or
// calibrated (a table of measured op times written by et-replay, keyed by op
// name and input shapes; format in docs/calibration-format.md). Immutable after
// Create(); thread-safe to query.
#ifndef SIMULATOR_PLATFORM_COMPUTE_COST_MODEL_H_
#define SIMULATOR_PLATFORM_COMPUTE_COST_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/node_model.h"
#include "simulator/platform/sim_options.h"
#include "step/calibration.h"

namespace et::sim {

struct DeviceProfile {
  std::string name;
  double peak_flops_per_ns = 0;  // effective (peak x efficiency)
  double mem_bytes_per_ns = 0;   // effective
  double raw_flops_per_ns = 0;   // the data sheet's
  double raw_bytes_per_ns = 0;
  int64_t memory_bytes = 0;  // the data sheet's memory (memory_gib); 0 unknown
};

// Loads `device` from a presets file (JSON,
// simulator/platform/presets/devices.json format).
absl::StatusOr<DeviceProfile> LoadDeviceProfile(const std::string& presets_path,
                                                const std::string& device);

// The shipped presets file (simulator/platform/presets/devices.json in the
// source tree).
std::string DefaultDevicePresetsPath();

// The preset whose name a recorded device name contains ("NVIDIA H100 80GB
// HBM3" -> H100; the longest such name wins), or NotFound.
absl::StatusOr<DeviceProfile> DeviceProfileForName(
    const std::string& presets_path, absl::string_view device_name);

class ComputeCostModel {
 public:
  static absl::StatusOr<ComputeCostModel> Create(const SimOptions& options);

  // Duration in ns before what-if scaling.
  int64_t DurationNs(const NodeModel& model, NodeIndex i) const;
  double compute_scale() const { return compute_scale_; }

  const DeviceProfile& device() const { return device_; }

 private:
  std::optional<int64_t> RecordedNs(const NodeModel& model, NodeIndex i) const;
  std::optional<int64_t> RooflineNs(const NodeModel& model, NodeIndex i) const;

  ComputeModel model_ = ComputeModel::kRecorded;
  DeviceProfile device_;
  CalibrationTable calibration_;
  double compute_scale_ = 1.0;
};

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_COMPUTE_COST_MODEL_H_
