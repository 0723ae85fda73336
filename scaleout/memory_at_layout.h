// A recorded rank's allocations (step/storage_lives.h) as the same rank of a
// data-parallel job would hold them: the buffers the synthesized sync adds
// (DDP's buckets) and what each ZeRO stage shards across the dp replicas.
// The rules and their sources are in docs/memory-model.md ("At another
// layout"); tensor- and pipeline-parallel groups the trace recorded keep
// their memory (the trace's ops are already sharded for them). Every number
// is a prediction for a job that was not run. Pure functions; thread-safe.
#ifndef SCALEOUT_MEMORY_AT_LAYOUT_H_
#define SCALEOUT_MEMORY_AT_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "step/storage_lives.h"

namespace et::scaleout {

// What a --dp-sync stage shards across dp (ZeRO's stages; FSDP's full shard
// is stage 3).
enum class ShardStage : uint8_t {
  kNone = 0,        // ddp: every replica holds everything
  kOptimizer = 1,   // zero1: optimizer state
  kGradients = 2,   // zero2: and gradients
  kParameters = 3,  // zero3, fsdp: and parameters
};

// The stage a --dp-sync name shards: ddp and none nothing, zero1 the optimizer
// state, zero2 (and `zero`, which communicates as stage 2 does) the gradients
// too, zero3 and fsdp the parameters too. Unknown names shard nothing.
ShardStage ShardStageOf(absl::string_view dp_sync);

struct LayoutMemoryOptions {
  int64_t dp = 1;        // the job's data-parallel replicas
  int64_t dp_index = 0;  // this rank's place among them (ZeRO-1's share)
  ShardStage stage = ShardStage::kNone;
  // The synthesized sync's buckets (scaleout/dp_sync.h), in launch order;
  // empty when the trace records its own sync (its buffers are in `lives`).
  std::vector<int64_t> bucket_bytes;
  bool ddp_buckets = false;  // DDP's reducer holds one buffer per bucket
};

// The lives with the stage's shards applied and the layout's buffers added
// (persistent lives of kind kCommBuffer, or kParameter for FSDP's gathered
// units, on the device of the gradients).
std::vector<StorageLife> LivesAtLayout(std::vector<StorageLife> lives,
                                       const LayoutMemoryOptions& options);

// ZeRO-1's share of the parameters held by `dp_index` of `dp`, as torch's
// ZeroRedundancyOptimizer partitions them (largest first, each to the rank
// with the fewest elements so far): its bytes over all parameters' bytes.
double OptimizerShare(const std::vector<int64_t>& parameter_bytes, int64_t dp,
                      int64_t dp_index);
// The same partition for every rank at once: the bytes each of the `dp`
// ranks holds (the replicas are computed once, not once per rank).
std::vector<int64_t> OptimizerHeld(const std::vector<int64_t>& parameter_bytes,
                                   int64_t dp);

}  // namespace et::scaleout

#endif  // SCALEOUT_MEMORY_AT_LAYOUT_H_
