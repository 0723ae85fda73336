// Platform presets and the YAML platform file. Constants and their sources:
// docs/collective-model.md.
#include "simulator/platform/platform.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "base/text_escape.h"
#include "simulator/platform/topology.h"
#include "simulator/platform/yaml_config.h"
#include "yaml-cpp/yaml.h"

namespace et::sim {
namespace {

// Line rates are the vendors' data sheets; efficiencies, latencies and the
// ramp were fitted to the nccl-tests log of that machine (docs table).
std::vector<Platform> Presets() {
  std::vector<Platform> p;
  // NVLink3 12 links x 25 GB/s via NVSwitch; 8x HDR 200 Gb/s. Log 10.
  p.push_back({"DGX-A100", "A100", GpuArch::kAmpere, 8, 300, false, 0.76, 8,
               200, 0.9, 5, 9.5, 30, true});
  // p4d.24xlarge: DGX-A100-like board, 4x 100 Gb/s EFA. Log 02.
  p.push_back({"AWS-P4D", "A100", GpuArch::kAmpere, 8, 300, false, 0.76, 4, 100,
               0.88, 78, 0, 1650, false});
  // NVLink4 18 links x 25 GB/s via NVSwitch (NVLS); 8x NDR 400 Gb/s, of
  // which NCCL reaches 46-48 GB/s per NIC (NVIDIA, nccl-tests#290): 0.94.
  // Logs 03, 14-18, 24; held-out 10-node logs.
  p.push_back({"HGX-H100", "H100", GpuArch::kHopper, 8, 450, true, 0.80, 8, 400,
               0.94, 5, 1, 22, true});
  // H200: the same NVLink4 baseboard and NICs as HGX-H100 (no log of its own).
  p.push_back({"HGX-H200", "H200", GpuArch::kHopper, 8, 450, true, 0.80, 8, 400,
               0.94, 5, 1, 22, true});
  // H800: H100 with 8 NVLink4 links (200 GB/s). Log 13, run by one process
  // driving the 8 GPUs (-g 8): 18.5 us of launch there, H100's 1 us plus
  // 7 x launch_per_gpu_us (2.5, fitted to it).
  p.push_back({"HGX-H800", "H800", GpuArch::kHopper, 8, 200, true, 0.83, 8, 400,
               0.94, 5, 1, 0, true});
  // DGX-1V: NVLink2 hybrid cube mesh, 6 links x 25 GB/s; 4x EDR 100 Gb/s.
  // Log 12, one process driving 8 GPUs (-g 8): 34 us of launch there, of
  // which 7 x launch_per_gpu_us (2.5) are the extra GPUs' launches.
  p.push_back({"DGX-V100", "V100", GpuArch::kVolta, 8, 150, false, 0.90, 4, 100,
               0.9, 5, 16.5, 4, true});
  // One L40S per node on PCIe Gen4 x16 (32 GB/s), NCCL over TCP sockets on a
  // 100 Gb/s NIC. Log 26.
  p.push_back({"L40S-PCIE", "L40S", GpuArch::kAmpere, 1, 32, false, 0.8, 1, 100,
               0.64, 0.5, 0, 0, false});
  // gloo over TCP loopback among the processes of one host (2-core VM, torch
  // 1.13); launch, step latency and bandwidth measured by
  // examples/gloo_allreduce_bench.py. Host memory, no NICs.
  Platform host{kHostPlatformName,
                "CPU",
                GpuArch::kVolta,
                4096,
                0.7,
                false,
                1.0,
                1,
                1,
                1.0,
                200,
                0,
                0,
                false};
  host.host_backend = true;
  p.push_back(host);
  return p;
}

// A figure of the file within [lo, hi] (hi may be open); a value outside is a
// unit mistake or damage, named with its key and the range.
absl::StatusOr<double> Number(const YAML::Node& root, const char* key,
                              double fallback, absl::string_view origin,
                              double lo, double hi, bool lo_open = false) {
  const YAML::Node n = root[key];
  if (!n) return fallback;
  double v = 0;
  // A plain scalar: a quoted one ("8", tag "!") is a string, not a number.
  const bool number = n.IsScalar() && n.Tag() == "?" &&
                      YAML::convert<double>::decode(n, v) && std::isfinite(v);
  if (!number || v > hi || v < lo || (lo_open && v == lo)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s must be a number in %c%g, %g], got '%s'",
                        origin, key, lo_open ? '(' : '[', lo, hi,
                        n.IsScalar() ? EscapeForPrint(n.Scalar())
                                     : std::string("<non-scalar>")));
  }
  return v;
}

// Bandwidths (GB/s, Gb/s) from 1 Mb/s to 1 Pb/s: outside, a unit mistake.
constexpr double kMinGbps = 1e-3, kMaxGbps = 1e6;
// Latencies (us) up to a second.
constexpr double kMaxUs = 1e6;

