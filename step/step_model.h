// The step model every tool shares: which nodes belong to which training step
// (ProfilerStep#N), what the trace says one step measured (the profiled step
// and, when recorded, the step of the same program without a profiler), and
// how long each host op and each host gap lasts in the two host-time modes:
//
//   kRecorded    the run as it was recorded, profiler included: host ops and
//                the gaps between them take their recorded time. Compare with
//                the profiled step.
//   kUnprofiled  the real program: the profiler's cost per op and per gap is
//                taken out (HostTimeModel, docs/step-model.md), and the page
//                faults the truth's run paid beyond the recording's are added
//                (PageFaultCorrection). Compare with the unprofiled step.
//                Nodes outside every recorded step (GPU work the profiler's
//                warm-up step left running) are left out.
//
// Built once from a NodeModel; columns by NodeIndex. Immutable; thread-safe
// reads.
#ifndef STEP_STEP_MODEL_H_
#define STEP_STEP_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/node_model.h"
#include "step/host_cost.h"

namespace et {

enum class HostTimeMode : uint8_t { kUnprofiled, kRecorded };

// "unprofiled" / "recorded"; parsing fails with a one-line message.
absl::string_view HostTimeModeName(HostTimeMode mode);
absl::StatusOr<HostTimeMode> ParseHostTimeMode(absl::string_view text);

// What a trace says one step measured, for one host-time mode.
struct MeasuredStep {
  std::optional<double> us;  // mean per step; nullopt: the trace has no truth
  std::string source;  // "unprofiled-run" or "profiled-run"; empty when none
  // The unprofiled step timed again after the recording, when the recorder
  // did (a second truth: the first says how far it can be trusted).
  std::optional<double> after_recording_us;
  // The mean step of each timing block whose median `us` is, when the
  // recorder stored them: how far the truth itself moves.
  std::vector<double> blocks_us;
  // A profiled truth's steps, one per step of the graph in order (the mean
  // is `us`): where a mean's miss comes from. Empty for other truths.
  std::vector<double> steps_us;
  // Why the trace's step is not compared although it has one (a prediction
  // for another job: et-sim --layout, --world); empty otherwise.
  std::string withheld;
};

// The minor page faults the unprofiled run paid a step beyond the steps the
// prediction is read from (the recorded ones, or the light profile's when it
// sets the profiler's cost), at the recording host's measured cost per fault:
// added to the unprofiled step (docs/step-model.md, "Page faults").
struct PageFaultCorrection {
  double unprofiled_per_step = -1;
  double base_per_step = -1;
  std::string base;  // "recorded steps" or "light profile"
  int64_t ns_per_fault = 0;
  int64_t ns_per_step =
      0;  // (unprofiled - base) * ns_per_fault; 0 when unknown
  bool known() const { return ns_per_fault > 0 && base_per_step >= 0; }
};

class StepModel {
 public:
  static StepModel Build(const NodeModel& graph,
                         const HostTimeModel& model = {});

  // Steps the graph holds (distinct ProfilerStep numbers on its nodes), in
  // ascending order; empty when no node carries a step (then the whole graph
  // counts as one step).
  const std::vector<int64_t>& step_ids() const { return step_ids_; }
  int64_t steps() const {
    return step_ids_.empty() ? 1 : static_cast<int64_t>(step_ids_.size());
  }
  // Index into step_ids() of node i's step, or -1.
  int32_t step_index(NodeIndex i) const { return step_index_[i]; }

  // False for nodes that do not run in `mode` (kUnprofiled: outside every
  // step of a graph that has steps).
  bool Runs(NodeIndex i, HostTimeMode mode) const;
  // Nodes that Runs() leaves out in kUnprofiled mode.
  int64_t nodes_outside_steps() const { return nodes_outside_steps_; }

