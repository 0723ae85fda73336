// et-sim --sweep dp=1,2,4,... (or tp=, pp=): one simulation per value of one
// layout dimension (the other dimensions as --layout gives them, else as
// recorded), each point's row read off its report
// (simulator/report/sweep_report.h). A point is compared with the trace's
// measured step only when it is the recorded job; the others are predictions
// for jobs that were not measured.
#ifndef SIMULATOR_LAYOUT_SWEEP_H_
#define SIMULATOR_LAYOUT_SWEEP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scaleout/parallel_layout.h"
#include "simulator/report/sweep_report.h"
#include "simulator/simulation.h"

namespace et::sim {

// The flag-level checks RunLayoutSweep starts with (usage errors): ep (dp,
// tp and pp sweep; tp and pp are synthesized), a value given twice,
// `base.layout` setting the swept dimension.
absl::Status CheckLayoutSweep(const SimOptions& base,
                              const scaleout::LayoutSweep& sweep);

// Runs `sweep` on `input` (one rank's trace) with `base` for everything else.
// `base.layout`, if set, gives the other dimensions and must leave the swept
// one at 1. Errors are one line: ep, a value given twice, a trace
// the layout does not fit (the first failing point's error, naming it).
absl::StatusOr<SweepResult> RunLayoutSweep(const SimInput& input,
                                           const SimOptions& base,
                                           const scaleout::LayoutSweep& sweep);

}  // namespace et::sim

#endif  // SIMULATOR_LAYOUT_SWEEP_H_
