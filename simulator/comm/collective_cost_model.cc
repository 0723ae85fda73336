// Alpha-beta collective formulas (Thakur, Rabenseifner, Gropp 2005; Patarasuk
// and Yuan 2009) and the NCCL-like efficiency curve.
#include "simulator/comm/collective_cost_model.h"

#include <algorithm>
#include <cmath>

namespace et::sim {
namespace {

using ChakraProtoMsg::CollectiveCommType;

double Log2(int64_t p) { return std::log2(static_cast<double>(p)); }
double CeilLog2(int64_t p) { return std::ceil(Log2(p)); }

double RingNs(CollectiveCommType type, int64_t p, double s, double a,
              double b) {
  const double pm1 = static_cast<double>(p - 1);
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return 2 * pm1 * a + 2 * pm1 / p * s * b;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      return pm1 * a + pm1 / p * s * b;
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::GATHER:
      return pm1 * a + pm1 * s * b;  // S is the shard: the full buffer is S p
    case ChakraProtoMsg::ALL_TO_ALL:
      return pm1 * (a + s * b / p);
    case ChakraProtoMsg::BROADCAST:
    case ChakraProtoMsg::REDUCE:
    case ChakraProtoMsg::SCATTER:  // scatter + all-gather (van de Geijn)
      return (Log2(p) + pm1) * a + 2 * pm1 / p * s * b;
    case ChakraProtoMsg::BARRIER:
      return 2 * CeilLog2(p) * a;
    default:
      return 0;
  }
}

double TreeNs(CollectiveCommType type, int64_t p, double s, double a,
              double b) {
  const double pm1 = static_cast<double>(p - 1);
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:  // Rabenseifner
      return 2 * Log2(p) * a + 2 * pm1 / p * s * b;
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:  // recursive halving
      return Log2(p) * a + pm1 / p * s * b;
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::GATHER:  // recursive doubling, full buffer S p
      return Log2(p) * a + pm1 * s * b;
    case ChakraProtoMsg::ALL_TO_ALL:  // Bruck
      return Log2(p) * a + s / 2 * Log2(p) * b;
    case ChakraProtoMsg::BROADCAST:
    case ChakraProtoMsg::REDUCE:
    case ChakraProtoMsg::SCATTER:  // binomial tree
      return CeilLog2(p) * (a + s * b);
    case ChakraProtoMsg::BARRIER:
      return CeilLog2(p) * a;
    default:
      return 0;
  }
}

// Direct: every rank exchanges with every other at once over a switch; one
// latency, the bus bandwidth term.
double DirectNs(CollectiveCommType type, int64_t p, double s, double a,
                double b) {
  const double pm1 = static_cast<double>(p - 1);
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return 2 * a + 2 * pm1 / p * s * b;
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::GATHER:
      return a + pm1 * s * b;
    case ChakraProtoMsg::BROADCAST:
    case ChakraProtoMsg::REDUCE:
      return a + s * b;
    case ChakraProtoMsg::BARRIER:
      return a;
    default:
      return a + pm1 / p * s * b;
  }
}

}  // namespace

double FlatCollectiveNs(CollectiveCommType type, CollectiveAlgorithm algorithm,
                        int64_t p, double bytes, const LinkLevel& link) {
  if (p <= 1) return 0;
  const double a = link.alpha_ns, b = 1.0 / link.bytes_per_ns;
  switch (algorithm) {
    case CollectiveAlgorithm::kTree:
      return TreeNs(type, p, bytes, a, b);
    case CollectiveAlgorithm::kDirect:
      return DirectNs(type, p, bytes, a, b);
    case CollectiveAlgorithm::kRing:
    case CollectiveAlgorithm::kHierarchical:
    case CollectiveAlgorithm::kAuto:
      break;
  }
  // Broadcast/reduce have no ring form in the spec: auto/ring use the binomial
  // tree for them, like NCCL's small-message choice.
  if (type == ChakraProtoMsg::BROADCAST || type == ChakraProtoMsg::REDUCE) {
    return std::min(TreeNs(type, p, bytes, a, b), RingNs(type, p, bytes, a, b));
  }
  return RingNs(type, p, bytes, a, b);
}

