// Finds each ET host op's twin among the Kineto CPU ops. When Kineto carries distinct
// `Record function id`s (PyTorch >= ~2.3) they are looked up directly; otherwise every
// ET thread is paired with the Kineto thread (and, in a multi-iteration trace, the
// iteration) where its op sequence aligns best, by name and order (see
// sequence_aligner.h). The largest ET thread picks first; the other threads prefer the
// iteration that starts at or just after the first one's, so all threads describe the
// same iteration. Deterministic.
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
                       absl::Span<const HostOpView> host_ops, const LinkOptions& options);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_HOST_OP_MATCHER_H_
