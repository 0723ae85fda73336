// Finds each ET host op's twin among the Kineto CPU ops. When Kineto carries
// distinct `Record function id`s (PyTorch >= ~2.3) they are looked up directly.
// Otherwise each ET thread is aligned by name and order (sequence_aligner.h)
// with every Kineto thread, from every place its opening ops occur (one per
// iteration in a multi-iteration trace). The thread that starts first in ET
// order is placed first, at each of its near-best placements in turn; every
// other thread then takes the near-best placement that agrees with the ET's
// global order (rf_id / node id) and sits closest in time. The assignment
// matching the most ops wins, the most compact one on near-ties. Leftover ET
// ops may then claim a same-named Kineto op on another thread inside the
// matched window (gloo collectives run on worker threads). Deterministic.
#ifndef CONVERTER_KINETO_HOST_OP_MATCHER_H_
#define CONVERTER_KINETO_HOST_OP_MATCHER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/kineto_trace.h"
#include "converter/kineto/link_types.h"

namespace et::kineto {

struct HostMatch {
  std::vector<int32_t> twin;  // by host op index: Kineto event index, or -1
  std::vector<uint8_t> considered;  // by host op index: 0 for ET root nodes
  std::vector<ThreadMatchStats> per_thread;  // by ET tid, ascending
  bool used_record_function_id = false;
};

HostMatch MatchHostOps(const KinetoTrace& trace, const CpuOpNesting& nesting,
                       absl::Span<const HostOpView> host_ops,
                       const LinkOptions& options);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_HOST_OP_MATCHER_H_