  bool is_host(NodeIndex i) const { return is_host_[i]; }
  // A host op that blocks until a collective completes (`wait_seq`).
  bool is_wait(NodeIndex i) const { return is_wait_[i]; }
  // Host compute nodes: time on their thread, and the time their thread
  // spends before them (since the previous op on it ended).
  int64_t HostDurationNs(NodeIndex i, HostTimeMode mode) const;
  int64_t HostGapNs(NodeIndex i, HostTimeMode mode) const;
  // The part of host op i's recorded gap its thread spent waiting for a host
  // collective it consumes to complete (comm_work_ns; DDP's wait for a bucket
  // has no op of its own), in kRecorded mode; 0 otherwise. A simulator that
  // makes the op wait for that collective itself keeps only the rest.
  int64_t HostCollectiveWaitNs(NodeIndex i, HostTimeMode mode) const {
    return mode == HostTimeMode::kRecorded ? collective_wait_ns_[i] : 0;
  }
  int64_t recorded_duration_ns(NodeIndex i) const { return recorded_ns_[i]; }
  int64_t recorded_start_ns(NodeIndex i) const { return recorded_start_ns_[i]; }
  // What host op i is and which role its thread plays (step/host_cost.h).
  HostOpKind host_kind(NodeIndex i) const { return host_kind_[i]; }
  HostThreadRole thread_role(NodeIndex i) const { return thread_role_[i]; }
  // GPU ops node i launched.
  int32_t launches(NodeIndex i) const { return launches_[i]; }
  // The host node that launched GPU op i, or -1.
  int64_t launcher(NodeIndex i) const { return launcher_[i]; }
  // FLOPs and bytes the node carries (num_ops, tensor_size); a GPU op that
  // carries neither gets its launcher's, shared evenly by its GPU ops.
  double flops(NodeIndex i) const { return flops_[i]; }
  double bytes(NodeIndex i) const { return bytes_[i]; }

  MeasuredStep Measured(HostTimeMode mode) const;
  // Profiled steps the graph holds, in step_ids() order (empty if unknown).
  const std::vector<double>& profiled_step_us() const {
    return profiled_step_us_;
  }

  const HostTimeModel& model() const { return model_; }
  // The profiler's cost per op estimated from this trace (CPU-only traces):
  // with view_op_span_ns() measured, that span plus nested_op_gap_ns(), taken
  // out of each op and the gap before it like a light profile's figure;
  // else the median recorded time of its one-op nodes that compute nothing.
  int64_t profiler_ns_per_op() const { return profiler_ns_per_op_; }
  // The one-op nodes that compute nothing it is the median of (0 when the
  // spans measured it).
  int64_t profiler_samples() const { return profiler_samples_; }
  // The converter's median span of the leaf ops that compute nothing (the
  // profiler's cost inside a span, TraceInfo); 0 when not measured.
  int64_t view_op_span_ns() const { return view_op_span_ns_; }
  bool profiler_cost_from_spans() const { return profiler_cost_from_spans_; }
  // The profiler's cost per op the trace's spans show (view_op_span_ns() +
  // nested_op_gap_ns()) in a CPU-only trace that has both; 0 otherwise. Also
  // a check on a light profile's figure where that rule is in use.
  int64_t spans_ns_per_op() const {
    return !has_gpu_ops_ && view_op_span_ns_ > 0 && nested_op_gap_ns_ > 0
               ? view_op_span_ns_ + nested_op_gap_ns_
               : 0;
  }
  // Host ops (ATen ops the nodes stand for) a step, over the steps that run
  // unprofiled: what a cost per op is multiplied by.
  double host_ops_per_step() const { return host_ops_per_step_; }
  // A CPU-only trace with a light profile: the full profiler's cost per op
  // learned from the two steps; 0 when that rule is not used.
  int64_t full_profiler_ns_per_op() const { return full_profiler_ns_per_op_; }
  // The light profiler's cost per op in that figure: the calibration's,
  // scaled to the model where the calibration measured the full profiler.
  int64_t light_profiler_in_model_ns() const {
    return light_profiler_in_model_ns_;
  }
  // The profiler's cost outside an op's span, measured by the converter as
  // the median gap between ops nested in one op (TraceInfo); taken out of
  // each gap of a CPU-only trace; 0 when not measured.
  int64_t nested_op_gap_ns() const { return nested_op_gap_ns_; }
  bool has_gpu_ops() const { return has_gpu_ops_; }
  // In kUnprofiled mode; known() is false when the trace lacks the counts.
  const PageFaultCorrection& page_faults() const { return page_faults_; }

