// Coordinate descent for --comm-from; see comm_fit.h.
#include "simulator/comm_fit.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace et::sim {
namespace {

// A fitted figure: its field, its bounds, and its first step.
struct Knob {
  const char* name;
  double Platform::*field;
  double lo, hi, first_step;
};

constexpr Knob kKnobs[] = {
    {"intra_efficiency", &Platform::intra_efficiency, 0.05, 1.0, 0.1},
    {"net_efficiency", &Platform::net_efficiency, 0.05, 1.0, 0.1},
    {"launch_us", &Platform::launch_us, 0, 1000, 5},
    {"pipeline_ramp_us", &Platform::pipeline_ramp_us, 0, 10000, 20},
};

double Predict(const Platform& p, const NcclTestsLogRow& r) {
  return NcclCollective(p, r.op, r.ranks, static_cast<double>(r.bytes)).time_us;
}

// Mean absolute log error: a 10% miss counts the same at 8 B and 16 GiB,
// and, like the median it is judged by, a few odd sizes do not pull the fit.
double Loss(const Platform& p, const std::vector<NcclTestsLogRow>& rows) {
  double sum = 0;
  for (const NcclTestsLogRow& r : rows) {
    sum += std::abs(std::log(Predict(p, r) / r.time_us));
  }
  return sum / static_cast<double>(std::max<size_t>(rows.size(), 1));
}

double MedianError(const Platform& p,
                   const std::vector<NcclTestsLogRow>& rows) {
  std::vector<double> large, all;
  for (const NcclTestsLogRow& r : rows) {
    const double e = std::abs(Predict(p, r) / r.time_us - 1);
    all.push_back(e);
    if (r.bytes >= (1 << 20)) large.push_back(e);
  }
  std::vector<double>& v = large.empty() ? all : large;
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

CommFit FitPlatform(const Platform& start,
                    const std::vector<NcclTestsLogRow>& rows) {
  CommFit fit;
  fit.platform = start;
  fit.rows = rows.size();
  fit.median_error_before = MedianError(start, rows);
  double best = Loss(start, rows);
  double steps[std::size(kKnobs)];
  for (size_t k = 0; k < std::size(kKnobs); ++k)
    steps[k] = kKnobs[k].first_step;
  // Each round tries one step up and down per figure; a figure whose steps
  // both fail halves its step. 60 rounds shrink a step by up to 2^60.
  for (int round = 0; round < 60; ++round) {
    for (size_t k = 0; k < std::size(kKnobs); ++k) {
      const Knob& knob = kKnobs[k];
      double& value = fit.platform.*knob.field;
      const double was = value;
      bool moved = false;
      for (double sign : {1.0, -1.0}) {
        value = std::clamp(was + sign * steps[k], knob.lo, knob.hi);
        const double loss = Loss(fit.platform, rows);
        if (loss < best) {
          best = loss;
          moved = true;
          break;
        }
        value = was;
      }
      if (!moved) steps[k] /= 2;
    }
  }
  fit.median_error_after = MedianError(fit.platform, rows);
  return fit;
}

std::string DescribeFit(const Platform& start, const CommFit& fit,
                        absl::string_view source) {
  std::string out = absl::StrFormat(
      "fitted %s to %d measured rows (%s):", start.name, fit.rows, source);
  for (const Knob& knob : kKnobs) {
    absl::StrAppendFormat(&out, " %s %.3g -> %.3g;", knob.name,
                          start.*knob.field, fit.platform.*knob.field);
  }
  absl::StrAppendFormat(
      &out,
      " median error over sizes >= 1 MiB against them %.1f%% before, "
      "%.1f%% after",
      100 * fit.median_error_before, 100 * fit.median_error_after);
  return out;
}

absl::StatusOr<std::string> FitPlatformToLogs(
    const std::vector<std::string>& paths, Platform* platform) {
  ASSIGN_OR_RETURN(NcclTestsLog log, LoadNcclTestsLogs(paths));
  const Platform start = *platform;
  const CommFit fit = FitPlatform(start, log.rows);
  *platform = fit.platform;
  std::string line = DescribeFit(start, fit, "--comm-from");
  if (log.op_assumed) {
    absl::StrAppend(&line,
                    " (a table without an <op>_perf line was taken as "
                    "all_reduce)");
  }
  return line;
}

}  // namespace et::sim