// Every key a platform file may hold: a misspelt one is an error, not a
// figure silently left at the preset's value.
constexpr const char* kPlatformKeys[] = {"name",
                                         "gpu",
                                         "gpus_per_node",
                                         "intra_gbps",
                                         "nvls",
                                         "nics_per_node",
                                         "nic_gbits",
                                         "intra_efficiency",
                                         "net_efficiency",
                                         "net_hop_us",
                                         "intra_hop_us",
                                         "launch_us",
                                         "launch_per_gpu_us",
                                         "pipeline_ramp_us",
                                         "ll128_over_network",
                                         "nccl_algo",
                                         "nccl_proto",
                                         "nccl_min_channels",
                                         "nccl_max_channels",
                                         "gpus_per_process"};

absl::Status CheckKeys(const YAML::Node& root, absl::string_view origin) {
  for (const auto& entry : root) {
    const std::string key =
        entry.first.IsScalar() ? entry.first.Scalar() : std::string("?");
    bool known = false;
    for (const char* k : kPlatformKeys) known = known || key == k;
    if (!known) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: unknown key '%s' (a platform file holds %s)", origin,
          EscapeForPrint(key), absl::StrJoin(kPlatformKeys, ", ")));
    }
  }
  return absl::OkStatus();
}

// The NCCL knobs of a platform file: nccl_algo and nccl_proto in NCCL's
// syntax, channel bounds, GPUs per process.
absl::Status ParseNcclKeys(const YAML::Node& root, absl::string_view origin,
                           NcclSettings* nccl) {
  NcclFlags keys;
  for (auto [key, target] : {std::make_pair("nccl_algo", &keys.algo),
                             std::make_pair("nccl_proto", &keys.proto)}) {
    if (!root[key]) continue;
    if (!root[key].IsScalar() || root[key].Scalar().empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s must be a list such as ring or ^LL128", origin, key));
    }
    *target = root[key].Scalar();
  }
  for (auto [key, target] :
       {std::make_pair("nccl_min_channels", &keys.min_channels),
        std::make_pair("nccl_max_channels", &keys.max_channels),
        std::make_pair("gpus_per_process", &keys.gpus_per_process)}) {
    ASSIGN_OR_RETURN(double v, Number(root, key, 0, origin, 0, 64));
    if (v != std::floor(v) || v > 64 || (v < 1 && root[key])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s must be a whole number from 1 to 64", origin, key));
    }
    *target = static_cast<int64_t>(v);
  }
  absl::Status s = ApplyNcclFlags(keys, nccl);
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", s.message()));
  }
  return absl::OkStatus();
}

// A plain scalar that reads as a number (`name: 42`): not a name.
bool IsNumber(const YAML::Node& n) {
  double v = 0;
  return n.IsScalar() && n.Tag() == "?" && YAML::convert<double>::decode(n, v);
}

// `gpu`: a string that names a GPU some preset is for (A100, H100, ...,
// anywhere in it: "NVIDIA H100 80GB HBM3"); `name`: a string. An unknown GPU
// used to fall back to the H100's figures silently.
absl::Status CheckNames(const YAML::Node& root, absl::string_view origin,
                        const std::vector<Platform>& presets) {
  if (const YAML::Node gpu = root["gpu"]) {
    std::vector<std::string> known;
    bool found = false;
    for (const Platform& p : presets) {
      if (p.host_backend) continue;
      known.push_back(p.gpu);
      found = found ||
              (gpu.IsScalar() && !IsNumber(gpu) &&
               absl::StrContains(absl::AsciiStrToUpper(gpu.Scalar()), p.gpu));
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: gpu must be the name of a GPU with a preset (one of %s), got "
          "'%s'",
          origin, absl::StrJoin(known, ", "),
          gpu.IsScalar() ? EscapeForPrint(gpu.Scalar())
                         : std::string("<non-scalar>")));
    }
  }
  if (const YAML::Node name = root["name"];
      name && (!name.IsScalar() || IsNumber(name) || name.Scalar().empty())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: name must be a non-empty string, got '%s'", origin,
                        name.IsScalar() ? EscapeForPrint(name.Scalar())
                                        : std::string("<non-scalar>")));
  }
  return absl::OkStatus();
}

}  // namespace

Platform PlatformForGroup(const Platform& platform, int64_t ranks_per_node) {
  if (ranks_per_node <= 0 || ranks_per_node >= platform.gpus_per_node)
    return platform;
  Platform p = platform;
  p.nic_gbits = platform.nic_gbits * static_cast<double>(ranks_per_node) /
                static_cast<double>(platform.gpus_per_node);
  p.gpus_per_node = ranks_per_node;
  return p;
}