double HierarchicalCollectiveNs(CollectiveCommType type, int64_t p1, int64_t p2,
                                double bytes, const LinkLevel& inner,
                                const LinkLevel& outer) {
  if (p2 <= 1)
    return FlatCollectiveNs(type, CollectiveAlgorithm::kRing, p1, bytes, inner);
  if (p1 <= 1)
    return FlatCollectiveNs(type, CollectiveAlgorithm::kRing, p2, bytes, outer);
  const double a1 = inner.alpha_ns, b1 = 1.0 / inner.bytes_per_ns;
  const double a2 = outer.alpha_ns, b2 = 1.0 / outer.bytes_per_ns;
  const double s = bytes;
  const double q1 = static_cast<double>(p1), q2 = static_cast<double>(p2);
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:  // the spec's formula
      return 2 * (q1 - 1) * (a1 + s * b1 / q1) +
             2 * (q2 - 1) * (a2 + s * b2 / (q1 * q2));
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
    case ChakraProtoMsg::ALL_TO_ALL:
      return (q1 - 1) * (a1 + s * b1 / q1) +
             (q2 - 1) * (a2 + s * b2 / (q1 * q2));
    case ChakraProtoMsg::ALL_GATHER:
    case ChakraProtoMsg::GATHER:  // shard s: gather s q1 inside, then s q1
                                  // across
      return (q1 - 1) * (a1 + s * b1) + (q2 - 1) * (a2 + s * q1 * b2);
    default: {  // broadcast/reduce/barrier: tree across nodes then inside
      return FlatCollectiveNs(type, CollectiveAlgorithm::kAuto, p2, bytes,
                              outer) +
             FlatCollectiveNs(type, CollectiveAlgorithm::kAuto, p1, bytes,
                              inner);
    }
  }
}

double NcclEfficiency(double bytes) {
  constexpr double kLowBytes = 64.0 * 1024, kLowEff = 0.2;
  constexpr double kMidBytes = 16.0 * 1024 * 1024, kMidEff = 0.45;
  constexpr double kHighBytes = 4.0 * 1024 * 1024 * 1024, kHighEff = 0.8;
  if (bytes <= kLowBytes) return kLowEff;
  if (bytes >= kHighBytes) return kHighEff;
  const double x = std::log2(bytes);
  if (bytes <= kMidBytes) {
    const double t = (x - std::log2(kLowBytes)) /
                     (std::log2(kMidBytes) - std::log2(kLowBytes));
    return kLowEff + t * (kMidEff - kLowEff);
  }
  const double t = (x - std::log2(kMidBytes)) /
                   (std::log2(kHighBytes) - std::log2(kMidBytes));
  return kMidEff + t * (kHighEff - kMidEff);
}

namespace {
LinkLevel LevelOf(const Topology& t, size_t d, double efficiency) {
  return {t.dims[d].latency_ns * t.Hops(d), t.BytesPerNs(d) * efficiency};
}
}  // namespace

double CollectiveCostNs(CollectiveCommType type, int64_t group_size,
                        double bytes, const Topology& topology,
                        CollectiveAlgorithm algorithm, bool nccl_efficiency) {
  if (group_size <= 1 || topology.dims.empty()) return 0;
  const double eff = nccl_efficiency ? NcclEfficiency(bytes) : 1.0;
  const int64_t node = topology.dims[0].npus;
  const LinkLevel inner = LevelOf(topology, 0, eff);
  if (group_size <= node || topology.dims.size() == 1) {
    return FlatCollectiveNs(type, algorithm, group_size, bytes, inner);
  }
  // Outer dims folded into one level: the slowest bandwidth, the summed
  // latency.
  LinkLevel outer = LevelOf(topology, 1, eff);
  for (size_t d = 2; d < topology.dims.size(); ++d) {
    const LinkLevel l = LevelOf(topology, d, eff);
    outer.alpha_ns += l.alpha_ns;
    outer.bytes_per_ns = std::min(outer.bytes_per_ns, l.bytes_per_ns);
  }
  const int64_t p1 = node, p2 = (group_size + node - 1) / node;
  if (algorithm == CollectiveAlgorithm::kRing ||
      algorithm == CollectiveAlgorithm::kTree ||
      algorithm == CollectiveAlgorithm::kDirect) {
    // A flat algorithm over a multi-node group runs at the slowest link's
    // speed.
    LinkLevel flat{std::max(inner.alpha_ns, outer.alpha_ns),
                   outer.bytes_per_ns};
    return FlatCollectiveNs(type, algorithm, group_size, bytes, flat);
  }
  return HierarchicalCollectiveNs(type, p1, p2, bytes, inner, outer);
}

double PointToPointNs(double bytes, bool same_node, const Topology& topology) {
  if (topology.dims.empty()) return 0;
  const size_t d = (same_node || topology.dims.size() == 1) ? 0 : 1;
  return topology.dims[d].latency_ns * topology.Hops(d) +
         bytes / topology.BytesPerNs(d);
}

}  // namespace et::sim
