// The time of one collective run by a CPU backend (gloo) among processes of
// one host: gloo's ring (all-reduce: reduce-scatter then all-gather), a
// per-step latency of the loopback/shared-memory transport and a host memory
// bandwidth, plus a fixed cost per call. No NCCL protocols or channels. The
// figures are the HOST-GLOO preset's, measured by
// examples/gloo_allreduce_bench.py (docs/collective-model.md).
#ifndef SIMULATOR_COMM_HOST_COLLECTIVE_MODEL_H_
#define SIMULATOR_COMM_HOST_COLLECTIVE_MODEL_H_

#include <cstdint>

#include "simulator/comm/nccl_cost_model.h"
#include "simulator/platform/platform.h"

namespace et::sim {

// Steps in gloo's algorithm over `ranks`: ring all-reduce 2(n-1), ring
// all-gather and pairwise all-to-all n-1, binomial broadcast ceil(log2 n), a
// pair one.
double HostCollectiveSteps(NcclOp op, int64_t ranks);

// Microseconds for `bytes` (nccl-tests convention) over `ranks` processes:
// launch_us + steps x net_hop_us + bus bytes / (intra_gbps x
// intra_efficiency).
double HostCollectiveUs(const Platform& platform, NcclOp op, int64_t ranks,
                        double bytes);

}  // namespace et::sim

#endif  // SIMULATOR_COMM_HOST_COLLECTIVE_MODEL_H_
