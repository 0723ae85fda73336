// Recorded, roofline and calibrated compute costs.
#include "simulator/platform/compute_cost_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "step/calibration.h"

#ifndef ET_SIM_PRESETS_DIR
#define ET_SIM_PRESETS_DIR "simulator/platform/presets"
#endif

namespace et::sim {

std::string DefaultDevicePresetsPath() {
  return std::string(ET_SIM_PRESETS_DIR) + "/devices.json";
}

absl::StatusOr<DeviceProfile> LoadDeviceProfile(const std::string& presets_path,
                                                const std::string& device) {
  ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(presets_path));
  // Every access below checks the type first: nlohmann's value()/get<>() throw
  // on a type mismatch, and this project is built without exception handlers.
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(presets_path, ": not a JSON object"));
  }
  auto devices = j.find("devices");
  if (devices == j.end() || !devices->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        presets_path, ": needs a \"devices\" object of device profiles"));
  }
  auto dev = devices->find(device);
  if (dev == devices->end()) {
    return absl::NotFoundError(
        absl::StrFormat("%s: unknown device '%s'", presets_path, device));
  }
  if (!dev->is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: device '%s' is not a JSON object", presets_path, device));
  }
  const nlohmann::json& d = *dev;
  absl::Status bad;
  auto number = [&](const char* key, double fallback) {
    auto it = d.find(key);
    if (it == d.end()) return fallback;
    if (!it->is_number()) {
      bad = absl::InvalidArgumentError(absl::StrFormat(
          "%s: device '%s': '%s' is not a number", presets_path, device, key));
      return fallback;
    }
    return it->get<double>();
  };
  DeviceProfile p;
  p.name = device;
  const double peak =
      number("peak_tflops", 0.0) * 1e3;           // TFLOP/s = 1e3 FLOP/ns
  const double mem = number("mem_bw_gbps", 0.0);  // GB/s = B/ns
  p.peak_flops_per_ns = peak * number("peak_efficiency", 1.0);
  p.mem_bytes_per_ns = mem * number("mem_efficiency", 1.0);
  p.raw_flops_per_ns = peak;
  p.raw_bytes_per_ns = mem;
  p.memory_bytes = static_cast<int64_t>(number("memory_gib", 0.0) *
                                        static_cast<double>(int64_t{1} << 30));
  RETURN_IF_ERROR(bad);
  if (!(p.peak_flops_per_ns > 0) || !(p.mem_bytes_per_ns > 0) ||
      !std::isfinite(p.peak_flops_per_ns) ||
      !std::isfinite(p.mem_bytes_per_ns)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: device '%s' needs positive, finite peak_tflops and mem_bw_gbps",
        presets_path, device));
  }
  return p;
}

absl::StatusOr<DeviceProfile> DeviceProfileForName(
    const std::string& presets_path, absl::string_view device_name) {
  ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(presets_path));
  std::string best;
  if (j.contains("devices") && j["devices"].is_object()) {
    for (const auto& [name, unused] : j["devices"].items()) {
      if (absl::StrContains(device_name, name) && name.size() > best.size())
        best = name;
    }
  }
  if (best.empty()) {
    return absl::NotFoundError(
        absl::StrFormat("%s: no preset for the recorded device '%s'",
                        presets_path, device_name));
  }
  return LoadDeviceProfile(presets_path, best);
}

absl::StatusOr<ComputeCostModel> ComputeCostModel::Create(
    const SimOptions& options) {
  ComputeCostModel m;
  m.model_ = options.compute_model;
  m.compute_scale_ = options.compute_scale;
  if (!(options.compute_scale > 0)) {
    return absl::InvalidArgumentError("--compute-scale must be positive");
  }
  const std::string presets = options.device_file.empty()
                                  ? DefaultDevicePresetsPath()
                                  : options.device_file;
  ASSIGN_OR_RETURN(
      m.device_,
      LoadDeviceProfile(presets, options.device.empty() ? std::string("H100")
                                                        : options.device));
  if (m.model_ == ComputeModel::kCalibrated) {
    if (options.calibration_file.empty()) {
      return absl::InvalidArgumentError(
          "--compute=calibrated needs --calibration FILE");
    }
    ASSIGN_OR_RETURN(m.calibration_, LoadCalibration(options.calibration_file));
  }
  return m;
}

std::optional<int64_t> ComputeCostModel::RecordedNs(const NodeModel& model,
                                                    NodeIndex i) const {
  if (model.duration_ns(i) > 0) return model.duration_ns(i);
  return std::nullopt;
}

// FLOPs and bytes as the model decoded them: recorded, else from the shapes
// (a graph from another converter), as et-convert derives them.
std::optional<int64_t> ComputeCostModel::RooflineNs(const NodeModel& model,
                                                    NodeIndex i) const {
  const double flops = model.flops(i);
  const double bytes = model.bytes(i);
  if (!(flops > 0) && !(bytes > 0)) return std::nullopt;
  const double compute_ns = flops > 0 ? flops / device_.peak_flops_per_ns : 0;
  const double memory_ns = bytes > 0 ? bytes / device_.mem_bytes_per_ns : 0;
  return static_cast<int64_t>(std::ceil(std::max(compute_ns, memory_ns)));
}

int64_t ComputeCostModel::DurationNs(const NodeModel& model,
                                     NodeIndex i) const {
  std::optional<int64_t> ns;
  switch (model_) {
    case ComputeModel::kRecorded:
      ns = RecordedNs(model, i);
      if (!ns) ns = RooflineNs(model, i);
      break;
    case ComputeModel::kRoofline:
      ns = RooflineNs(model, i);
      if (!ns) ns = RecordedNs(model, i);
      break;
    case ComputeModel::kCalibrated: {
      auto it = calibration_.find(
          CalibrationKey(model.name(i), model.input_shapes_key(i)));
      if (it != calibration_.end()) {
        ns = static_cast<int64_t>(std::llround(it->second));
      } else {
        ns = RooflineNs(model, i);
        if (!ns) ns = RecordedNs(model, i);
      }
      break;
    }
  }
  return ns.value_or(0);
}

}  // namespace et::sim
