// Per-step report; see step_report.h.
#include "step/step_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et {
namespace {

std::optional<double> ErrorPct(double got_us, std::optional<double> truth_us) {
  if (!truth_us || !(*truth_us > 0)) return std::nullopt;
  return (got_us - *truth_us) / *truth_us * 100.0;
}

// Two truths of one program that disagree bound how well any prediction can
// be judged. 5%: above the spread of the recorder's timing blocks on a quiet
// machine (±3%, tests/data/cpu-corpus/README.md).
constexpr double kTruthDriftPct = 5.0;
// Recorded steps further apart than this are noted (quiet CPU recordings:
// within 20%; a stretched step: about 2x, docs/step-model.md).
constexpr double kUnsteadyStepsPct = 25;

void AddTruthDriftNote(double before_us, double after_us,
                       std::vector<std::string>* notes) {
  const double drift_pct = (after_us - before_us) / before_us * 100.0;
  if (std::abs(drift_pct) <= kTruthDriftPct) return;
  notes->push_back(absl::StrFormat(
      "the unprofiled step timed after the recording (%.3f ms) is %.1f%% %s "
      "than before it (%.3f ms): the profiling session changed the "
      "process's speed (allocator state, clocks) or the machine was busy, so "
      "the truth itself is uncertain by that much (docs/step-model.md, "
      "\"Two truths\")",
      after_us / 1e3, std::abs(drift_pct), drift_pct < 0 ? "faster" : "slower",
      before_us / 1e3));
}

// A truth whose own timing blocks are further apart than a miss cannot tell
// that miss from noise: say how far apart they are.
void AddTruthSpreadNote(double truth_us, double fastest_us, double slowest_us,
                        std::vector<std::string>* notes) {
  const double spread_pct = (slowest_us - fastest_us) / truth_us * 100.0;
  if (spread_pct <= kTruthDriftPct) return;
  notes->push_back(absl::StrFormat(
      "the unprofiled run's timing blocks took %.3f to %.3f ms a step (%.1f%% "
      "of the truth apart; the truth is their median): a miss within that "
      "cannot be told from the truth's own noise (docs/step-model.md, \"Two "
      "truths\")",
      fastest_us / 1e3, slowest_us / 1e3, spread_pct));
}

}  // namespace

std::string RanksLabel(const std::vector<int64_t>& ranks) {
  if (ranks.empty()) return "-";
  if (ranks.size() == 1) return absl::StrCat("rank ", ranks[0]);
  // Runs of consecutive ranks: a class without rank 3 of 64 is
  // "0..2,4..63", not "0..63".
  std::vector<int64_t> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> runs;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    runs.push_back(j == i ? absl::StrCat(sorted[i])
                          : absl::StrCat(sorted[i], "..", sorted[j]));
    i = j + 1;
  }
  return absl::StrCat("ranks ", absl::StrJoin(runs, ","), " (", ranks.size(),
                      ")");
}

