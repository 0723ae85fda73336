// A machine as NCCL sees it: the GPU generation, GPUs per node, the intra-node
// fabric and the NICs per node, plus the few efficiencies and latencies that
// turn line rates into what nccl-tests measures. Named presets for common
// machines (docs/collective-model.md lists every constant and its source), a
// YAML platform file for the rest, and the preset that follows a trace's GPU.
#ifndef SIMULATOR_PLATFORM_PLATFORM_H_
#define SIMULATOR_PLATFORM_PLATFORM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "simulator/platform/nccl_settings.h"

namespace et::sim {

// The GPU generation picks NCCL's per-architecture limits (LL caps, LL128).
enum class GpuArch { kVolta, kAmpere, kHopper };

struct Platform {
  std::string name;
  std::string gpu;  // e.g. "A100"
  GpuArch arch = GpuArch::kHopper;
  int64_t gpus_per_node = 8;
  // Intra-node fabric: per GPU and direction (NVLink: the sum of its links).
  double intra_gbps = 450;
  bool nvswitch_sharp = false;    // NVLink SHARP (NVLS) all-reduce available
  double intra_efficiency = 0.8;  // share of intra_gbps a Simple ring reaches
  int64_t nics_per_node = 8;
  double nic_gbits = 400;          // per NIC, Gb/s
  double net_efficiency = 0.9;     // share of the NICs' line rate reached
  double net_hop_us = 5;           // per network step beyond NCCL's own figure
  double launch_us = 4;            // host launch cost on top of NCCL's base
  double pipeline_ramp_us = 30;    // Simple protocol: data in flight to fill
  bool ll128_over_network = true;  // false for EFA and TCP sockets
  // Collectives run by a CPU backend (gloo) among processes of one host:
  // simulator/comm/host_collective_model.h prices them (net_hop_us is its
  // per-step latency, intra_gbps its memory bandwidth), not NCCL's model.
  bool host_backend = false;
  // Per NVLink step beyond NCCL's own hop latency (0 on every preset; what
  // --comm-from may fit).
  double intra_hop_us = 0;
  // Host cost of each GPU beyond the first that one process drives (nccl-tests
  // -g): it launches their kernels in turn. Log 13 (H800, -g 8).
  double launch_per_gpu_us = 2.5;
  // NCCL's knobs for the run (NCCL_ALGO, NCCL_PROTO, channels, -g).
  NcclSettings nccl{};

  // Bytes per us across nodes for one node (all NICs, line rate x efficiency).
  double NodeNetGBps() const {
    return nics_per_node * nic_gbits / 8 * net_efficiency;
  }
};

// The platform one group's collectives see when its members sit
// `ranks_per_node` to a node (a data-parallel group under tp=8: one): a node
// of that many GPUs, with their share of the node's NICs (the other GPUs'
// groups use the rest at the same time). `ranks_per_node` of 0 or at least
// gpus_per_node: `platform` unchanged.
Platform PlatformForGroup(const Platform& platform, int64_t ranks_per_node);

// The preset named `name` (case-insensitive), or nullopt.
std::optional<Platform> FindPlatformPreset(absl::string_view name);

// Every preset name, for messages and docs.
std::vector<std::string> PlatformPresetNames();

// The preset for collectives a CPU backend (gloo) runs on one host.
inline constexpr char kHostPlatformName[] = "HOST-GLOO";

// The preset for a recorded GPU name ("NVIDIA A100-SXM4-80GB" -> DGX-A100), or
// nullopt when no preset matches.
std::optional<Platform> PlatformForDevice(absl::string_view device_name);

// True when `text` is a platform file (a map with gpu or gpus_per_node and
// no topology keys), not one of simulator/platform/topology.h's network files.
bool IsPlatformText(absl::string_view text);

// Parses a platform file (YAML/JSON): {name, gpu, gpus_per_node, intra_gbps,
// nics_per_node, nic_gbits, ...}; `origin` names it in errors.
absl::StatusOr<Platform> ParsePlatform(absl::string_view text,
                                       absl::string_view origin);

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_PLATFORM_H_
