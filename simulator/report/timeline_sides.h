// One simulated rank's timeline sorted into what the reports measure: host
// ops and the gaps the engine charges before them, GPU kernels, copies and
// sets, and communication from its issue (waiting for the other members is
// the rank's communication time too); and the communication no compute hides
// (exposed, by step/step_bound.h's rule: where the GPU is idle when the trace
// has GPU ops, else where every host thread is). The one sorting step_busy,
// step_breakdown and the per-rank table read, so their figures agree.
#ifndef SIMULATOR_REPORT_TIMELINE_SIDES_H_
#define SIMULATOR_REPORT_TIMELINE_SIDES_H_

#include <vector>

#include "simulator/engine/engine.h"
#include "simulator/engine/rank_program.h"
#include "simulator/report/interval_set.h"

namespace et::sim {

// Each set sorted and disjoint (Merge), over every node that ran.
struct TimelineSides {
  std::vector<Interval> host_ops, host_gaps, kernel, memcpy, memset, comm;
  std::vector<Interval> host;          // host_ops with host_gaps
  std::vector<Interval> gpu;           // kernel, memcpy and memset
  std::vector<Interval> exposed_comm;  // comm less the computing side
};

TimelineSides SortTimeline(const RankProgram& program,
                           const ClassTimeline& timeline);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_TIMELINE_SIDES_H_
