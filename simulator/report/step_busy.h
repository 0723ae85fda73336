// Per step, the busy time of each side of one simulated rank: the host's
// busiest thread (ops and the gaps the engine charges before them), the GPU
// streams' kernels together, and the communication no compute hides, each
// within the step's window on the timeline (the previous step's end to this
// step's end). From the finished timeline; nothing is re-simulated. The rule
// that turns them into a side is step/step_bound.h's.
#ifndef SIMULATOR_REPORT_STEP_BUSY_H_
#define SIMULATOR_REPORT_STEP_BUSY_H_

#include <cstdint>
#include <vector>

#include "simulator/engine/engine.h"
#include "simulator/engine/rank_program.h"
#include "step/step_bound.h"

namespace et::sim {

// `step_end_ns[k]`: when step k's last node finished (a running maximum is
// taken, as for the step times). One StepBound per step.
std::vector<StepBound> StepBounds(const RankProgram& program,
                                  const ClassTimeline& timeline,
                                  const std::vector<int64_t>& step_end_ns);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_STEP_BUSY_H_
