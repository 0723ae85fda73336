// Tensor parallelism synthesized from a trace recorded without it, as
// Megatron-LM shards a transformer (Shoeybi et al. 2019, "Megatron-LM",
// section 3): every column-parallel / row-parallel linear pair is split over
// the T ranks of a tensor-parallel group, and the partial sums the row-parallel
// linear makes are all-reduced. The rules (docs/et-sim.md, "Tensor
// parallelism from a one-rank trace"):
//
// - A pair: a forward 2-D GEMM C whose second operand is a parameter (a
//   linear layer, x[M,H] W[H,N]) and the first 2-D parameter GEMM R its output
//   reaches through the data dependencies whose output width is C's input
//   width H (the MLP's up -> down projection; attention's QKV -> output
//   projection, with the attention between). Shapes and dependencies decide,
//   never op names. C's weight (and bias) and R's weight are split by T;
//   R's bias is not (Megatron adds it after the all-reduce).
// - What is split follows the storages: an op reading a split storage is
//   split, its time and FLOPs divided by T and its outputs split, when the
//   split inputs are at least half of what it reads (a GEMM: when either
//   operand is split). A 2-D GEMM whose two operands are both split sums over
//   the split dimension: its output is a full-size partial sum, and an
//   all-reduce of it (M x H x dtype) on the tensor-parallel group follows it
//   before any op reads it: R in the forward pass, and C's input gradient in
//   the backward pass. A batched GEMM of two split operands (attention's
//   heads) stays split. The optimizer's state and work for a split parameter
//   follow it.
// - Anything else is replicated; an op that reads split storages but less
//   than half of its bytes cannot be placed by the rule: it is replicated and
//   counted (the report says how many).
//
// The input graph is one rank's; the result is the same rank of a job with T
// tensor-parallel ranks, with the added all-reduces marked synthesized and
// the group added to the metadata. Ids of existing nodes are kept.
//
// A trace recorded at tp=R (TpShardOptions::recorded_tp) is re-split by the
// same rule: its pairs' GEMMs are already 1/R, what is split is scaled by R/T,
// and a partial sum keeps its recorded all-reduce (on the recorded group,
// resized to T by the caller). With sequence_parallel, Megatron's sequence
// parallelism follows (scaleout/sequence_parallel.h), on a re-split trace
// too: its recorded all-reduces of partial sums become the reduce-scatters.
#ifndef SCALEOUT_TENSOR_PARALLEL_H_
#define SCALEOUT_TENSOR_PARALLEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "model/graph.h"
#include "step/storage_lives.h"

namespace et::scaleout {

// The pg_name of the synthesized tensor-parallel group.
inline constexpr char kTpGroupName[] = "scaleout:tp";

struct TpShardOptions {
  int64_t tp = 1;
  // The tp the trace was recorded at. Above 1 the trace is re-split: its
  // pairs' GEMMs are already 1/recorded_tp, its row layers' all-reduces are
  // recorded (on `pg_name`, the recorded group, resized to `tp` by the
  // caller); what is split is scaled by recorded_tp/tp, and an all-reduce is
  // synthesized only where a partial sum has none recorded.
  int64_t recorded_tp = 1;
  // Megatron's sequence parallelism on top (scaleout/sequence_parallel.h):
  // reduce-scatters in place of the all-reduces, all-gathers before the ops
  // that need the whole sequence, the ops between the pairs split along it.
  bool sequence_parallel = false;
  std::string pg_name = kTpGroupName;
  std::vector<int64_t> tp_ranks;  // the group's members (global ranks)
};

struct TpShardResult {
  Graph graph;  // the rank's graph at the layout
  // Storages split by T at the end of the trace, parameters first: what the
  // gradient buckets divide (DpSyncOptions::tp_split_storages), and the
  // persistent lives (LivesAtTensorParallel).
  absl::flat_hash_set<uint64_t> split_storages;
  // The split tensors by the node that made them and their storage (the
  // trace's storage ids are addresses, reused after a free).
  absl::flat_hash_set<std::pair<NodeIndex, uint64_t>> made_split;
  int64_t pairs = 0;             // column/row pairs found (all steps)
  int64_t split_ops = 0;         // ops whose time was divided by T
  int64_t unplaced_ops = 0;      // read split storages, replicated
  int64_t all_reduces = 0;       // synthesized, all steps
  int64_t all_reduce_bytes = 0;  // their comm_size (and reduce-scatters')
  // With sequence parallelism: the collectives it adds, and what it splits
  // along the sequence (tensors held at 1/T, like made_split).
  int64_t reduce_scatters = 0, all_gathers = 0, all_gather_bytes = 0;
  int64_t seq_split_ops = 0;
  absl::flat_hash_set<std::pair<NodeIndex, uint64_t>> made_seq_split;
  // Re-split: partial sums whose all-reduce the trace records (kept).
  int64_t recorded_all_reduces = 0;
  // Re-split: recorded gradient syncs (DDP's buckets) whose bytes were
  // scaled to the re-split gradients.
  int64_t scaled_gradient_syncs = 0;
  int64_t tp = 1, recorded_tp = 1;  // the options'
  std::string note;                 // one line for the report
};

// Errors (one line): tp < 2, or no column/row pair in the graph (naming what
// the trace lacks, the first missing piece: parameters (no optimizer or
// backward ops to tell them), 2-D GEMMs reading a parameter, widths tp
// divides, or a linear whose output returns to its input width).
absl::StatusOr<TpShardResult> ShardTensorParallel(
    const Graph& graph, const TpShardOptions& options);

// The column/row pairs a trace holds and the widths they split (the column
// layer's output, the row layer's input): tp can be any divisor of
// `width_gcd` (Megatron also needs the attention heads divisible by tp; the
// heads are not told apart from the batch in a batched GEMM's shape, so the
// widths are what is checked). No pairs: `width_gcd` is 0.
struct TpWidths {
  int64_t pairs = 0;
  int64_t width_gcd = 0;
  int64_t parameter_gemms = 0;  // linear layers seen (2-D GEMMs of a param)
  std::string missing;          // no pairs: what the trace lacks (one clause)
};
TpWidths TensorParallelWidths(const Graph& graph);

// The lives at the layout: a split life holds recorded_tp/T of its bytes
// (rounded up; 1/T from a trace without tp), a sequence-split one 1/T:
// a persistent one whose storage is split, any other made split by its first
// node. `split` must be of the graph the lives are of (or one that only
// appends nodes to it: node indices are kept).
std::vector<StorageLife> LivesAtTensorParallel(std::vector<StorageLife> lives,
                                               const TpShardResult& split,
                                               int64_t tp);

}  // namespace et::scaleout

#endif  // SCALEOUT_TENSOR_PARALLEL_H_
