// Closed-form alpha-beta cost of one collective on a multi-dimensional topology
// (see docs/et-sim.md and the spec's table): ring, tree/recursive, direct and
// hierarchical algorithms, optionally scaled by an NCCL-like size-dependent bus
// efficiency. Pure functions of their arguments; thread-safe.
#ifndef SIMULATOR_COMM_COLLECTIVE_COST_MODEL_H_
#define SIMULATOR_COMM_COLLECTIVE_COST_MODEL_H_

#include <cstdint>

#include "proto/et_def.pb.h"
#include "simulator/platform/sim_options.h"
#include "simulator/platform/topology.h"

namespace et::sim {

// One level of links: alpha = per-step latency, bytes_per_ns = 1 / beta.
struct LinkLevel {
  double alpha_ns = 0;
  double bytes_per_ns = 1;
};

// Flat costs on one level, p ranks, `bytes` = S in the spec (the full buffer
// for all-reduce/reduce-scatter/all-to-all, the shard for all-gather).
double FlatCollectiveNs(ChakraProtoMsg::CollectiveCommType type,
                        CollectiveAlgorithm algorithm, int64_t p, double bytes,
                        const LinkLevel& link);

// Two levels: p1 ranks per node over `inner`, p2 nodes over `outer`.
double HierarchicalCollectiveNs(ChakraProtoMsg::CollectiveCommType type,
                                int64_t p1, int64_t p2, double bytes,
                                const LinkLevel& inner, const LinkLevel& outer);

// NCCL-like bus efficiency: 0.45 at 16 MiB rising log-linearly to 0.8 at 4 GiB
// (published NVLink tables), extended down to 0.2 at 64 KiB; clamped.
double NcclEfficiency(double bytes);

// The cost of a collective over `group_size` ranks with `bytes` per rank on
// `topology` (fitted): ranks fill dim 0 first; a group spanning several dims
// uses the hierarchical formula with the outer dims folded into one level (the
// slowest link).
double CollectiveCostNs(ChakraProtoMsg::CollectiveCommType type,
                        int64_t group_size, double bytes,
                        const Topology& topology, CollectiveAlgorithm algorithm,
                        bool nccl_efficiency);

// Point-to-point: alpha + S beta on the level the peers share.
double PointToPointNs(double bytes, bool same_node, const Topology& topology);

}  // namespace et::sim

#endif  // SIMULATOR_COMM_COLLECTIVE_COST_MODEL_H_
