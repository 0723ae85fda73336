// et-viz --diff BEFORE AFTER --html FILE: the comparison as a page of the
// report's design (base/html_page.h): a Compare tab with the self time side
// by side per device as bars, the op groups that moved most, appeared or
// vanished (sortable), and the communication's change. Every number is
// formatted as FormatDiffText prints it. Pure; the page is a string.
#ifndef VISUALIZER_TRACE_DIFF_PAGE_H_
#define VISUALIZER_TRACE_DIFF_PAGE_H_

#include <string>

#include "visualizer/trace_diff.h"

namespace et::viz {

// `top` limits the op rows (0 = all), as --top does.
std::string TraceDiffPage(const TraceDiff& diff, int top);

}  // namespace et::viz

#endif  // VISUALIZER_TRACE_DIFF_PAGE_H_
