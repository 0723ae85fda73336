// What every et-sim report must keep, whatever the trace: no busy or exposed
// share above its step, per rank compute + exposed communication + idle within
// the graph's time, each step's parts adding up to it with the exposed
// communication its bound says (step_breakdown.h), and no collective of a group
// larger than one at 0 in a world that holds the group. A report that breaks
// one is a bug in the tools, not a prediction: Simulation says so in the
// report, and the tests run every trace they hold through this check (issue
// 48).
#ifndef SIMULATOR_REPORT_REPORT_CHECKS_H_
#define SIMULATOR_REPORT_REPORT_CHECKS_H_

#include <string>
#include <vector>

#include "simulator/report/report.h"

namespace et::sim {

// One line per broken rule ("rank 0 step 3: host busy 324.790 ms of a 176.569
// ms step"); empty when the report keeps them all.
std::vector<std::string> ReportInconsistencies(const Report& report);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_REPORT_CHECKS_H_
