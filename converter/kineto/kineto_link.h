// The linker's entry point: host ops of one ET + the Kineto trace of the same
// run -> LinkResult (host timings, GPU ops with launchers, sync edges,
// ProfilerStep spans, match statistics). See docs/kineto-linking.md for the
// policies. Pure function of its inputs; deterministic.
#ifndef CONVERTER_KINETO_KINETO_LINK_H_
#define CONVERTER_KINETO_KINETO_LINK_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "converter/kineto/kineto_trace.h"
#include "converter/kineto/link_types.h"

namespace et::kineto {

// Fails only on inconsistent input (duplicate et_ids); a poor match is reported
// in the result's statistics, not as an error.
absl::StatusOr<LinkResult> LinkKineto(const KinetoTrace& trace,
                                      absl::Span<const HostOpView> host_ops,
                                      const LinkOptions& options);

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_KINETO_LINK_H_
