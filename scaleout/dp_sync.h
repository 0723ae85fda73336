// Synthesized data-parallel gradient synchronization: turns a recorded rank's
// graph into the same rank of a job with `dp_size` data-parallel replicas by
// adding the collectives the replicas would issue (docs/dp-sync.md):
//
// - ddp: PyTorch DDP. One ALL_REDUCE per bucket per iteration
//   (scaleout/ddp_buckets.h, the rebuilt buckets of iterations >= 1), each
//   depending on the nodes that make its gradients ready, so it starts when
//   its last gradient is ready and overlaps the rest of the backward pass;
//   the optimizer's first node waits for all of them.
// - zero: ZeRO stage 1/2 (DeepSpeed). One REDUCE_SCATTER per bucket where DDP
//   has its all-reduce (each rank keeps its 1/dp shard of the reduced
//   gradients), the optimizer waits for all; after the optimizer, one
//   ALL_GATHER per bucket of the updated parameter shards (comm_size = the
//   shard), which the next iteration's first node waits for.
// - fsdp: FSDP full shard, one unit per bucket. Before the forward pass an
//   ALL_GATHER per unit (the first one gates the iteration's first node, the
//   others overlap the forward and must end before the backward's first
//   gradient); in the backward an ALL_GATHER of the unit before its first
//   gradient, and a REDUCE_SCATTER after its last; the optimizer waits for the
//   reduce-scatters.
//
// The collectives are ordinary Chakra nodes (COMM_COLL_NODE, comm_type,
// comm_size, pg_name, is_cpu_op false, on a stream of their own) marked
// `synthesized`, so et-sim and the per-rank .et writer treat them as
// recorded ones. The process group `pg_name` (dp_size members) is added to
// the metadata. Compute is not rescaled (ZeRO's and FSDP's optimizer works on
// a shard: not modelled).
#ifndef SCALEOUT_DP_SYNC_H_
#define SCALEOUT_DP_SYNC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/ddp_buckets.h"

namespace et::scaleout {

enum class DpSyncMode : uint8_t { kNone, kDdp, kZero, kFsdp };

// "none", "ddp", "zero", "fsdp".
absl::string_view DpSyncModeName(DpSyncMode mode);
absl::StatusOr<DpSyncMode> ParseDpSyncMode(absl::string_view text);

struct DpSyncOptions {
  DpSyncMode mode = DpSyncMode::kDdp;
  int64_t dp_size = 1;            // replicas; <= 1 adds nothing
  std::string pg_name = "dp";     // the group the collectives name
  std::vector<int64_t> dp_ranks;  // its members (global ranks), if known
  int64_t bucket_cap_bytes = kDefaultBucketCapBytes;
  int64_t first_bucket_bytes = kDefaultFirstBucketBytes;
  // Synthesized tensor parallelism (scaleout/tensor_parallel.h): gradients
  // held in these storages are recorded_tp/tp of their recorded size (a
  // trace recorded at tp=2 re-split to tp=4: half). Not owned.
  int64_t tp = 1;
  int64_t recorded_tp = 1;
  const absl::flat_hash_set<uint64_t>* tp_split_storages = nullptr;
  // Synthesized expert parallelism (scaleout/expert_parallel.h): gradients
  // held in these storages are other ranks' experts', not synced here.
  const absl::flat_hash_set<uint64_t>* ep_other_storages = nullptr;
};

struct DpSyncResult {
  // The graph (AddDpSync of a graph) or the node model (of a model) with
  // the synthesized collectives; nullopt when nothing was added (mode none,
  // dp_size 1, or the sync is recorded).
  std::optional<Graph> graph;
  std::optional<NodeModel> model;
  // The trace already holds its data-parallel collectives: kept as they are
  // (their group size is the layout's business, not this one's).
  bool recorded = false;
  std::string note;  // one line for the report: what was done and why
  std::vector<Bucket> buckets;  // one iteration's, in launch order
  int gradients = 0;            // per iteration
  int64_t gradient_bytes = 0;   // per iteration
  int iterations = 0;
  int64_t collectives_added = 0;
};

absl::StatusOr<DpSyncResult> AddDpSync(const Graph& graph,
                                       const DpSyncOptions& options);
// The same sync on a loaded node model (decoded with `model_options`):
// result.model is what NodeModel::FromGraph(AddDpSync(graph).graph,
// model_options) gives, made from the model's columns without its graph
// (NodeModel::WithAddedNodes): et-sim --layout reads the trace once.
// FailedPrecondition where the model cannot take the sync's group table (a
// node of its own names the group): the caller syncs the graph instead.
absl::StatusOr<DpSyncResult> AddDpSync(const NodeModel& model,
                                       const DpSyncOptions& options,
                                       const ModelOptions& model_options);
// The same, taking *model's columns into result.model rather than copying
// them (leaving *model empty) when it sets result.model; otherwise *model
// is left as it was.
absl::StatusOr<DpSyncResult> AddDpSync(NodeModel* model,
                                       const DpSyncOptions& options,
                                       const ModelOptions& model_options);

// Whether AddDpSync's nodes are the same for every dp_size and dp_ranks in
// `mode`: DDP's buckets are by bytes; ZeRO's and FSDP's shards divide by dp.
// Where they are, two results of one graph and options that differ in
// dp_size or dp_ranks differ only in their graph's metadata (DpSyncMetadata)
// and their note (DpSyncNote): et-sim --search syncs once for every dp
// (simulator/layout_cache.h).
bool DpSyncNodesIndependentOfDp(DpSyncMode mode);

// The metadata of AddDpSync's graph: `metadata` with the group
// options.pg_name of dp_size ranks (dp_ranks) in place of any of that name.
ChakraProtoMsg::GlobalMetadata DpSyncMetadata(
    ChakraProtoMsg::GlobalMetadata metadata, const DpSyncOptions& options);

// AddDpSync's note for a synthesized sync (`result` not recorded).
std::string DpSyncNote(const DpSyncResult& result,
                       const DpSyncOptions& options);

}  // namespace et::scaleout

#endif  // SCALEOUT_DP_SYNC_H_