// Steps of very different lengths (a first step that still warms up): the
// predicted step is their mean, which a reader cannot tell from a steady one,
// so the slowest rank's steps and their median are said (issue 49).
namespace {
void AddUnsteadyStepsNote(const StepReport& s,
                          std::vector<std::string>* notes) {
  const RankSteps* slowest = nullptr;
  for (const RankSteps& r : s.ranks)
    if (slowest == nullptr || r.mean_us > slowest->mean_us) slowest = &r;
  if (slowest == nullptr || slowest->step_us.size() < 3) return;
  std::vector<double> sorted = slowest->step_us;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median =
      n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  if (sorted.front() <= 0 || sorted.back() < 1.5 * median) return;
  std::vector<std::string> steps;
  for (double us : slowest->step_us)
    steps.push_back(absl::StrFormat("%.3f", us / 1e3));
  notes->push_back(absl::StrFormat(
      "%s: unsteady steps (%s ms; the longest %.1fx their median): the "
      "predicted step is their mean, %.3f ms, and their median %.3f ms; a "
      "step that still warms up is best recorded after a profiler warm-up "
      "(examples/README.md)",
      RanksLabel(slowest->ranks), absl::StrJoin(steps, ", "),
      sorted.back() / median, slowest->mean_us / 1e3, median / 1e3));
}

// The recorded steps differ (the slowest over kUnsteadyStepsPct above the
// fastest) and the slowest rank has each: its error step by step, so a mean's
// miss is seen to come from one step (HTA's DLRM rank: four steps within 1%,
// the last -42.4% where its GPU work ran on 158 ms past the step's end).
void AddStepByStepNote(const StepReport& s, std::vector<std::string>* notes) {
  const RankSteps* slowest = nullptr;
  for (const RankSteps& r : s.ranks)
    if (slowest == nullptr || r.mean_us > slowest->mean_us) slowest = &r;
  if (slowest == nullptr) return;
  const std::vector<double>& truth = slowest->measured.steps_us;
  const std::vector<double>& predicted = slowest->step_us;
  if (truth.size() < 2 || truth.size() != predicted.size()) return;
  const auto [lo, hi] = std::minmax_element(truth.begin(), truth.end());
  if (*lo <= 0 || *hi / *lo - 1 <= kUnsteadyStepsPct / 100) return;
  constexpr size_t kListed = 8;
  std::vector<std::string> errors;
  for (size_t k = 0; k < truth.size() && k < kListed; ++k) {
    errors.push_back(absl::StrFormat("step %d %.3f vs %.3f ms (%+.1f%%)", k,
                                     predicted[k] / 1e3, truth[k] / 1e3,
                                     (predicted[k] / truth[k] - 1) * 100));
  }
  notes->push_back(absl::StrFormat(
      "%s: the recorded steps took %.3f to %.3f ms; step by step: %s%s",
      RanksLabel(slowest->ranks), *lo / 1e3, *hi / 1e3,
      absl::StrJoin(errors, ", "),
      truth.size() > kListed
          ? absl::StrFormat(" (%d more)", truth.size() - kListed)
          : ""));
}
}  // namespace

RankSteps MakeRankSteps(std::vector<int64_t> ranks,
                        const std::vector<int64_t>& step_end_ns,
                        MeasuredStep measured) {
  RankSteps r;
  r.ranks = std::move(ranks);
  int64_t prev = 0;
  for (int64_t end : step_end_ns) {
    end = std::max(end, prev);
    r.step_us.push_back(static_cast<double>(end - prev) / 1e3);
    prev = end;
  }
  r.mean_us = step_end_ns.empty() ? 0
                                  : static_cast<double>(prev) / 1e3 /
                                        static_cast<double>(step_end_ns.size());
  r.measured = std::move(measured);
  r.error_pct = ErrorPct(r.mean_us, r.measured.us);
  return r;
}

