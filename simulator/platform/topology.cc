// Topology parsing (our YAML/JSON format and ASTRA-sim's network YAML) and
// presets.
#include "simulator/platform/topology.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/input_limits.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "simulator/platform/yaml_config.h"
#include "yaml-cpp/yaml.h"

namespace et::sim {
namespace {

// Presets. Bandwidths are per GPU and direction, from the vendors' data sheets:
// DGX-A100: NVLink3 via NVSwitch 300 GB/s, 8x HDR IB (200 Gb/s = 25 GB/s) per
// GPU. HGX-H100: NVLink4 via NVSwitch 450 GB/s, 8x NDR IB (400 Gb/s = 50 GB/s)
// per GPU. DGX-V100: NVLink2 hybrid cube mesh, 6 links x 25 GB/s = 150 GB/s; 4x
// EDR IB for 8 GPUs (100 Gb/s x 4 / 8 = 6.25 GB/s per GPU). Latencies: NCCL's
// tuning tables put a hop at ~0.6-3.4 us on NVLink and 2.7-14 us on the
// network; we take low ends.
Topology Preset(const std::string& name, double nvlink_gbps, double nvlink_ns,
                LinkKind inner, double net_gbps, double net_ns) {
  Topology t;
  t.name = name;
  t.dims.push_back({inner, 8, nvlink_gbps, nvlink_ns});
  t.dims.push_back({LinkKind::kSwitch, 0, net_gbps, net_ns});
  return t;
}

std::optional<Topology> FindPreset(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (lower == "dgx-a100") {
    return Preset("DGX-A100", 300, 700, LinkKind::kSwitch, 25, 3000);
  }
  if (lower == "hgx-h100") {
    return Preset("HGX-H100", 450, 600, LinkKind::kSwitch, 50, 2700);
  }
  if (lower == "dgx-v100") {
    return Preset("DGX-V100", 150, 1000, LinkKind::kRing, 6.25, 3000);
  }
  return std::nullopt;
}

absl::StatusOr<LinkKind> ParseKind(const std::string& s,
                                   absl::string_view origin) {
  std::string lower = absl::AsciiStrToLower(s);
  if (lower == "ring") return LinkKind::kRing;
  if (lower == "fullyconnected" || lower == "fully_connected") {
    return LinkKind::kFullyConnected;
  }
  if (lower == "switch") return LinkKind::kSwitch;
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: unknown topology kind '%s' (Ring, FullyConnected, Switch)", origin,
      s));
}

absl::StatusOr<double> ParseNumber(const YAML::Node& node,
                                   absl::string_view origin,
                                   absl::string_view what) {
  double value = 0;
  if (!node.IsScalar() || !YAML::convert<double>::decode(node, value)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s must be a number, got '%s'", origin, what,
        node.IsScalar() ? node.Scalar() : std::string("<non-scalar>")));
  }
  return value;
}

// A dim's npus: a whole number in [0, kMaxRanks]; casting 1e30 or NaN to
// int64 is undefined, and a product of large dims overflowed.
absl::StatusOr<int64_t> ParseNpus(const YAML::Node& node,
                                  absl::string_view origin,
                                  absl::string_view what) {
  ASSIGN_OR_RETURN(double n, ParseNumber(node, origin, what));
  if (!(n >= 0 && n <= static_cast<double>(kMaxRanks)) || n != std::floor(n)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s must be a whole number in [0, %d], got %g",
                        origin, what, kMaxRanks, n));
  }
  return static_cast<int64_t>(n);
}

}  // namespace

bool YamlNestingWithin(absl::string_view text, int limit) {
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

namespace {

// ASTRA-sim: parallel lists topology/npus_count/bandwidth/latency.
absl::StatusOr<Topology> ParseAstra(const YAML::Node& root,
                                    absl::string_view origin) {
  Topology t;
  t.name = std::string(origin);
  t.astra_units = true;
  const YAML::Node kinds = root["topology"], npus = root["npus_count"],
                   bws = root["bandwidth"], lats = root["latency"];
  if (!kinds.IsSequence() || !npus.IsSequence() || !bws.IsSequence() ||
      !lats.IsSequence() || kinds.size() != npus.size() ||
      kinds.size() != bws.size() || kinds.size() != lats.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin,
        ": topology, npus_count, bandwidth and latency must be lists of the "
        "same length"));
  }
  for (size_t i = 0; i < kinds.size(); ++i) {
    TopologyDim dim;
    ASSIGN_OR_RETURN(dim.kind, ParseKind(kinds[i].as<std::string>(), origin));
    ASSIGN_OR_RETURN(dim.npus, ParseNpus(npus[i], origin, "npus_count"));
    // ASTRA-sim's dims are all given (no open outermost dim as in ours).
    if (dim.npus < 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: npus_count[%d] must be at least 1, got 0", origin, i));
    }
    ASSIGN_OR_RETURN(dim.bandwidth_gbps,
                     ParseNumber(bws[i], origin, "bandwidth"));
    ASSIGN_OR_RETURN(dim.latency_ns, ParseNumber(lats[i], origin, "latency"));
    t.dims.push_back(dim);
  }
  return t;
}

