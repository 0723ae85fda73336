// et-viz --report --html FILE: the recorded trace's report as one
// self-contained HTML page, the same design as et-sim's (the shell and charts
// of base/html_page.h and base/svg_chart.h): tabs Overview (the trace's
// totals, busy time per track), Ops (by self time, sortable), Memory (each
// rank's curve and peak, where the trace records tensors) and Distributed
// (communication by type and process group). Every number is formatted as
// TraceReport::ToText prints it. Pure; the page is a string.
#ifndef VISUALIZER_TRACE_REPORT_PAGE_H_
#define VISUALIZER_TRACE_REPORT_PAGE_H_

#include <string>

#include "visualizer/trace_report.h"

namespace et::viz {

// The document; `top` limits the op rows (0 = all), as --top does.
std::string TraceReportPage(const TraceReport& report, int top);

}  // namespace et::viz

#endif  // VISUALIZER_TRACE_REPORT_PAGE_H_