std::optional<Platform> FindPlatformPreset(absl::string_view name) {
  for (const Platform& p : Presets()) {
    if (absl::EqualsIgnoreCase(p.name, name)) return p;
  }
  return std::nullopt;
}

std::vector<std::string> PlatformPresetNames() {
  std::vector<std::string> names;
  for (const Platform& p : Presets()) names.push_back(p.name);
  return names;
}

std::optional<Platform> PlatformForDevice(absl::string_view device_name) {
  // The first preset of each GPU is its reference machine (DGX-A100 before the
  // cloud instance).
  for (const Platform& p : Presets()) {
    if (absl::StrContains(absl::AsciiStrToUpper(device_name), p.gpu)) return p;
  }
  return std::nullopt;
}

bool IsPlatformText(absl::string_view text) {
  // A file that is not valid configuration text is reported by the topology
  // reader, through the same LoadYamlConfig.
  absl::StatusOr<YAML::Node> root = LoadYamlConfig(text, "");
  if (!root.ok() || !root->IsMap()) return false;
  return ((*root)["gpu"] || (*root)["gpus_per_node"]) && !(*root)["dims"] &&
         !(*root)["npus_count"];
}

absl::StatusOr<Platform> ParsePlatform(absl::string_view text,
                                       absl::string_view origin) {
  ASSIGN_OR_RETURN(const YAML::Node root, LoadYamlConfig(text, origin));
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a YAML/JSON map"));
  }
  RETURN_IF_ERROR(CheckKeys(root, origin));
  RETURN_IF_ERROR(CheckNames(root, origin, Presets()));
  // Start from the preset of the named GPU, so a file may give only what
  // differs (e.g. the NICs).
  Platform p = *FindPlatformPreset("HGX-H100");
  std::string gpu = "H100";
  if (root["gpu"] && root["gpu"].IsScalar()) gpu = root["gpu"].Scalar();
  if (std::optional<Platform> base = PlatformForDevice(gpu)) p = *base;
  p.gpu = gpu;
  p.name = root["name"] && root["name"].IsScalar() ? root["name"].Scalar()
                                                   : std::string(origin);
  ASSIGN_OR_RETURN(double gpn, Number(root, "gpus_per_node",
                                      static_cast<double>(p.gpus_per_node),
                                      origin, 1, 1024));
  ASSIGN_OR_RETURN(p.intra_gbps, Number(root, "intra_gbps", p.intra_gbps,
                                        origin, kMinGbps, kMaxGbps));
  ASSIGN_OR_RETURN(double nics, Number(root, "nics_per_node",
                                       static_cast<double>(p.nics_per_node),
                                       origin, 1, 1024));
  ASSIGN_OR_RETURN(p.nic_gbits, Number(root, "nic_gbits", p.nic_gbits, origin,
                                       kMinGbps, kMaxGbps));
  ASSIGN_OR_RETURN(p.intra_efficiency,
                   Number(root, "intra_efficiency", p.intra_efficiency, origin,
                          0, 1, /*lo_open=*/true));
  ASSIGN_OR_RETURN(p.net_efficiency, Number(root, "net_efficiency",
                                            p.net_efficiency, origin, 0, 1,
                                            /*lo_open=*/true));
  ASSIGN_OR_RETURN(p.net_hop_us,
                   Number(root, "net_hop_us", p.net_hop_us, origin, 0, kMaxUs));
  ASSIGN_OR_RETURN(p.launch_us,
                   Number(root, "launch_us", p.launch_us, origin, 0, kMaxUs));
  ASSIGN_OR_RETURN(
      p.pipeline_ramp_us,
      Number(root, "pipeline_ramp_us", p.pipeline_ramp_us, origin, 0, kMaxUs));
  ASSIGN_OR_RETURN(p.intra_hop_us, Number(root, "intra_hop_us", p.intra_hop_us,
                                          origin, 0, kMaxUs));
  ASSIGN_OR_RETURN(p.launch_per_gpu_us,
                   Number(root, "launch_per_gpu_us", p.launch_per_gpu_us,
                          origin, 0, kMaxUs));
  for (auto [key, target] :
       {std::make_pair("nvls", &p.nvswitch_sharp),
        std::make_pair("ll128_over_network", &p.ll128_over_network)}) {
    if (!root[key]) continue;
    bool value = false;
    if (!root[key].IsScalar() ||
        !YAML::convert<bool>::decode(root[key], value)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s must be true or false", origin, key));
    }
    *target = value;
  }
  RETURN_IF_ERROR(ParseNcclKeys(root, origin, &p.nccl));
  if (gpn != std::floor(gpn) || nics != std::floor(nics)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: gpus_per_node and nics_per_node must be whole numbers", origin));
  }
  p.gpus_per_node = static_cast<int64_t>(gpn);
  p.nics_per_node = static_cast<int64_t>(nics);
  return p;
}

}  // namespace et::sim