 private:
  void ReadNodes(const NodeModel& graph);
  void ReadMeasured(const NodeModel& graph);
  void FillGaps(const NodeModel& graph);
  int64_t HostCollectiveCompletionNs(const NodeModel& graph, NodeIndex i) const;
  void LinkLaunchers(const NodeModel& graph);
  void ClassifyHostOps(const NodeModel& graph);
  void FillUnprofiled();
  int64_t ProfilerNsPerOp(int64_t* samples) const;
  void LearnFullProfilerCost();
  void FillUnprofiledLessProfilerCost(int64_t per_op_ns);
  int64_t RecordedSpanNs() const;
  int64_t ScaledByLayout(NodeIndex i, int64_t ns, int64_t floor_ns) const;
  bool RemovedByLayout(NodeIndex i) const;
  void ReadPageFaults(const NodeModel& graph);
  void AddPageFaults();

  HostTimeModel model_;
  std::vector<int64_t> step_ids_;
  std::vector<int32_t> step_index_;
  std::vector<uint8_t> is_host_;
  std::vector<uint8_t> is_wait_;
  std::vector<uint32_t> host_ops_;
  std::vector<int32_t> launches_;
  std::vector<int64_t> launcher_;
  std::vector<double> flops_, bytes_;
  std::vector<HostOpKind> host_kind_;
  std::vector<HostThreadRole> thread_role_;
  std::vector<uint8_t> computes_;  // host op with FLOPs or bytes
  bool has_gpu_ops_ = false;
  int64_t profiler_ns_per_op_ = 0;
  int64_t profiler_samples_ = 0;
  int64_t full_profiler_ns_per_op_ = 0;     // LearnFullProfilerCost
  int64_t light_profiler_in_model_ns_ = 0;  // its light profiler's share
  int64_t nested_op_gap_ns_ = 0;
  int64_t view_op_span_ns_ = 0;
  bool profiler_cost_from_spans_ = false;
  double host_ops_per_step_ = 0;
  std::vector<int64_t> tid_;
  std::vector<int64_t> recorded_start_ns_;  // -1 unknown
  std::vector<int64_t> recorded_ns_;
  // The recorded span, which start times and gaps are relative to: unlike
  // recorded_ns_, not scaled by a synthesized layout.
  std::vector<int64_t> span_ns_;
  std::vector<int64_t> collective_wait_ns_;  // see HostCollectiveWaitNs
  std::vector<int64_t> recorded_gap_ns_;
  std::vector<int64_t> unprofiled_ns_;
  std::vector<int64_t> unprofiled_gap_ns_;
  int64_t nodes_outside_steps_ = 0;
  std::vector<double> profiled_step_us_;
  std::optional<double> unprofiled_step_us_;
  std::optional<double> unprofiled_step_after_us_;
  std::vector<double> unprofiled_step_blocks_us_;
  PageFaultCorrection page_faults_;
  double profiled_page_faults_per_step_ = -1;
};

// The host costs et-convert stored in `graph`'s metadata (learned from the
// recording's light profile, et-convert --host-profile) with `model`'s
// host_speed, else `model` (the documented defaults). et-sim's
// --host-profile takes precedence over both.
HostTimeModel StoredHostCostsOr(const NodeModel& graph,
                                const HostTimeModel& model);

// N of a step marker's name: "ProfilerStep#N" (torch.profiler's schedule) or
// "## step_N ##" (a record_function range around a training step, as in
// examples/record_trace.py for PyTorch 1.13); -1 for any other name.
int64_t StepNumberOfName(absl::string_view name);

}  // namespace et

#endif  // STEP_STEP_MODEL_H_
