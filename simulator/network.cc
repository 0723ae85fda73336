// Resolution of --topology into a platform and a topology; see network.h.
#include "simulator/network.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/json_file.h"
#include "base/status_macros.h"

namespace et::sim {
namespace {

// Reads a --topology file, or says neither a preset nor a file was named.
absl::StatusOr<std::string> ReadNetworkFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadConfigFile(path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrFormat("%s: unknown topology (not a file, and presets are %s)",
                        path, absl::StrJoin(PlatformPresetNames(), ", ")));
  }
  return text;
}

// Platform and unfitted topology named by a non-empty flag; a topology file
// (ours or ASTRA-sim's) carries no NCCL figures, so `*has_platform` is false
// and the caller derives them from its fitted links.
absl::StatusOr<Network> FromFlag(const std::string& flag, bool* has_platform) {
  Network n;
  n.name = flag;
  n.reason = "--topology";
  *has_platform = true;
  if (std::optional<Platform> preset = FindPlatformPreset(flag)) {
    n.platform = *preset;
    n.name = preset->name;
    // The alpha-beta presets keep their own figures where they have them.
    absl::StatusOr<Topology> own = LoadTopology(preset->name);
    n.topology = own.ok() ? *own : TopologyForPlatform(*preset);
    return n;
  }
  ASSIGN_OR_RETURN(std::string text, ReadNetworkFile(flag));
  if (IsPlatformText(text)) {
    ASSIGN_OR_RETURN(n.platform, ParsePlatform(text, flag));
    n.topology = TopologyForPlatform(n.platform);
    n.topology.name = flag;
    return n;
  }
  *has_platform = false;
  ASSIGN_OR_RETURN(n.topology, ParseTopology(text, flag));
  return n;
}

}  // namespace

absl::StatusOr<Network> ResolveNetwork(const std::string& flag,
                                       absl::string_view device_name,
                                       bool follow_device, int64_t world_size,
                                       bool comm_on_host) {
  std::string name = flag;
  std::string reason = "--topology";
  if (name.empty() && follow_device && comm_on_host) {
    name = kHostPlatformName;
    reason = "the trace's collectives run on the host (gloo)";
  } else if (name.empty()) {
    const std::optional<Platform> own =
        follow_device ? PlatformForDevice(device_name) : std::nullopt;
    name = own ? own->name : "HGX-H100";
    reason = own ? absl::StrFormat("the trace's GPU, %s", device_name)
                 : std::string("default");
  }
  bool has_platform = true;
  ASSIGN_OR_RETURN(Network n, FromFlag(name, &has_platform));
  n.reason = reason;
  ASSIGN_OR_RETURN(n.topology, FitTopology(std::move(n.topology), world_size));
  if (!has_platform) n.platform = PlatformForTopology(n.topology);
  return n;
}

Topology TopologyForPlatform(const Platform& platform) {
  Topology t;
  t.name = platform.name;
  // Hop latencies: the low ends of NCCL's figures, as topology.cc's presets.
  t.dims.push_back(
      {LinkKind::kSwitch, platform.gpus_per_node, platform.intra_gbps, 600});
  t.dims.push_back(
      {LinkKind::kSwitch, 0,
       platform.nics_per_node * platform.nic_gbits / 8 /
           static_cast<double>(std::max<int64_t>(1, platform.gpus_per_node)),
       2700});
  return t;
}

Platform PlatformForTopology(const Topology& topology) {
  Platform p = *FindPlatformPreset("HGX-H100");
  p.name = topology.name;
  p.gpu = "?";
  p.nvswitch_sharp = false;  // a plain link description says nothing of NVLS
  const double unit = topology.BytesPerNs(0) / topology.dims[0].bandwidth_gbps;
  p.gpus_per_node = topology.dims[0].npus;
  p.intra_gbps = topology.dims[0].bandwidth_gbps * unit;
  if (topology.dims.size() > 1) {
    // Each GPU's share of the node's NICs: one NIC per GPU at that rate.
    p.nics_per_node = p.gpus_per_node;
    p.nic_gbits = topology.dims[1].bandwidth_gbps * unit * 8;
  }
  return p;
}

}  // namespace et::sim
