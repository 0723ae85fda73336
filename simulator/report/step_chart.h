// The chart of a sweep (et-sim --sweep ... --chart FILE.svg): one stacked bar
// per point, compute, exposed communication and the rest of the step, against
// the swept value, with a ms axis, a legend and the trace in the title. Plain
// SVG 1.1 in one file: no scripts, no fonts or styles fetched from anywhere.
#ifndef SIMULATOR_REPORT_STEP_CHART_H_
#define SIMULATOR_REPORT_STEP_CHART_H_

#include <string>

#include "absl/status/status.h"
#include "simulator/report/sweep_report.h"

namespace et::sim {

// The SVG document.
std::string StepChartSvg(const SweepResult& result);

// Writes StepChartSvg(result) to `path` atomically (temp file + rename).
absl::Status WriteStepChart(const SweepResult& result, const std::string& path);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_STEP_CHART_H_
