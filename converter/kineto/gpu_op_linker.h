// GPU work (kernels, memcpys, memsets) of the ET's iteration, each tied to the
// host op that launched it: the GPU event's `correlation` names the runtime
// call that enqueued it; the innermost CPU op around that call on its thread,
// or the nearest enclosing one that has an ET twin, is the launcher. The
// runtime call's `External id` is checked against the enclosing op's and used
// when nesting finds nothing. GPU work without a launcher is kept (an orphan,
// counted by cause). Work launched outside the window of matched host ops
// belongs to other iterations and is left out (counted). So is work launched
// before the trace's first runtime call: torch.profiler drops the host events
// of its warm-up step but keeps that step's kernels that were still queued on
// the GPU when recording began (165 of mlp4096's 870 on the H100).
#ifndef CONVERTER_KINETO_GPU_OP_LINKER_H_
#define CONVERTER_KINETO_GPU_OP_LINKER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/kineto_trace.h"
#include "converter/kineto/link_types.h"

namespace et::kineto {

struct GpuLink {
  std::vector<GpuOp>
      gpu_ops;  // sorted by (device, stream, start_ns, correlation)
  std::vector<int32_t>
      launch_event;  // by gpu op: the runtime call's event index, or -1
  int64_t orphans = 0;
  int64_t orphans_without_launch_record = 0;
  int64_t orphans_with_unmatched_launch = 0;
  int64_t outside_window = 0;
  int64_t before_trace = 0;  // kept, without a launcher (profiler warm-up)
  int64_t external_id_mismatches = 0;
};

// `event_et_id[e]` is the ET id of Kineto event e's twin, 0 when none. GPU work
// whose launch (or own start, when the launch is unknown) lies outside
// [window_start_ns, window_end_ns] is left out.
GpuLink LinkGpuOps(const KinetoTrace& trace, const CpuOpNesting& nesting,
                   const std::vector<uint64_t>& event_et_id,
                   absl::Span<const HostOpView> host_ops,
                   int64_t window_start_ns, int64_t window_end_ns);

// True for host op names that issue a collective: record_param_comms, c10d::*,
// nccl:*, gloo:*.
bool IsCollectiveOpName(absl::string_view name);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_GPU_OP_LINKER_H_
