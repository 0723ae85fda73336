// converter/kineto/: the Kineto trace (the Chrome-trace JSON torch.profiler
// writes, kineto_trace.h) and its merge into host ops; docs/kineto-linking.md
// and docs/et-convert.md, section "Times".
//
// Merges a Kineto trace of the same run into the parsed host ops before the
// graph is built: host ops get measured start and duration, every
// kernel/memcpy/memset becomes a GPU op (a child of the host op that launched
// it, so that it is launched by that op's node), synchronisation becomes sync
// deps, and ProfilerStep spans become step times. The matching itself is
// converter/kineto's LinkKineto.
#ifndef CONVERTER_KINETO_KINETO_MERGE_H_
#define CONVERTER_KINETO_KINETO_MERGE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "converter/common/host_op.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/kineto_identity.h"
#include "converter/kineto/kineto_trace.h"

namespace et::convert {

struct KinetoMergeStats {
  int64_t host_ops_considered = 0;
  int64_t host_ops_matched = 0;
  int64_t gpu_ops = 0;
  int64_t orphan_gpu_ops = 0;
  int64_t orphans_without_launch_record = 0;
  int64_t orphans_with_unmatched_launch = 0;
  int64_t gpu_ops_outside_window = 0;
  int64_t gpu_ops_before_trace = 0;
  int64_t sync_edges = 0;
  int64_t unresolved_syncs = 0;
  // Every ProfilerStep#N of the trace: its profiled step (to the next step's
  // start; the last to its last GPU op), not the CPU span.
  std::vector<double> step_times_us;
  std::vector<std::string> step_names;
  std::vector<double> step_starts_us;  // each step's start, the ops' clock
  double measured_step_us = -1;    // the step the ET was recorded in, if found
  double unprofiled_step_us = -1;  // the trace's `unprofiled_step_ms`, if any
  double unprofiled_step_after_us = -1;  // `unprofiled_step_after_ms`, if any
  // `unprofiled_step_blocks_ms` in us: the truth's timing blocks; empty absent.
  std::vector<double> unprofiled_step_blocks_us;
  // The trace's `unprofiled_peak_bytes` / `unprofiled_start_bytes`; -1 absent.
  int64_t unprofiled_peak_bytes = -1;
  // The light profiler's cost per op measured at record time; -1 absent.
  int64_t light_profiler_ns_per_op = -1;
  // What the full profiler adds per probe op beyond the light one; -1 absent.
  int64_t probe_full_over_light_ns = -1;
  kineto::RecordedPageFaults page_faults;  // the recorder's counts and cost
  int64_t unprofiled_start_bytes = -1;
  // distributedInfo's rank (-1 absent) and world_size (0 absent).
  int64_t rank = -1;
  int64_t world_size = 0;
  std::string device_name;                // the recording GPU, "" unknown
  int64_t device_compute_capability = 0;  // major * 10 + minor, 0 unknown
  // Median gap between queued ops of a stream (gpu_queued_gap.h); -1 unknown.
  double gpu_queued_gap_us = -1;
  int64_t gpu_queued_pairs = 0;
  // Median gap between consecutive ops nested in one CPU op, the profiler's
  // cost outside an op's span (nested_op_gap.h); -1 unknown.
  double nested_op_gap_us = -1;
  int64_t nested_op_pairs = 0;
  // The profiler's cost inside an op's span (view_op_span.h); -1 unknown.
  double view_op_span_us = -1;
  int64_t view_ops = 0;
  struct ThreadMatch {
    int64_t tid = 0;
    int64_t host_ops = 0;
    int64_t matched = 0;
  };
  std::vector<ThreadMatch> per_thread;
  std::vector<std::string>
      warnings;  // per-thread match fractions below 99%, ...
};

// `et` is what the ET says about its run. A Kineto trace of another run or
// rank (kineto_identity.h) is an error, not a merge: the ranks of a job, and
// two runs of one program, run the same ops, so the wrong trace still matches
// 100%. `preloaded` is kineto_path already parsed, or null to read it; a
// preloaded trace is the one the host ops were built from (Kineto-only and
// nsys imports), so the same-run check is skipped. `nesting`, when not null,
// is the preloaded trace's CPU-op nesting, which the import built already;
// `event_of_id`, when not null, its event of each host op by id.
absl::Status MergeKineto(const std::string& kineto_path,
                         const kineto::KinetoTrace* preloaded,
                         const kineto::CpuOpNesting* nesting,
                         const std::vector<int32_t>* event_of_id,
                         const EtRun& et, StringPool* pool,
                         std::vector<HostOp>* ops, KinetoMergeStats* info);

}  // namespace et::convert

#endif  // CONVERTER_KINETO_KINETO_MERGE_H_
