// The plain structs that connect the converter with the Kineto linker. The
// converter describes its host ops as HostOpView records (views into strings it
// owns) and gets a LinkResult back: measured host timings, GPU ops with their
// launching host op, sync edges and ProfilerStep spans. Nothing here depends on
// the converter's own types, so either side can change its internals freely.
// All times are integer nanoseconds on the Kineto clock (microsecond `ts`
// values times 1000, fractional digits kept exactly).
#ifndef CONVERTER_KINETO_LINK_TYPES_H_
#define CONVERTER_KINETO_LINK_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace et::kineto {

// One host op of the ET, as the converter sees it. `name` must outlive
// LinkKineto().
struct HostOpView {
  uint64_t et_id = 0;
  uint64_t parent_et_id = 0;  // 0 = none
  absl::string_view name;
  int64_t tid =
      0;  // the ET's thread id (ET 1.0.x: small 1, 2, ...; newer: OS tid)
  int64_t rf_id = -1;  // record-function id; -1 when the ET has none
  int64_t order =
      0;  // position in the thread's start order: ET rf_id or id order
};

// Measured timing of a host op that has a Kineto twin.
struct HostTiming {
  uint64_t et_id = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  // dur_ns minus the durations of the op's direct Kineto CPU-op children (self
  // time).
  int64_t exclusive_dur_ns = 0;
};

// A kernel, memcpy or memset that ran on a GPU stream inside the ET's
// iteration.
struct GpuOp {
  std::string name;
  std::string category;  // "kernel", "gpu_memcpy" or "gpu_memset"
  int64_t device = -1;
  int64_t stream = -1;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t launch_ns =
      -1;  // start of the runtime call that launched it; -1 unknown
  uint64_t launcher_et_id =
      0;  // innermost matched host op around the launch; 0 = orphan
  int64_t correlation = -1;
  std::vector<int64_t> grid;   // empty when absent
  std::vector<int64_t> block;  // empty when absent
  int64_t bytes = -1;          // memcpy/memset size from args; -1 absent
  bool is_nccl =
      false;  // ncclKernel_* / ncclDevKernel_* (RCCL uses the same names)
  std::string pg_name;  // args "Process Group Name" when present
  // For NCCL kernels: the innermost host op at or above the launcher whose name
  // is a collective (record_param_comms, c10d::*, nccl:*, gloo:*); 0 = none
  // found.
  uint64_t collective_et_id = 0;
};

// A dependency that synchronisation created. from_gpu_op/to_gpu_op index
// LinkResult::gpu_ops.
struct SyncEdge {
  enum class Kind {
    kGpuToGpu,   // to_gpu_op's stream waited for from_gpu_op
                 // (cudaStreamWaitEvent)
    kGpuToHost,  // the host op to_host_et_id started only after from_gpu_op
                 // finished
  };
  Kind kind = Kind::kGpuToGpu;
  size_t from_gpu_op = 0;
  size_t to_gpu_op = 0;        // kGpuToGpu only
  uint64_t to_host_et_id = 0;  // kGpuToHost only
  std::string reason;          // the runtime call: "cudaStreamWaitEvent", ...
};

// A `ProfilerStep#N` annotation: the measured time of one training step.
struct StepSpan {
  std::string name;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;  // the CPU span of the ProfilerStep annotation
  // The profiled step: to the next step's start, or for the last step to the
  // end of the last GPU op launched inside it (GPU-bound steps run past their
  // CPU span), whichever is later.
  int64_t period_ns = 0;
};

// How well one ET thread lined up with its Kineto thread.
struct ThreadMatchStats {
  int64_t tid = 0;          // ET thread id
  int64_t kineto_tid = -1;  // the Kineto thread it was paired with; -1 none
  int64_t host_ops = 0;     // ops of this thread that could have a twin
  int64_t matched = 0;      // ops that got one
  double matched_fraction() const {
    return host_ops == 0 ? 1.0 : static_cast<double>(matched) / host_ops;
  }
};

class CpuOpNesting;

struct LinkOptions {
  // The trace's CPU-op nesting when the caller has built it (the Kineto-only
  // import nests the same trace first); null: LinkKineto builds it.
  const CpuOpNesting* nesting = nullptr;
  // Each host op's Kineto event, by host-op id (-1: none), when the host ops
  // were made from the trace itself (Kineto-only and nsys imports): the twins
  // are known, so nothing is aligned (aligning 30,000 one-op threads against
  // each other took minutes and 7 GB). Null: match by id or alignment.
  const std::vector<int32_t>* event_of_id = nullptr;
  // Names starting with this prefix are not expected in Kineto (ET root nodes)
  // and are left out of the per-thread statistics.
  std::string et_root_prefix = "[pytorch|profiler|execution_";
  // How far the aligner looks ahead on either side to resynchronise after a
  // mismatch.
  int lookahead = 32;
  // How many candidate iteration starts are scored per (ET thread, Kineto
  // thread) pair.
  int max_candidates = 128;
};

struct LinkResult {
  std::vector<HostTiming>
      timings;  // one per matched host op, in host_ops order
  std::vector<GpuOp>
      gpu_ops;  // sorted by (device, stream, start_ns): stream order
  std::vector<SyncEdge> sync_edges;
  std::vector<StepSpan>
      steps;              // all ProfilerStep#N spans of the trace, by start
  int matched_step = -1;  // index in `steps` overlapping the ET's ops most
  std::vector<ThreadMatchStats> per_thread;
  bool used_record_function_id =
      false;  // matched by `Record function id` == rf_id
  int64_t host_ops_considered = 0;
  int64_t host_ops_matched = 0;
  int64_t orphan_gpu_ops = 0;  // gpu_ops with launcher_et_id == 0
  // The orphans by cause: no runtime call in the trace carries the GPU op's
  // correlation id, or the call is there but no matched host op encloses it.
  int64_t orphans_without_launch_record = 0;
  int64_t orphans_with_unmatched_launch = 0;
  int64_t gpu_ops_outside_window = 0;  // GPU work of other iterations, left out
  // GPU work launched before the profiler recorded host events (the warm-up
  // step's kernels, still queued when recording began), left out: its
  // correlation id is below every runtime call's.
  int64_t gpu_ops_before_trace = 0;
  int64_t external_id_mismatches =
      0;                         // launcher found by nesting disagrees with it
  int64_t unresolved_syncs = 0;  // sync calls with no GPU op or host op to tie
  int64_t window_start_ns = 0;   // span of the matched Kineto ops
  int64_t window_end_ns = 0;
  // Median gap between consecutive ops nested in one CPU op
  // (nested_op_gap.h) and the pairs it is the median of; -1 when too few.
  int64_t nested_op_gap_ns = -1;
  int64_t nested_op_pairs = 0;
  // Median span of the leaf ops that compute nothing (view_op_span.h) and
  // how many; -1 when too few.
  int64_t view_op_span_ns = -1;
  int64_t view_ops = 0;
};

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_LINK_TYPES_H_