StepReport MakeStepReport(std::vector<RankSteps> ranks, int64_t steps,
                          HostTimeMode mode, int64_t nodes_left_out,
                          bool has_gpu_ops) {
  StepReport s;
  s.steps = steps;
  s.host_time = mode;
  double measured_sum = 0, after_sum = 0;
  int64_t measured_n = 0, after_n = 0;
  for (const RankSteps& r : ranks) {
    if (r.mean_us > s.predicted_us || (!s.bound && r.mean_us == s.predicted_us))
      s.bound = r.bounds.empty()
                    ? std::nullopt
                    : std::optional<StepBound>(MeanBound(r.bounds));
    s.predicted_us = std::max(s.predicted_us, r.mean_us);
    if (!r.measured.us) continue;
    measured_sum += *r.measured.us * static_cast<double>(r.ranks.size());
    measured_n += static_cast<int64_t>(r.ranks.size());
    s.measured_source = r.measured.source;
    if (!r.measured.blocks_us.empty()) {
      const auto [lo, hi] = std::minmax_element(r.measured.blocks_us.begin(),
                                                r.measured.blocks_us.end());
      s.measured_fastest_block_us =
          std::min(*lo, s.measured_fastest_block_us.value_or(*lo));
      s.measured_slowest_block_us =
          std::max(*hi, s.measured_slowest_block_us.value_or(*hi));
    }
    if (!r.measured.after_recording_us) continue;
    after_sum +=
        *r.measured.after_recording_us * static_cast<double>(r.ranks.size());
    after_n += static_cast<int64_t>(r.ranks.size());
  }
  if (measured_n > 0) s.measured_us = measured_sum / measured_n;
  s.error_pct = ErrorPct(s.predicted_us, s.measured_us);
  if (s.measured_us && s.measured_fastest_block_us) {
    AddTruthSpreadNote(*s.measured_us, *s.measured_fastest_block_us,
                       *s.measured_slowest_block_us, &s.notes);
  }
  if (after_n > 0 && s.measured_us) {
    s.measured_after_us = after_sum / after_n;
    s.error_after_pct = ErrorPct(s.predicted_us, s.measured_after_us);
    AddTruthDriftNote(*s.measured_us, *s.measured_after_us, &s.notes);
  }
  s.ranks = std::move(ranks);
  std::string withheld;
  for (const RankSteps& r : s.ranks) {
    if (withheld.empty()) withheld = r.measured.withheld;
  }
  if (!s.measured_us && !withheld.empty()) {
    s.notes.push_back(withheld);
  } else if (!s.measured_us) {
    s.notes.push_back(
        mode == HostTimeMode::kUnprofiled
            ? "no measured step without a profiler in the trace (record with "
              "examples/record_trace.py or convert with et-convert "
              "--measured-step-ms): no error to report"
            : "no profiled step in the trace (convert with --kineto): no "
              "error to report");
  }
  // A step of 0 ms is one whose ops all ended before the previous step's last
  // op: never a real step; say so rather than print 0.000 alone.
  for (const RankSteps& r : s.ranks) {
    const auto zero = std::find(r.step_us.begin(), r.step_us.end(), 0.0);
    if (zero == r.step_us.end()) continue;
    const int64_t k = zero - r.step_us.begin();
    s.notes.push_back(
        k == 0 ? absl::StrFormat("%s: step 0 has no op that ran",
                                 RanksLabel(r.ranks))
               : absl::StrFormat(
                     "%s: step %d ends before the step before it (each step "
                     "is measured to its last op's end): the steps' ops "
                     "overlap, so the trace's steps or call tree are wrong "
                     "(see et-convert's warnings)",
                     RanksLabel(r.ranks), k));
    break;
  }
  AddUnsteadyStepsNote(s, &s.notes);
  AddStepByStepNote(s, &s.notes);
  if (nodes_left_out > 0) {
    s.notes.push_back(absl::StrFormat(
        "%d nodes outside the recorded steps left out (%s)", nodes_left_out,
        has_gpu_ops ? "GPU work of the profiler's warm-up step, ops before "
                      "the first step"
                    : "ops before the first step"));
  }
  return s;
}

