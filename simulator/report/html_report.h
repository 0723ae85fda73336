// et-sim's report as one self-contained HTML page (et-sim --html FILE): tabs
// Overview (the predicted step against its truth, the bound side, each
// step's time by part, the critical path, the notes and recommendations that
// name the figure they rest on), Ops (the top ops and GPU kernels, sortable),
// Timeline (the simulated run, sampled: simulator/report/sampled_timeline.h),
// Memory (each rank's curve, the peak and its parts against capacity),
// Distributed (per-rank compute, exposed communication and idle; the
// collectives by group), with --compare a Compare tab (the run against
// another: report_compare.h) and, for a sweep, Scale. Every number is formatted
// from the same Report the text prints, with the text's formats, so the page
// and the text agree. The page shell is base/html_page.h.
#ifndef SIMULATOR_REPORT_HTML_REPORT_H_
#define SIMULATOR_REPORT_HTML_REPORT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "simulator/engine/engine.h"
#include "simulator/report/report.h"
#include "simulator/report/report_compare.h"
#include "simulator/report/sweep_report.h"

namespace et::sim {

// What a page is made from. A run's page has `report` (and `classes` with
// `result` for its timeline); a sweep's page has `sweep` alone.
struct HtmlReportInput {
  std::string trace;  // the input, as given: the page's title
  const Report* report = nullptr;
  const std::vector<RankClass>* classes = nullptr;
  const SimResult* result = nullptr;
  const SweepResult* sweep = nullptr;
  // --compare: the run against another; adds the Compare tab.
  const ReportComparison* comparison = nullptr;
  std::string timeline_path;  // --timeline's file, named on the Timeline tab
  size_t max_rows = 200;      // rows per table (the page sorts; text: --top)
};

// The document.
std::string HtmlReportPage(const HtmlReportInput& input);

// Writes HtmlReportPage(input) to `path` atomically (temp file + rename).
absl::Status WriteHtmlReport(const HtmlReportInput& input,
                             const std::string& path);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_HTML_REPORT_H_
