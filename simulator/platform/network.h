// The network one et-sim run is priced on, resolved from one --topology value
// (or, without one, from the trace's GPU): the NCCL platform
// (simulator/platform/platform.h) for the NCCL model and the alpha-beta
// topology (simulator/platform/topology.h) for the other models, each derived
// from the other where only one was given, so every flag form serves every
// model.
#ifndef SIMULATOR_PLATFORM_NETWORK_H_
#define SIMULATOR_PLATFORM_NETWORK_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "simulator/platform/nccl_settings.h"
#include "simulator/platform/platform.h"
#include "simulator/platform/topology.h"

namespace et::sim {

struct Network {
  std::string name;    // the preset or file used
  std::string reason;  // why: "--topology", "the trace's GPU ...", "default"
  Platform platform;
  Topology topology;  // fitted to the world size
  // The shape simulated: "10 nodes x 1 GPU (--nodes, --gpus-per-node)".
  std::string cluster;
  // The whole node `platform` was narrowed from (the same when it was not),
  // with the same NCCL knobs: what --comm-from fits, a log being of its own
  // shape (RefitNode narrows the fitted node again).
  Platform node_platform;
};

// Sets `network->node_platform` to `fitted` and `platform` to it narrowed to
// the GPUs per node the run uses, as ResolveNetwork narrowed it.
void RefitNode(const Platform& fitted, Network* network);

// How the ranks sit, in nccl-tests' terms (the hosts, and mpirun -N: the GPUs
// per node); 0: unset. Fewer GPUs per node than the platform's node holds use
// their share of its NICs (PlatformForGroup); more need a platform file.
struct ClusterShape {
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
};

// `flag`: a platform preset, a platform file or a topology file; empty, when
// `follow_device`: HOST-GLOO if `comm_on_host` (every collective of the trace
// runs on a CPU backend), else the preset of `device_name`; otherwise, or
// with no match, HGX-H100, the previous default.
// `shape` narrows the node to the GPUs per node it names (or world /
// nodes); a world the node size does not divide is an error saying how to
// give the shape. `nccl` (the run's NCCL knobs) applies over the platform
// file's. `cluster` names both.
absl::StatusOr<Network> ResolveNetwork(const std::string& flag,
                                       absl::string_view device_name,
                                       bool follow_device, int64_t world_size,
                                       bool comm_on_host = false,
                                       const ClusterShape& shape = {},
                                       const NcclFlags& nccl = {});

// Two levels: the platform's node over its intra-node fabric, nodes over the
// NICs' share per GPU; latencies from NCCL's Simple hops.
Topology TopologyForPlatform(const Platform& platform);

// The NCCL view of a fitted topology: dim 0 is the node, the next dim's
// per-rank bandwidth is a NIC per GPU; efficiencies from HGX-H100.
Platform PlatformForTopology(const Topology& topology);

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_NETWORK_H_