nlohmann::json StepReportJson(const StepReport& s) {
  auto opt = [](const std::optional<double>& v) -> nlohmann::json {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  auto source = [](const std::string& v) -> nlohmann::json {
    return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
  };
  nlohmann::json j = {
      {"steps", s.steps},
      {"host_time", std::string(HostTimeModeName(s.host_time))},
      {"predicted_us", s.predicted_us},
      {"measured_us", opt(s.measured_us)},
      {"measured_source", source(s.measured_source)},
      {"error_pct", opt(s.error_pct)},
      {"measured_after_recording_us", opt(s.measured_after_us)},
      {"error_after_recording_pct", opt(s.error_after_pct)},
      {"measured_fastest_block_us", opt(s.measured_fastest_block_us)},
      {"measured_slowest_block_us", opt(s.measured_slowest_block_us)},
      {"notes", s.notes},
      {"bound", s.bound ? StepBoundJson(*s.bound) : nlohmann::json(nullptr)},
  };
  j["ranks"] = nlohmann::json::array();
  for (const RankSteps& r : s.ranks) {
    j["ranks"].push_back({{"ranks", r.ranks},
                          {"step_us", r.step_us},
                          {"mean_us", r.mean_us},
                          {"measured_us", opt(r.measured.us)},
                          {"measured_source", source(r.measured.source)},
                          {"error_pct", opt(r.error_pct)}});
    nlohmann::json& bounds = j["ranks"].back()["bounds"];
    bounds = nlohmann::json::array();
    for (const StepBound& b : r.bounds) bounds.push_back(StepBoundJson(b));
  }
  return j;
}

std::string FormatStepReport(const StepReport& s, const char* verb,
                             size_t max_ranks) {
  std::string out = absl::StrFormat(
      "step (host time %s): %s %.3f ms per step (slowest rank, mean of %d)",
      HostTimeModeName(s.host_time), verb, s.predicted_us / 1e3, s.steps);
  if (s.measured_us) {
    absl::StrAppendFormat(&out, " vs measured %.3f ms (%s",
                          *s.measured_us / 1e3, s.measured_source);
    if (s.measured_fastest_block_us) {
      absl::StrAppendFormat(&out, "; timing blocks %.3f-%.3f ms",
                            *s.measured_fastest_block_us / 1e3,
                            *s.measured_slowest_block_us / 1e3);
    }
    absl::StrAppendFormat(&out, "): error %+.1f%%", s.error_pct.value_or(0));
    if (s.measured_after_us) {
      absl::StrAppendFormat(&out,
                            "; timed again after the recording %.3f ms: "
                            "error %+.1f%%",
                            *s.measured_after_us / 1e3,
                            s.error_after_pct.value_or(0));
    }
    absl::StrAppend(&out, "\n");
  } else {
    absl::StrAppend(&out, "; no measured step to compare with\n");
  }
  if (s.bound) {
    absl::StrAppend(&out, "  bound (slowest rank, its steps together): ",
                    FormatStepBound(*s.bound), "\n");
  }
  for (size_t k = 0; k < s.ranks.size() && k < max_ranks; ++k) {
    const RankSteps& r = s.ranks[k];
    std::vector<std::string> steps;
    for (double us : r.step_us)
      steps.push_back(absl::StrFormat("%.3f", us / 1e3));
    absl::StrAppendFormat(&out, "  %-16s steps %s ms", RanksLabel(r.ranks),
                          absl::StrJoin(steps, " "));
    if (r.measured.us) {
      absl::StrAppendFormat(&out, "; measured %.3f ms (%s), error %+.1f%%",
                            *r.measured.us / 1e3, r.measured.source,
                            r.error_pct.value_or(0));
    }
    absl::StrAppend(&out, "\n");
    for (size_t k = 0; k < r.bounds.size(); ++k) {
      absl::StrAppendFormat(&out, "    step %d: %s\n", k,
                            FormatStepBound(r.bounds[k]));
    }
  }
  for (const std::string& n : s.notes) absl::StrAppend(&out, "note: ", n, "\n");
  return out;
}

std::vector<std::string> UnprofiledRecordingNotes(
    const StepModel& steps, std::optional<double> truth_us) {
  std::vector<std::string> notes;
  const PageFaultCorrection& pf = steps.page_faults();
  if (pf.known()) {
    notes.push_back(absl::StrFormat(
        "page faults: the unprofiled run paid %.0f a step, the %s %.0f; at "
        "%.2f us each (measured on the recording host) the step %s %.3f ms "
        "(docs/step-model.md, \"Page faults\")",
        pf.unprofiled_per_step, pf.base, pf.base_per_step,
        pf.ns_per_fault / 1e3, pf.ns_per_step >= 0 ? "gains" : "loses",
        std::abs(pf.ns_per_step) / 1e6));
  }
  const int64_t light_ns = steps.model().light_step_ns;
  if (truth_us && steps.full_profiler_ns_per_op() > 0 && light_ns > 0 &&
      steps.model().host_speed == 1.0) {
    const double light_us =
        (static_cast<double>(light_ns) +
         (pf.known() ? static_cast<double>(pf.ns_per_step) : 0.0)) /
        1e3;
    if (light_us < *truth_us) {
      notes.push_back(absl::StrFormat(
          "the light profile's step (%.3f ms%s) is %.1f%% faster than the "
          "unprofiled truth (%.3f ms), though a profiler only adds time: the "
          "truth's run was slower than the program was when profiled (a busy "
          "machine, or page faults not counted), and the prediction, read "
          "from the light profile, cannot reach it (docs/step-model.md, \"The "
          "CPU corpus\")",
          light_us / 1e3, pf.known() ? ", its page faults added" : "",
          (1 - light_us / *truth_us) * 100, *truth_us / 1e3));
    }
  }
  const std::vector<double>& steps_us = steps.profiled_step_us();
  if (steps_us.size() < 2 || !truth_us) return notes;
  const auto [lo, hi] = std::minmax_element(steps_us.begin(), steps_us.end());
  if (*lo <= 0 || *hi / *lo - 1 <= kUnsteadyStepsPct / 100) return notes;
  notes.push_back(absl::StrFormat(
      "the recorded steps took %.3f to %.3f ms (the slowest %.0f%% over the "
      "fastest): the recording machine was not steady or the steps differ, "
      "and the prediction keeps the slow steps where the truth, a median of "
      "blocks, may not (docs/step-model.md, \"Page faults\")",
      *lo / 1e3, *hi / 1e3, (*hi / *lo - 1) * 100));
  return notes;
}

}  // namespace et
