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
// - Stages minimize the slowest stage's forward + backward time.
// - A boundary's activation: the non-persistent storages forward ops before
//   the cut write and forward ops after it read, from the recorded tensors.
// - Each micro-batch runs 1/M of the recorded batch: its compute time,
//   activation bytes and boundary bytes are 1/M of the recorded ones.
// - Memory per stage: its persistent storages (parameters, gradients,
//   optimizer state by their parameter, workspaces on every stage), plus one
//   micro-batch's transient peak, plus the activations the other in-flight
//   micro-batches keep (1F1B: min(M, P - s) in flight on stage s; GPipe: M).
#ifndef SCALEOUT_PIPELINE_PLAN_H_
#define SCALEOUT_PIPELINE_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/node_model.h"
#include "step/storage_lives.h"

namespace et::scaleout {

// The pg_name of the synthesized pipeline group (its sends and receives).
inline constexpr char kPpGroupName[] = "scaleout:pp";

enum class PpSchedule { k1F1B, kGpipe };
// "1f1b" / "gpipe"; parsing errors are one line.
absl::string_view PpScheduleName(PpSchedule schedule);
absl::StatusOr<PpSchedule> ParsePpSchedule(absl::string_view text);

struct PipelineOptions {
  int64_t pp = 1;
  int64_t micro_batches = 1;
  PpSchedule schedule = PpSchedule::k1F1B;
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
};

struct PipelineStage {
  int64_t first_layer = 0, last_layer = 0;  // inclusive
  // Per micro-batch (1/M of the recorded batch's).
  int64_t forward_ns = 0, backward_ns = 0;
  int64_t other_ns = 0;    // once per step: optimizer and the rest
  int64_t send_bytes = 0;  // per micro-batch to the next stage (0: last)
  int64_t in_flight = 0;   // micro-batches whose activations it holds
  int64_t persistent_bytes = 0;
  int64_t activation_bytes = 0;      // one micro-batch's stashed activations
  int64_t transient_peak_bytes = 0;  // one micro-batch's peak, not stashed
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
  std::vector<PipelineStage> stages;
  std::vector<StageCollective> collectives;
  int64_t forward_ns = 0, backward_ns = 0, other_ns = 0;  // whole batch
  // (P - 1) / (M + P - 1): the bubble of balanced stages without
  // communication (Narayanan et al. 2021; GPipe's and 1F1B's are the same).
  double analytic_bubble = 0;
  // The same for these stages, t_s = forward + backward of stage s: the
  // pipeline spans (M - 1) max t_s + sum t_s, and the stages' idle share of
  // it is 1 - M mean t_s / span ((P-1)/(M+P-1) when every t_s is equal).
  double staged_bubble = 0;
  // The slowest stage's t_s over their mean (1: balanced).
  double imbalance = 1;
  std::string note;  // one line for the report: layers, stages, times
};

// Errors (one line, naming what the trace lacks): pp < 2 or M < 1, no step,
// no forward or no backward ops in it, fewer layers than pp. `lives` are the
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
