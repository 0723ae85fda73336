// The report of a layout sweep (et-sim --sweep): per point the step, its
// compute, exposed communication, collective time per process group and the
// memory verdict, read off that point's Report, and their text and JSON forms.
// Plain data; the sweep itself is run by simulator/layout_sweep.h.
#ifndef SIMULATOR_REPORT_SWEEP_REPORT_H_
#define SIMULATOR_REPORT_SWEEP_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scaleout/parallel_layout.h"
#include "simulator/report/report.h"

namespace et::sim {

// One process group's collective time at one point, per step.
struct SweepGroupTime {
  std::string name;
  int64_t group_size = 0;
  double time_us = 0;
};

// One point of the sweep; times are per step (the report's predicted step,
// and the slowest rank's graph totals divided by the steps).
struct SweepRow {
  int64_t value = 0;  // of the swept dimension
  scaleout::ParallelLayout layout;
  int64_t world = 0;
  double step_us = 0, compute_us = 0, exposed_comm_us = 0;
  // What else the step holds: host gaps and waiting (step - compute - exposed
  // communication, at least 0).
  double other_us = 0;
  std::vector<SweepGroupTime> groups;  // by time, largest first
  // The point's truth, as its own report has it: only the recorded job's
  // point has one (a truth of the same job, machine and scale).
  std::optional<double> measured_us;
  std::optional<double> error_pct;
  // The memory model's peak of the largest rank, the device's capacity (0:
  // unknown) and whether it fits (docs/memory-model.md).
  int64_t peak_bytes = 0, capacity_bytes = 0;
  bool fits = true;
  int64_t peak_rank = -1;  // a rank with that peak (-1: no memory model)
};

struct SweepResult {
  scaleout::Dim dim = scaleout::Dim::kDp;
  std::string trace;            // the input, as given
  std::string recorded_layout;  // "dp=4 (--recorded-layout)"
  std::vector<SweepRow> rows;   // in the order the values were given
  // --search world=N (0: a sweep): the rows are the layouts of N ranks,
  // ranked by predicted step (`value` is the rank, 1 the fastest); the
  // notes say what limited or skipped each dimension, and the layouts whose
  // simulation refused them are listed with the reason.
  int64_t search_world = 0;
  std::vector<std::string> search_notes;
  std::vector<std::pair<std::string, std::string>> search_refused;
};

// A point's name on the chart and the Scale tab: "dp=8" in a sweep, the
// layout ("tp=4,dp=2") in a search.
std::string PointLabel(const SweepResult& result, const SweepRow& row);

// The row of one point: the slowest rank's totals per step and the collective
// rows summed per group.
SweepRow SweepRowOf(const Report& report,
                    const scaleout::ParallelLayout& layout, int64_t value);

// A table aligned like et-sim's others, with a line saying which point has a
// measured truth.
std::string FormatSweepText(const SweepResult& result);
// {"sweep":{"dimension","trace","recorded_layout","note",
// "points":[{"value","world","layout","step_us","measured_us","error_pct",
// "compute_us","exposed_comm_us","other_us","groups":[{"name","group_size",
// "time_us"}],"peak_allocated_bytes","capacity_bytes","fits"}]}}; measured_us
// and error_pct are null without a truth.
std::string FormatSweepJson(const SweepResult& result);

// Said of every sweep: which point is compared with a truth, and why the
// others are not.
std::string SweepTruthNote(const SweepResult& result);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_SWEEP_REPORT_H_
