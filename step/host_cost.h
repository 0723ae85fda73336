// What a host op is, for the cost of running it without a profiler: the one
// place that decodes a host op's kind (dispatch-only, kernel-launching,
// autograd engine, optimizer foreach) and its thread's role (Python or the
// autograd engine), used both on a .et graph (step/step_model) and on a light
// Kineto trace (step/host_profile), so the two cannot disagree. Also the
// per-kind costs themselves (HostTimeModel) and where they came from.
// docs/step-model.md has the evidence behind every default.
#ifndef STEP_HOST_COST_H_
#define STEP_HOST_COST_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/attributes.h"

namespace et {

// What a host op does, for its unprofiled cost.
enum class HostOpKind : uint8_t {
  kDispatch,   // launches nothing: views, empty, detach, CPU scalars
  kLaunch,     // a forward op that launches kernels, copies or sets
  kAutograd,   // an op the autograd engine runs on its backward thread
  kOptimizer,  // an optimizer's foreach op or step (`aten::_foreach_*`)
};
inline constexpr int kHostOpKinds = 4;
// "dispatch", "launch", "autograd", "optimizer".
absl::string_view HostOpKindName(HostOpKind kind);

// Which code runs between a thread's ops: Python (module code between
// calls) or the autograd engine's C++ loop.
enum class HostThreadRole : uint8_t { kPython, kAutograd };
inline constexpr int kHostThreadRoles = 2;
absl::string_view HostThreadRoleName(HostThreadRole role);

// True for the names only the autograd engine's thread records:
// "autograd::engine::evaluate_function: ..." and autograd nodes ("MmBackward0",
// "AddBackward1"). A thread holding one is the backward thread.
bool IsAutogradEngineName(absl::string_view name);

// True for an ATen op that computes nothing: it returns a view or an alias of
// its input, or a tensor not yet written (`aten::empty`). Unprofiled it costs
// its dispatch (a light profile's `as_strided` spans 0.3 us), so where it
// nests no op its recorded span is the profiler's (docs/step-model.md).
bool ComputesNothing(absl::string_view name);

// The kind of a host op named `name` on a thread of `role` that launched
// `launches` GPU ops.
HostOpKind ClassifyHostOp(absl::string_view name, HostThreadRole role,
                          int64_t launches);

// The light profiler's own cost per recorded op (RecordFunction callbacks and
// Kineto's event), and CUPTI's per launch call: what a light profile's times
// hold beyond the program's (docs/step-model.md: microbenchmark and
// documentation, not the truths).
inline constexpr int64_t kLightProfilerNsPerOp = 3050;
inline constexpr int64_t kCuptiNsPerLaunch = 2300;

// The cost of host work without a profiler. The defaults are documented
// values (docs/step-model.md: the Kineto-only H100 traces' medians); a light
// profile (--host-profile) or the profiled trace itself replace them.
struct HostTimeModel {
  // Per ATen op (or record_function range) the node stands for, by kind.
  // Defaults: one documented point for every kind (docs/step-model.md: the
  // light traces' median leaf op). The per-kind medians of the five shared
  // light profiles were tried as defaults and are worse (gpt2 +37%).
  std::array<int64_t, kHostOpKinds> op_ns = {1500, 1500, 1500, 1500};
  // One kernel / memcpy / memset launch on top of the launching op's cost.
  int64_t launch_ns = 4000;
  // Time between two consecutive ops of a thread, by the thread's role;
  // longer recorded gaps are profiler bookkeeping.
  std::array<int64_t, kHostThreadRoles> gap_ns = {10000, 10000};
  // Where the numbers came from, printed in the report.
  std::string source = "documented defaults";
  // The light profile's own step (its median ProfilerStep) and cpu_ops per
  // step; 0 when not learned. A CPU-only trace with them learns the full
  // profiler's cost per op from the two recordings of one program
  // (StepModel, docs/step-model.md "The CPU corpus").
  int64_t light_step_ns = 0;
  double light_ops_per_step = 0;
  // What the light profiler adds per op: measured at record time
  // (profiler_calibration) where the recording has it.
  int64_t light_profiler_ns_per_op = kLightProfilerNsPerOp;
  std::string light_profiler_source = "documented, H100 host";
  // What the full profiler adds per op beyond the light one in the same
  // calibration loop; 0 unknown. With it, the light profiler's probe cost is
  // scaled by how much more an op in the model pays than a probe
  // (docs/step-model.md, "The CPU corpus").
  int64_t probe_full_over_light_ns = 0;
  // Minor page faults a light step paid; -1 unknown (docs/step-model.md,
  // "Page faults").
  double light_page_faults_per_step = -1;
  // The host this prediction is for runs this many times faster than the
  // recorded one (--host-speed): host ops and gaps divide by it.
  double host_speed = 1.0;

  int64_t OpNs(HostOpKind kind) const { return op_ns[static_cast<int>(kind)]; }
  int64_t GapNs(HostThreadRole role) const {
    return gap_ns[static_cast<int>(role)];
  }
};

// A HostTimeModel's costs in a graph's metadata (attr::kHostCost*), written
// by et-convert --host-profile. Reading gives nullopt when they are absent or
// malformed (a list of the wrong length, a negative cost); --host-speed is
// not stored (it is a what-if of the reader's).
void SetHostTimeModel(const HostTimeModel& model, AttrList* attrs);
std::optional<HostTimeModel> GetHostTimeModel(const AttrList& attrs);

}  // namespace et

#endif  // STEP_HOST_COST_H_
