// Sequence parallelism on top of synthesized tensor parallelism, as
// Megatron-LM runs it (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", section 4.2.2): the ops between
// the column/row-parallel pairs that act on the activation (layer norms,
// dropout, residual adds) run on 1/T of the sequence, the all-reduce of a
// row layer's partial sums becomes a reduce-scatter (each rank keeps its
// sequence shard), and an all-gather of the activation precedes each op that
// needs the whole sequence. The rules (docs/et-sim.md, "Sequence
// parallelism"):
//
// - The region's entries: a 2-D GEMM split by tensor parallelism that reads
//   a split parameter and an activation the split did not make (the column
//   layer's input in forward; the row layer's output gradient in backward).
//   That activation, and the ops making it whose largest tensor has the
//   activation's size (no GEMM), back through the data dependencies, are
//   sequence-split.
// - Forward from the partial sums (after their reduce-scatter) and the
//   entries: an op that is not tensor-split, no GEMM, reads a
//   sequence-split tensor and whose largest tensor has an activation's size
//   is sequence-split: its time /T, its outputs 1/T. In the backward pass an
//   output smaller than the activation it reads (a norm's weight or a row
//   layer's bias gradient) is a sum over the rank's tokens: whole, and
//   all-reduced on the tensor-parallel group (Megatron's all-reduce of the
//   sequence-parallel parameters' gradients).
// - Any other op reading a sequence-split tensor reads it all-gathered: one
//   all-gather per tensor and pass for a pair's GEMMs (Megatron gathers the
//   column layer's input again in backward for its weight gradient, keeping
//   only the shard), one per tensor for a replicated op (the head keeps the
//   gathered input for its backward).
// Every all-gather and reduce-scatter moves the whole activation (s x b x h
// x dtype bytes), as the all-reduce it replaces did in two halves.
//
// On a trace recorded at tp=R (re-split to T, tensor_parallel.h) the same
// rules run on the re-split graph: the recorded all-reduce of each partial
// sum becomes the reduce-scatter (on the recorded group, resized to T), and
// what is sequence-split runs on 1/T of the sequence (the recorded ranks each
// ran all of it). A trace that records sequence parallelism already (a
// reduce-scatter on its tensor-parallel group) is refused.
#ifndef SCALEOUT_SEQUENCE_PARALLEL_H_
#define SCALEOUT_SEQUENCE_PARALLEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "model/node_model.h"

namespace et::scaleout {

// A collective the plan adds: after `producer` (none: no recorded op made
// the tensor), before `readers`.
struct SpCollective {
  std::optional<NodeIndex> producer;
  std::vector<NodeIndex> readers;
  int64_t bytes = 0;
  Dtype dtype = Dtype::kUnknown;
  int64_t step = -1;
};

struct SpPlan {
  std::vector<bool> seq_split;  // per node: runs on 1/T of the sequence
  int64_t seq_split_ops = 0;    // host ops among them
  // The tensors held at 1/T, by the node that made them and their storage.
  absl::flat_hash_set<std::pair<NodeIndex, uint64_t>> made_seq_split;
  std::vector<SpCollective> gathers;       // all-gathers of the activation
  std::vector<SpCollective> grad_reduces;  // norms' gradient all-reduces
};

// `op_split`: per node, split by tensor parallelism; `partial`: the GEMMs
// whose output is a partial sum (reduce-scattered); `split_parameters`:
// the parameters tensor parallelism splits.
SpPlan PlanSequenceParallel(
    const NodeModel& model, const std::vector<bool>& op_split,
    const std::vector<NodeIndex>& partial,
    const absl::flat_hash_set<uint64_t>& split_parameters);

// The reduce-scatters `model` records on the group named `pg_name` (a trace
// recorded with sequence parallelism has one for each all-reduce of partial
// sums that tensor parallelism alone would have).
int64_t RecordedReduceScatters(const NodeModel& model,
                               const std::string& pg_name);

}  // namespace et::scaleout

#endif  // SCALEOUT_SEQUENCE_PARALLEL_H_
