// The per-step report both et-sim and et-replay print and write: per rank the
// time of each step of the graph (predicted or replayed), its mean, the
// measured step it is compared with and where that comes from, and the error;
// overall the slowest rank's mean against the ranks' mean measured step. The
// `--json` object of both tools is ToJson()'s (docs/step-model.md). Plain data.
#ifndef STEP_STEP_REPORT_H_
#define STEP_STEP_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "step/step_bound.h"
#include "step/step_model.h"

namespace et {

struct RankSteps {
  std::vector<int64_t> ranks;   // ranks with these results (a symmetry class)
  std::vector<double> step_us;  // each step of the graph, in order
  double mean_us = 0;           // time to the end of the last step / steps
  MeasuredStep measured;
  std::optional<double> error_pct;
  // Per step, which side bounds it on the tool's timeline; empty when the
  // tool does not say (et-replay).
  std::vector<StepBound> bounds;
};

struct StepReport {
  int64_t steps = 1;
  HostTimeMode host_time = HostTimeMode::kUnprofiled;
  double predicted_us = 0;            // the slowest rank's mean
  std::optional<double> measured_us;  // mean over ranks with a truth
  std::string measured_source;        // "" when none
  std::optional<double> error_pct;
  // The truth timed again after the recording (mean over the ranks that have
  // it), and the error against it.
  std::optional<double> measured_after_us;
  std::optional<double> error_after_pct;
  // The fastest and slowest timing block behind the truth (over the ranks
  // that have them): how far the truth itself moves.
  std::optional<double> measured_fastest_block_us;
  std::optional<double> measured_slowest_block_us;
  std::vector<RankSteps> ranks;
  std::vector<std::string> notes;  // what was left out, missing truths
  // The slowest rank's steps together (MeanBound), when its row has bounds.
  std::optional<StepBound> bound;
};

// Per-step times from step end times: `step_end_ns[k]` is when the last node
// of step k finished (a running maximum is taken, since pipelined steps can
// overlap).
RankSteps MakeRankSteps(std::vector<int64_t> ranks,
                        const std::vector<int64_t>& step_end_ns,
                        MeasuredStep measured);

// Overall figures and notes from the ranks' rows. `has_gpu_ops`: whether the
// graphs hold GPU ops (the note on nodes left out names the profiler's GPU
// warm-up work only then).
StepReport MakeStepReport(std::vector<RankSteps> ranks, int64_t steps,
                          HostTimeMode mode, int64_t nodes_left_out,
                          bool has_gpu_ops = true);

// {"steps", "host_time", "predicted_us", "measured_us", "measured_source",
// "error_pct", "ranks": [...]}: the keys both tools' --json carry.
nlohmann::json StepReportJson(const StepReport& report);

// A few lines: the overall comparison, then one line per rank (at most
// `max_ranks`). `verb` is "predicted" (et-sim) or "replayed" (et-replay).
// "rank 3", or "ranks 0..2,4..63 (63)": the runs of consecutive ranks, and
// how many.
std::string RanksLabel(const std::vector<int64_t>& ranks);

std::string FormatStepReport(const StepReport& report, const char* verb,
                             size_t max_ranks);

// What a recording says about an unprofiled prediction from it, one note
// each: the page faults StepModel added (PageFaultCorrection), and recorded
// steps so unequal that the machine, not the program, set some of them (a
// step stretched by a neighbour stays stretched in the prediction; a truth,
// a median of blocks, leaves it out), said only with a truth; and a light
// profile whose step, with the faults added, is faster than the truth
// `truth_us`: a profiler only adds time, so that truth ran slower than the
// program did when profiled, and a prediction read from the light profile
// cannot reach it.
std::vector<std::string> UnprofiledRecordingNotes(
    const StepModel& steps, std::optional<double> truth_us);

}  // namespace et

#endif  // STEP_STEP_REPORT_H_
