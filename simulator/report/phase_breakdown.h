// The slowest rank's simulated compute by the part of the training iteration
// it serves: forward (and anything unstamped: data loading, the loss),
// backward, gradient accumulation, optimizer (model/NodeRole, from
// et-convert's stamps). HTA and the profiler's TensorBoard plugin give users
// this split; a GPU op counts for the phase of the host op that launched it.
#ifndef SIMULATOR_REPORT_PHASE_BREAKDOWN_H_
#define SIMULATOR_REPORT_PHASE_BREAKDOWN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "simulator/engine/engine.h"
#include "simulator/engine/rank_program.h"

namespace et::sim {

struct PhaseRow {
  std::string phase;  // "forward and other", "backward", ...
  int64_t ops = 0;
  int64_t total_ns = 0;  // compute time, host and GPU ops alike
  double share = 0;      // of all compute time
};

// Empty when the trace stamps no role on any op (nothing but "other").
std::vector<PhaseRow> PhaseBreakdown(const RankProgram& program,
                                     const ClassTimeline& timeline);

// "compute by phase: forward and other 12.3 ms (41%), backward ..." or "".
std::string FormatPhases(const std::vector<PhaseRow>& rows);
nlohmann::json PhasesJson(const std::vector<PhaseRow>& rows);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_PHASE_BREAKDOWN_H_
