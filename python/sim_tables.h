// The simulated run as a table for Python: every op the engine ran, per rank
// class (its first rank stands for the identical others), with the resource
// it ran on and its issue, start and end times: what et-sim --timeline
// writes (simulator/report/report.h WriteTimeline), as columns.
#ifndef PYTHON_SIM_TABLES_H_
#define PYTHON_SIM_TABLES_H_

#include "python/table.h"
#include "simulator/simulation.h"

namespace et::python {

// rank (the class's first), class_ranks (how many it stands for), node id,
// name, category (compute or comm), resource, host (a CPU thread), issue_us,
// start_us, end_us, duration_us, wait_us (a collective's wait for its
// members: start - issue), bytes (communication). Ops that never ran and
// no-ops are left out, as in the timeline file.
Table TimelineTable(const sim::Simulation& simulation);

}  // namespace et::python

#endif  // PYTHON_SIM_TABLES_H_
