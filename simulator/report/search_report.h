// The report of a layout search (et-sim --search world=N): the layouts ranked
// by predicted step, each one's memory verdict (NOFIT with the rank and how
// much over the device), the best layout that fits, and what limited each
// dimension; text and JSON. The rows are a SweepResult's (sweep_report.h);
// the search is run by simulator/layout_search.h.
#ifndef SIMULATOR_REPORT_SEARCH_REPORT_H_
#define SIMULATOR_REPORT_SEARCH_REPORT_H_

#include <string>

#include "simulator/report/sweep_report.h"

namespace et::sim {

// The fastest row that fits (or whose memory is unknown); nullptr when none.
const SweepRow* BestFittingRow(const SweepResult& search);

// Why a row does not fit: "rank 3: peak 90.00 GiB, 10.00 GiB over the
// 80.00 GiB device"; "" when it fits or its memory is unknown.
std::string NoFitReason(const SweepRow& row);

std::string FormatSearchText(const SweepResult& search);
// {"search":{"world","trace","recorded_layout","limits":[...],"note",
// "best":LAYOUT|null,"layouts":[{"rank","layout","tp","pp","dp","ep",
// "world","step_us","compute_us","exposed_comm_us","other_us","groups":[...],
// "peak_allocated_bytes","peak_rank","capacity_bytes","fits","over_bytes"}],
// "refused":[{"layout","reason"}]}}
std::string FormatSearchJson(const SweepResult& search);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_SEARCH_REPORT_H_
