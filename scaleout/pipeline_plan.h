// Pipeline parallelism synthesized from a trace recorded without it: the
// recorded model's layers found in one training step, split into P
// contiguous stages balanced by compute time, with the bytes each stage
// boundary sends per micro-batch and each stage's memory at the schedule's
// in-flight micro-batches. The rules (docs/et-sim.md, "Pipeline parallelism
// from a one-rank trace"):
//
// - The step is the trace's last recorded one. Its top-level ops (those whose
//   parent is the step, or no op of the step) in id order are the forward
//   ops up to the first one with a backward op under it, the backward ops
//   (autograd_backward, grad_accumulator), and the rest (the optimizer,
//   zero_grad), which runs once per step.
// - A layer starts at each forward top-level op that reads a parameter no
//   earlier op of the step read (a linear, a norm, an embedding) and holds
//   the parameter-free ops after it (attention's softmax and matmuls go with
//   the QKV projection, the residual add with the projection before it).
// - The backward ops go to layers by their gradient accumulations: autograd
//   accumulates gradients in reverse order of the parameters' first use, so
//   the ops up to a layer's last accumulation belong to it, walking from the
//   last layer down.
// - A layer's time is the simulated one-rank step's progress over its ops
//   (the latest finish of its nodes after the previous layer's), less its
//   communication; the rest is spread over the stages by parameter bytes.
// - Stages minimize the slowest stage's forward + backward time, unless the
//   user gives the repeated blocks (pipeline_blocks.h) per stage
//   (--pp-split); interleaved:V cuts the blocks into P x V equal model
//   chunks, rank s holding chunks s, s + P, ... (the embedding with chunk 0,
//   the head and loss with the last).
// - A boundary's activation: the non-persistent storages forward ops before
//   the cut write and forward ops after it read, from the recorded tensors.
// - Each micro-batch runs 1/M of the recorded batch: its compute time,
//   activation bytes and boundary bytes are 1/M of the recorded ones.
// - Memory per stage: its persistent storages (parameters, gradients,
//   optimizer state by their parameter, workspaces on every stage), plus the
//   most its passes (pipeline_order.h) hold at once: a pass's transient peak
//   and the activations of the forwards whose backward has not run (1F1B:
//   min(M, P - s) micro-batches in flight on stage s; GPipe: M; interleaved:
//   2 (P - s - 1) + (V - 1) P + 1 micro-batch chunks, Megatron-LM's warm-up
//   plus one). Each activation is the stash of the chunk whose forward made
//   it: for one made inside a folded forward op, which the memory model
//   starts in the backward, the chunk of the maker the trace's ids name,
//   else of its first reader.
#ifndef SCALEOUT_PIPELINE_PLAN_H_
#define SCALEOUT_PIPELINE_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/node_model.h"
#include "scaleout/pipeline_blocks.h"
#include "scaleout/pipeline_order.h"
#include "step/storage_lives.h"

