// Dependencies created by synchronisation calls, from the runtime calls each
// host thread made inside the ET's iteration:
// - cudaStreamWaitEvent: the waiting stream's next GPU op depends on the last
// GPU op
//   the recorded stream had at its cudaEventRecord (GPU -> GPU). Streams come
//   from the matching `cuda_sync` event when Kineto wrote one (2024+); older
//   traces have none, then the record is the thread's last cudaEventRecord and
//   the streams are those of the GPU ops the thread launched before the record
//   and after the wait.
// - cudaStreamSynchronize / cudaDeviceSynchronize / cudaEventSynchronize: the
// first
//   matched host op to start on that thread after the call returned depends on
//   the last GPU op of the stream(s) waited on (GPU -> host).
// HIP spellings are the same calls. A call with nothing to tie is counted, not
// guessed.
#ifndef CONVERTER_KINETO_SYNC_EDGES_H_
#define CONVERTER_KINETO_SYNC_EDGES_H_

#include <cstdint>
#include <vector>

#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/gpu_op_linker.h"
#include "converter/kineto/kineto_trace.h"
#include "converter/kineto/link_types.h"

namespace et::kineto {

// `event_et_id[e]`: ET id of Kineto event e's twin, 0 when none. Only calls
// that start within [window_start_ns, window_end_ns] are considered.
std::vector<SyncEdge> BuildSyncEdges(
    const KinetoTrace& trace, const CpuOpNesting& nesting, const GpuLink& link,
    const std::vector<uint64_t>& event_et_id, int64_t window_start_ns,
    int64_t window_end_ns, int64_t* unresolved);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_SYNC_EDGES_H_
