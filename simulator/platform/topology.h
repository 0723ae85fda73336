// A multi-dimensional network: dimension 0 is the innermost (e.g. NVLink inside
// a node), each further dimension groups the previous one (e.g. an IB rail
// across nodes). Loaded from our YAML/JSON format, from ASTRA-sim's network
// YAML, or from a named preset (DGX-A100, HGX-H100, DGX-V100). Plain value
// type; validated against the world size.
#ifndef SIMULATOR_PLATFORM_TOPOLOGY_H_
#define SIMULATOR_PLATFORM_TOPOLOGY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace et::sim {

enum class LinkKind { kRing, kFullyConnected, kSwitch };

struct TopologyDim {
  LinkKind kind = LinkKind::kSwitch;
  int64_t npus = 0;  // ranks along this dimension; 0 = all remaining ranks
  double bandwidth_gbps =
      0;  // GB/s per rank and direction (GB = 1e9 B; ASTRA: 2^30)
  double latency_ns = 0;  // per hop
};

struct Topology {
  std::string name;
  std::vector<TopologyDim> dims;
  // True when read from an ASTRA-sim YAML: GB means 2^30 bytes.
  bool astra_units = false;

  // Bytes per ns of one link in dimension `d`.
  double BytesPerNs(size_t d) const;
  // Hops a message takes inside dimension `d` between neighbours (Switch: 2).
  int Hops(size_t d) const { return dims[d].kind == LinkKind::kSwitch ? 2 : 1; }
};

// "DGX-A100", "HGX-H100", "DGX-V100" (case-insensitive), or a path to a
// YAML/JSON file.
absl::StatusOr<Topology> LoadTopology(const std::string& name_or_path);

// Parses our format or ASTRA-sim's from YAML/JSON text; `origin` names it in
// errors.
absl::StatusOr<Topology> ParseTopology(absl::string_view text,
                                       absl::string_view origin);

// Resolves dims with npus == 0 and checks that the topology fits `world_size`
// ranks: positive bandwidths, the product of inner dims divides the world.
absl::StatusOr<Topology> FitTopology(Topology topology, int64_t world_size);

absl::string_view LinkKindName(LinkKind kind);

// Bracket nesting of a flow-style YAML/JSON text within `limit`: checked
// before yaml-cpp sees a file, since it recurses once per level and reports
// its own limit only as noise. Shared with the platform file reader.
bool YamlNestingWithin(absl::string_view text, int limit);

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_TOPOLOGY_H_