namespace et::scaleout {

// The pg_name of the synthesized pipeline group (its sends and receives).
inline constexpr char kPpGroupName[] = "scaleout:pp";

struct PipelineOptions {
  int64_t pp = 1;
  int64_t micro_batches = 1;
  PpSchedule schedule = PpSchedule::k1F1B;
  int64_t chunks = 1;  // model chunks per rank: V of interleaved:V, else 1
  // --pp-split: the repeated blocks of each model chunk (P entries, P x V
  // interleaved), each at least 1, summing to the blocks; empty: balanced
  // (interleaved: equal).
  std::vector<int64_t> split;
  // Collectives on this group sync gradients (once per step), as do those
  // stamped grad_sync.
  std::string dp_group_name;
};

// When each node of the one-rank graph ran in its simulation (engine
// ClassTimeline): by NodeIndex, -1 when it never ran.
struct NodeTimes {
  std::vector<int64_t> start_ns;
  std::vector<int64_t> finish_ns;
};

struct PipelineLayer {
  NodeIndex first = 0;     // its first top-level op
  std::string first_op;    // that op's name
  int64_t forward_ns = 0;  // the recorded batch's, not a micro-batch's
  int64_t backward_ns = 0;
  int64_t parameters = 0;  // parameter storages it reads first
  int64_t parameter_bytes = 0;
  int64_t out_bytes = 0;  // the activation its end sends (whole batch)
};

// A collective of the step, placed on its stage.
struct StageCollective {
  NodeIndex node = 0;
  int64_t stage = 0;
  bool backward = false;
  // Once per step after the stage's last backward; else once per
  // micro-batch at 1/M of its bytes.
  bool per_step = false;
  // The part of its bytes this stage moves: a gradient sync (on the data-
  // parallel group, or stamped grad_sync) runs on every stage, each with its
  // parameters' share of the bytes; 1 otherwise.
  double share = 1.0;
  int64_t chunk = -1;  // the model chunk of a per-micro-batch one
};

// A model chunk: the consecutive layers one rank runs in one pass (1f1b and
// gpipe: a stage; interleaved:V: one of the rank's V).
struct PipelineChunk {
  int64_t stage = 0;  // the pipeline rank holding it
  int64_t index = 0;  // its place among that rank's chunks, 0 .. V - 1
  int64_t first_layer = 0, last_layer = 0;  // inclusive
  // Per micro-batch (1/M of the recorded batch's).
  int64_t forward_ns = 0, backward_ns = 0;
  int64_t send_bytes = 0;  // per micro-batch to the next chunk (0: last)
  // The recorded batch's (the plan divides by M): one pass's stashed
  // activations and its peak, stash included.
  int64_t activation_bytes = 0, transient_peak_bytes = 0;
};

// One pipeline rank (its chunks' sums; interleaved: the first layer of its
// first chunk to the last of its last, not all of them its own).
struct PipelineStage {
  int64_t first_layer = 0, last_layer = 0;  // inclusive
  // Per micro-batch (1/M of the recorded batch's).
  int64_t forward_ns = 0, backward_ns = 0;
  int64_t other_ns = 0;    // once per step: optimizer and the rest
  int64_t send_bytes = 0;  // per micro-batch to the next stage (0: last)
  // Passes whose activations it holds at most at once (micro-batches; with
  // interleaved:V micro-batch chunks).
  int64_t in_flight = 0;
  int64_t persistent_bytes = 0;
  int64_t activation_bytes = 0;      // one micro-batch's stashed activations
  int64_t transient_peak_bytes = 0;  // one pass's peak, not stashed (largest)
  int64_t peak_bytes = 0;
  MemoryByKind peak_parts{};
  int32_t device = kHostDevice;
};

struct PipelinePlan {
  PipelineOptions options;
  int64_t step = -1;  // the trace's step analysed
  // Micro-batches the recorded step ran (gradient accumulation: a forward
  // and its backward each, one optimizer step): the first is analysed and
  // stands for each; 1 when the step is one forward and one backward.
  int64_t recorded_micro_batches = 1;
  std::vector<PipelineLayer> layers;
  RepeatedBlocks blocks;  // the layers' repeated blocks (none: empty)
  std::vector<PipelineChunk> chunks;  // P x V, model order
  std::vector<PipelineStage> stages;
  std::vector<StageCollective> collectives;
  int64_t forward_ns = 0, backward_ns = 0, other_ns = 0;  // whole batch
  // (P - 1) / (V M + P - 1): the bubble of balanced stages without
  // communication as the idle share of the pipeline's span (Narayanan et
  // al. 2021; GPipe's and 1F1B's are the same, V = 1).
  double analytic_bubble = 0;
  // (P - 1) / (V M): the same bubble as Narayanan et al. state it, the idle
  // time over the ideal (compute) time.
  double analytic_bubble_ratio = 0;
  // The same for these stages, t_s = forward + backward of stage s: the
  // span of the schedule's passes on these chunks without communication
  // (each rank's pass order, each pass after its neighbour chunk's), and the
  // stages' idle share of it, 1 - M mean t_s / span ((P-1)/(M+P-1) when
  // every t_s is equal; 1F1B's span is (M - 1) max t_s + sum t_s only when
  // each stage's forward and backward are in proportion).
  double staged_bubble = 0;
  // The slowest stage's t_s over their mean (1: balanced).
  double imbalance = 1;
  std::string note;  // one line for the report: layers, stages, times
};

// Errors (one line, naming what the trace lacks): pp < 2 or M < 1, no step,
// no forward or no backward ops in it, fewer layers than pp; a split or an
// interleaved schedule the repeated blocks do not allow (their counts named);
// interleaved with M not a multiple of P. `lives` are the
// rank's at the layout (memory_at_layout.h, tensor_parallel.h), or empty
// without the memory model; `model` must keep its tensors.
absl::StatusOr<PipelinePlan> PlanPipeline(const NodeModel& model,
                                          const NodeTimes& times,
                                          const std::vector<StorageLife>& lives,
                                          const PipelineOptions& options);

// The layer blocks PlanPipeline finds (pp can be at most that), or its
// refusal of the trace (no step, no forward or backward ops).
absl::StatusOr<int64_t> PipelineLayerCount(const NodeModel& model);

}  // namespace et::scaleout

#endif  // SCALEOUT_PIPELINE_PLAN_H_
