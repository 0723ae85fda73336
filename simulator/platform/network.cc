// Resolution of --topology into a platform and a topology; see network.h.
#include "simulator/platform/network.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "proto/et_reader.h"

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
  if (!text.ok()) return text.status();
  // Another kind of file is named as such, not met with a YAML parser's
  // message.
  if (text->find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s, not a topology: --topology takes a preset (%s), a platform "
        "file or a topology YAML/JSON",
        path,
        LooksLikeChakraEt(path) ? "a Chakra .et (a trace)" : "a binary file",
        absl::StrJoin(PlatformPresetNames(), ", ")));
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

// The GPUs per node `shape` asks for on a world of `world` ranks, or the
// node's own count when it says nothing.
absl::StatusOr<int64_t> GpusPerNode(const ClusterShape& shape, int64_t world,
                                    int64_t node_gpus) {
  int64_t gpn = shape.gpus_per_node;
  if (shape.nodes > 0) {
    if (gpn == 0) {
      if (world % shape.nodes != 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--nodes %d does not divide the world of %d ranks",
                            shape.nodes, world));
      }
      gpn = world / shape.nodes;
    } else if (shape.nodes * gpn != world) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--nodes %d x --gpus-per-node %d is %d ranks, not the world's %d",
          shape.nodes, gpn, shape.nodes * gpn, world));
    }
  }
  return gpn > 0 ? gpn : node_gpus;
}

// A world the node size does not divide: the way out, in nccl-tests' terms.
absl::Status NotDivisible(absl::string_view name, int64_t world, int64_t gpn) {
  int64_t fit = 1;  // the most GPUs per node that divide the world
  for (int64_t g = std::min(gpn, world); g >= 1; --g) {
    if (world % g == 0) {
      fit = g;
      break;
    }
  }
  std::string hint =
      absl::StrFormat("--nodes %d --gpus-per-node 1 (mpirun -N 1)", world);
  if (fit > 1) {
    absl::StrAppendFormat(&hint, " or --nodes %d --gpus-per-node %d",
                          world / fit, fit);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: world size %d is not divisible by its node of %d GPUs: say how the "
      "ranks sit, e.g. %s, or describe the node in a platform file "
      "(gpus_per_node)",
      name, world, gpn, hint));
}

// Narrows `n` to `gpn` GPUs per node and names the shape simulated.
absl::Status ApplyShape(const ClusterShape& shape, int64_t world,
                        bool has_platform, Network* n) {
  int64_t node_gpus =
      has_platform ? n->platform.gpus_per_node : n->topology.dims[0].npus;
  if (node_gpus <= 0) node_gpus = world;  // one level holds every rank
  ASSIGN_OR_RETURN(int64_t gpn, GpusPerNode(shape, world, node_gpus));
  if (gpn > node_gpus) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--gpus-per-node %d: a node of %s holds %d GPUs; describe a bigger "
        "node in a platform file (gpus_per_node: %d)",
        gpn, n->name, node_gpus, gpn));
  }
  if (world > gpn && world % gpn != 0) return NotDivisible(n->name, world, gpn);
  if (gpn < node_gpus) {
    n->platform = PlatformForGroup(n->platform, gpn);
    n->topology.dims[0].npus = gpn;
  }
  const int64_t nodes = (world + gpn - 1) / gpn;
  const int64_t per_node = std::min(world, gpn);
  n->cluster =
      absl::StrFormat("%d node%s x %d GPU%s", nodes, nodes == 1 ? "" : "s",
                      per_node, per_node == 1 ? "" : "s");
  if (gpn < node_gpus) {
    absl::StrAppendFormat(&n->cluster,
                          " (of a node's %d, with their share of its NICs)",
                          node_gpus);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Network> ResolveNetwork(const std::string& flag,
                                       absl::string_view device_name,
                                       bool follow_device, int64_t world_size,
                                       bool comm_on_host,
                                       const ClusterShape& shape,
                                       const NcclFlags& nccl) {
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
  n.node_platform = n.platform;
  if (!n.platform.host_backend && !n.topology.dims.empty()) {
    RETURN_IF_ERROR(ApplyShape(shape, world_size, has_platform, &n));
  }
  RETURN_IF_ERROR(ApplyNcclFlags(nccl, &n.platform.nccl));
  n.node_platform.nccl = n.platform.nccl;
  if (const std::string knobs = DescribeNcclSettings(n.platform.nccl);
      !knobs.empty()) {
    n.cluster = n.cluster.empty() ? knobs : n.cluster + ", " + knobs;
  }
  ASSIGN_OR_RETURN(n.topology, FitTopology(std::move(n.topology), world_size));
  if (!has_platform) {
    // From the fitted links, with the run's knobs.
    const NcclSettings knobs = n.platform.nccl;
    n.platform = PlatformForTopology(n.topology);
    n.platform.nccl = knobs;
    n.node_platform = n.platform;
  }
  return n;
}

void RefitNode(const Platform& fitted, Network* network) {
  network->node_platform = fitted;
  network->platform = PlatformForGroup(fitted, network->platform.gpus_per_node);
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
