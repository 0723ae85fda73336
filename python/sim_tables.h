// The simulated run as tables for Python: every op the engine ran, per rank
// class (its first rank stands for the identical others), with the resource
// it ran on and its issue, start and end times: what et-sim --timeline
// writes (simulator/report/report.h WriteTimeline), as columns; and the
// report's long tables as columns, not as JSON to parse.
#ifndef PYTHON_SIM_TABLES_H_
#define PYTHON_SIM_TABLES_H_

#include "python/table.h"
#include "simulator/report/report.h"
#include "simulator/simulation.h"

namespace et::python {

// rank (the class's first), class_ranks (how many it stands for), node id,
// name, category (compute or comm), kind (the node model's: host, kernel,
// gemm, collective, ...), resource, host (a CPU thread), issue_us,
// start_us, end_us, duration_us, wait_us (a collective's wait for its
// members: start - issue), bytes (communication). Ops that never ran and
// no-ops are left out, as in the timeline file.
Table TimelineTable(const sim::Simulation& simulation);

// The memory model's curve of each rank class (its first rank standing for
// the others), on the device its peak is about: one row per node in node
// order (the order the model walks, the order the ops started when
// recorded) with the node's simulated start_us and end_us (NaN: not
// simulated), the bytes allocated during it (allocated_bytes, whose largest
// is the reported peak) and those bytes by the model's kinds
// (<kind>_bytes). Empty where no peak was predicted.
Table MemoryTimelineTable(const sim::Simulation& simulation);

// The report's three tables that grow with the graph, as columns named as
// et-sim --json names their fields (FormatReportJson): ops (name, calls,
// total_ns, share), collectives (type, group, group_size, bytes, calls,
// total_ns, wait_ns, share, synthesized) and the critical path (node, name,
// start_ns, duration_ns), in the report's order.
Table OpsTable(const sim::Report& report);
Table CollectivesTable(const sim::Report& report);
Table CriticalPathTable(const sim::Report& report);

}  // namespace et::python

#endif  // PYTHON_SIM_TABLES_H_
