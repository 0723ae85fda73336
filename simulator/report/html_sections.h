// The tabs of et-sim's HTML report (html_report.h), each the HTML body of
// one tab made from the Report the text prints, with the text's number
// formats. Internal to simulator/report.
#ifndef SIMULATOR_REPORT_HTML_SECTIONS_H_
#define SIMULATOR_REPORT_HTML_SECTIONS_H_

#include <cstddef>
#include <string>

#include "simulator/report/report.h"
#include "simulator/report/report_compare.h"
#include "simulator/report/sweep_report.h"

namespace et::sim {

// Each step part's colour (StepPart order), on the Overview and Compare.
inline constexpr const char* kStepPartColors[kStepParts] = {
    "#59a14f", "#8cd17d", "#b6992d", "#e15759",
    "#4e79a7", "#a0cbe8", "#bab0ac"};

// Overview: the step against its truth, the bound side, the per-step parts,
// the critical path, notes and recommendations (html_overview.cc).
std::string OverviewSection(const Report& report);
// What the numbers say to change, each with the figure it rests on.
std::string RecommendationsHtml(const Report& report);

// Ops, Memory, Distributed (html_tabs.cc); `max_rows` per table.
std::string OpsSection(const Report& report, size_t max_rows);
std::string MemorySection(const Report& report);
std::string DistributedSection(const Report& report, size_t max_rows);

// Compare: two runs' steps, parts, op groups and collectives side by side
// (html_compare.cc); `max_rows` op rows.
std::string CompareSection(const ReportComparison& comparison, size_t max_rows);

// Scale: the sweep's chart and table; and a sweep page's overview
// (html_scale.cc).
std::string ScaleSection(const SweepResult& sweep);
std::string SweepOverviewSection(const SweepResult& sweep);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_HTML_SECTIONS_H_
