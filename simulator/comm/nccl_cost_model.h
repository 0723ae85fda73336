// The time of one NCCL collective on a platform, the way NCCL runs it: for
// each algorithm (ring, tree, NVLink SHARP) and protocol (LL, LL128, Simple)
// a latency (launch, base, per-step hops) and a bus bandwidth (link rate x
// efficiency x protocol share, capped where NCCL caps it), and the fastest of
// them, as NCCL's tuner picks. Sizes follow nccl-tests (all-gather: the whole
// output; reduce-scatter: the whole input). Pure functions; see
// docs/collective-model.md for the formulas and every constant's source.
#ifndef SIMULATOR_COMM_NCCL_COST_MODEL_H_
#define SIMULATOR_COMM_NCCL_COST_MODEL_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "proto/et_def.pb.h"
#include "simulator/platform/platform.h"

namespace et::sim {

enum class NcclOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv
};

struct NcclEstimate {
  double time_us = 0;
  absl::string_view algorithm = "none";  // ring, tree, nvls, nvlstree, p2p
  absl::string_view protocol = "none";   // LL, LL128, Simple
};

// "all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
// "sendrecv" (nccl-tests' names), or nullopt.
std::optional<NcclOp> NcclOpByName(absl::string_view name);
absl::string_view NcclOpName(NcclOp op);

// The Chakra type's NCCL counterpart (reduce as broadcast, gather as
// all-gather), or nullopt for barrier and unknown types.
std::optional<NcclOp> NcclOpForChakra(ChakraProtoMsg::CollectiveCommType type);

// nccl-tests' busbw / algbw for `op` on `ranks` (all-reduce 2(n-1)/n, ...).
double BusBandwidthFactor(NcclOp op, int64_t ranks);

// The fastest algorithm/protocol for `bytes` (nccl-tests convention) over
// `ranks` ranks filling nodes of the platform's gpus_per_node, among those
// the platform's NCCL knobs (NCCL_ALGO, NCCL_PROTO) and `algorithms` allow;
// when they leave the operation none it has, all of its own (NCCL would fail
// the call). Channel bounds and GPUs per process apply too.
NcclEstimate NcclCollective(const Platform& platform, NcclOp op, int64_t ranks,
                            double bytes,
                            unsigned algorithms = kNcclAllAlgorithms);

// The cost in ns of a Chakra collective of `bytes` per rank in the spec's
// convention (the shard for all-gather, the whole buffer otherwise) over
// `group_size` ranks, or nullopt for types NCCL has no collective for
// (barrier): the caller falls back to the alpha-beta model.
std::optional<double> NcclChakraCostNs(const Platform& platform,
                                       ChakraProtoMsg::CollectiveCommType type,
                                       int64_t group_size, double bytes);

// A send/recv pair of `bytes`: inside a node when the world fits in one,
// else across nodes (pipeline stages usually sit on different nodes).
double NcclPointToPointNs(const Platform& platform, double bytes,
                          int64_t world_size);

}  // namespace et::sim

#endif  // SIMULATOR_COMM_NCCL_COST_MODEL_H_
