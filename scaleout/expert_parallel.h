// Expert parallelism synthesized from a trace recorded without it, as GShard
// (Lepikhin et al. 2020), Switch Transformer (Fedus et al. 2021) and
// DeepSpeed-MoE (Rajbhandari et al. 2022) run a mixture-of-experts layer: its
// E experts are split over the ep ranks of an expert-parallel group (E / ep
// each), every rank routes its own tokens, sends each routed token to its
// expert's rank with an all-to-all (dispatch), runs its experts on what it
// received, and sends the results back with a second all-to-all (combine).
// The rules (docs/et-sim.md, "Expert parallelism from a one-rank trace"):
//
// - An expert: a linear layer C (a 2-D GEMM of a parameter) and the first
//   linear layer R its output reaches that returns to C's input width (an
//   MLP), whose input C gathers from a larger tensor. A mixture-of-experts
//   layer: two or more such MLPs in one step of the same widths, each with its
//   own parameters, gathering from the same tensor. Shapes and data
//   dependencies decide, never op names. Its tokens per expert are C's rows.
// - An op is an expert's when it is C, R or a forward op between them reading
//   what the expert made; or reads the expert's parameters, their gradients or
//   optimizer state; or is a backward op reading what the expert's backward
//   ops made or read (its output gradient). Everything else is replicated; an
//   op reading two experts' tensors is replicated and counted.
// - At the layout, every rank of the group receives each of its experts'
//   tokens from every rank (the same routing as the trace's: each rank routes
//   as many tokens): its experts' forward and backward ops run ep times the
//   rows (time and activation bytes x ep), the other ranks' experts' ops take
//   no time and hold no memory (their nodes are kept, ids unchanged), and
//   parameters, gradients and optimizer state are this rank's E / ep experts'.
// - Added per layer and step on the group: in forward, an all-to-all of the
//   tokens per expert (E x 8 bytes, int64: the split sizes) and the dispatch
//   (routed tokens x hidden x dtype, what this rank sends) before the experts,
//   the combine (what its experts made: ep x their tokens x hidden x dtype)
//   after them; in backward, the combine's gradient (routed tokens x hidden x
//   dtype) before the experts' backward ops, and the dispatch's gradient
//   (ep x its experts' tokens x hidden x dtype) after them when the trace
//   computes the experts' input gradient. Each all-to-all's comm_size is what
//   the rank sends, as et-convert records all_to_all_single (its input). The
//   host runs the layer's ops as the dispatch needs them: all of the routing
//   and gathering first, then its experts, then the weighting and adding.
// - The replicated (dense) parameters' gradients are averaged over the group
//   once after the backward pass (one all-reduce of their bytes): the ranks
//   route different tokens. With dp the data-parallel sync covers the
//   rank's own parameters over its dp group (the experts of equal ep index).
#ifndef SCALEOUT_EXPERT_PARALLEL_H_
#define SCALEOUT_EXPERT_PARALLEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "model/graph.h"
#include "step/storage_lives.h"

namespace et::scaleout {

// The pg_name of the synthesized expert-parallel group.
inline constexpr char kEpGroupName[] = "scaleout:ep";

struct EpShardOptions {
  int64_t ep = 1;
  std::string pg_name = kEpGroupName;
  std::vector<int64_t> ep_ranks;  // the group's members (global ranks)
  // This rank's index in the group (which experts it holds); -1: the index
  // whose experts receive the most tokens (the slowest rank, which the
  // all-to-alls wait for, and the largest memory).
  int64_t ep_index = -1;
};

struct EpShardResult {
  Graph graph;  // the rank's graph at the layout
  int64_t ep_index = 0;
  int64_t layers = 0;            // mixture-of-experts layers (per step)
  int64_t experts = 0;           // experts per layer
  int64_t local_ops = 0;         // this rank's experts' ops (time x ep)
  int64_t other_ops = 0;         // other ranks' experts' ops (no time)
  int64_t unplaced_ops = 0;      // read two experts' tensors, replicated
  int64_t all_to_alls = 0;       // synthesized, all steps
  int64_t all_to_all_bytes = 0;  // their comm_size, summed
  int64_t dense_all_reduces = 0;
  int64_t dense_bytes = 0;  // the replicated parameters' gradient bytes
  // Persistent storages (parameters, gradients, optimizer state) of the
  // experts other ranks hold: no memory here, no data-parallel sync.
  absl::flat_hash_set<uint64_t> other_storages;
  // Tensors an expert's op made, by node and storage: x ep (this rank's
  // experts' activations) or x 0 (the others').
  absl::flat_hash_map<std::pair<NodeIndex, uint64_t>, int64_t> made_scale;
  std::string note;  // one line for the report
};

// Errors (one line): ep < 2, no mixture-of-experts layer (naming what the
// trace lacks), experts ep does not divide.
absl::StatusOr<EpShardResult> ShardExpertParallel(
    const Graph& graph, const EpShardOptions& options);

// The lives at the layout: the other ranks' experts' storages hold nothing,
// this rank's experts' activations ep times their bytes. `split` must be of
// the graph the lives are of (or one that only appends nodes to it).
std::vector<StorageLife> LivesAtExpertParallel(std::vector<StorageLife> lives,
                                               const EpShardResult& split);

}  // namespace et::scaleout

#endif  // SCALEOUT_EXPERT_PARALLEL_H_