// Ours: {name, dims: [{kind, npus, bandwidth_gbps, latency_ns}]}.
absl::StatusOr<Topology> ParseOurs(const YAML::Node& root,
                                   absl::string_view origin) {
  Topology t;
  t.name = root["name"] ? root["name"].as<std::string>() : std::string(origin);
  const YAML::Node dims = root["dims"];
  if (!dims.IsSequence() || dims.size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": 'dims' must be a non-empty list"));
  }
  for (const YAML::Node& d : dims) {
    TopologyDim dim;
    ASSIGN_OR_RETURN(dim.kind, ParseKind(d["kind"] ? d["kind"].as<std::string>()
                                                   : std::string("Switch"),
                                         origin));
    if (d["npus"]) {
      ASSIGN_OR_RETURN(dim.npus, ParseNpus(d["npus"], origin, "npus"));
    }
    if (!d["bandwidth_gbps"] || !d["latency_ns"]) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": every dim needs bandwidth_gbps and latency_ns"));
    }
    ASSIGN_OR_RETURN(dim.bandwidth_gbps, ParseNumber(d["bandwidth_gbps"],
                                                     origin, "bandwidth_gbps"));
    ASSIGN_OR_RETURN(dim.latency_ns,
                     ParseNumber(d["latency_ns"], origin, "latency_ns"));
    t.dims.push_back(dim);
  }
  return t;
}

}  // namespace

absl::string_view LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kRing:
      return "Ring";
    case LinkKind::kFullyConnected:
      return "FullyConnected";
    case LinkKind::kSwitch:
      return "Switch";
  }
  return "?";
}

double Topology::BytesPerNs(size_t d) const {
  const double unit = astra_units ? static_cast<double>(1 << 30) : 1e9;
  return dims[d].bandwidth_gbps * unit / 1e9;
}

absl::StatusOr<Topology> ParseTopology(absl::string_view text,
                                       absl::string_view origin) {
  ASSIGN_OR_RETURN(const YAML::Node root, LoadYamlConfig(text, origin));
  try {  // yaml-cpp reports errors by exception; they stop here.
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": not a YAML/JSON map"));
    }
    if (root["npus_count"]) return ParseAstra(root, origin);
    return ParseOurs(root, origin);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", e.what()));
  }
}

absl::StatusOr<Topology> LoadTopology(const std::string& name_or_path) {
  if (std::optional<Topology> preset = FindPreset(name_or_path)) return *preset;
  absl::StatusOr<std::string> text = ReadConfigFile(name_or_path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrFormat(
        "%s: unknown topology (not a file, and presets are DGX-A100, HGX-H100, "
        "DGX-V100)",
        name_or_path));
  }
  if (!text.ok()) return text.status();
  return ParseTopology(*text, name_or_path);
}

absl::StatusOr<Topology> FitTopology(Topology t, int64_t world_size) {
  if (t.dims.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(t.name, ": topology has no dims"));
  }
  int64_t inner = 1;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    TopologyDim& dim = t.dims[d];
    if (!(dim.bandwidth_gbps > 0) || !std::isfinite(dim.bandwidth_gbps)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: dim %d: bandwidth must be positive, got %g GB/s",
                          t.name, d, dim.bandwidth_gbps));
    }
    if (!(dim.latency_ns >= 0) || !std::isfinite(dim.latency_ns)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: dim %d: latency must be finite and >= 0", t.name, d));
    }
    if (dim.npus == 0) {
      if (d + 1 != t.dims.size()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: dim %d: only the outermost dim may leave npus open", t.name,
            d));
      }
      if (world_size > inner && world_size % inner != 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: world size %d is not divisible by the node size %d", t.name,
            world_size, inner));
      }
      dim.npus = std::max<int64_t>(1, world_size / inner);
    }
    if (dim.npus < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: dim %d: npus must be positive", t.name, d));
    }
    inner *= dim.npus;  // both <= kMaxRanks = 2^20: no overflow
    if (inner > kMaxRanks) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the dims hold more than %d ranks", t.name, kMaxRanks));
    }
  }
  if (world_size > t.dims[0].npus && world_size % t.dims[0].npus != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: world size %d is not divisible by the node size %d", t.name,
        world_size, t.dims[0].npus));
  }
  if (world_size > inner) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: world size %d exceeds the topology's %d ranks",
                        t.name, world_size, inner));
  }
  return t;
}

}  // namespace et::sim
