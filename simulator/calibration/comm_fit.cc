// Coordinate descent for --comm-from; see comm_fit.h.
#include "simulator/calibration/comm_fit.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace et::sim {
namespace {

// A fitted figure: its field, its physical bounds (docs/collective-model.md,
// "Calibration from a real run"), its first step and the size of a move the
// fit pays for (so a figure the log cannot tell from another stays put).
struct Knob {
  const char* name;
  double Platform::*field;
  double lo, hi, first_step, scale;
  bool node;  // a figure of the node's own links (NVLink, PCIe)
};

// Bandwidth before latency, the network before the node: where a log says
// the network is slower, its figures move before a node figure that happens
// to bind a few sizes; a per-collective launch cost before per-step ones,
// which it cannot be told from on one shape (all ranks' steps alike).
constexpr Knob kKnobs[] = {
    // Below a tenth of the line rate is a broken link, not a figure.
    {"net_efficiency", &Platform::net_efficiency, 0.1, 1.0, 0.1, 1, false},
    // NVLink/PCIe: a ring reaches at least 30% of the links on any
    // published machine (V100 PCIe logs: 0.4).
    {"intra_efficiency", &Platform::intra_efficiency, 0.3, 1.0, 0.1, 1, true},
    // Host launch per collective: at most a millisecond.
    {"launch_us", &Platform::launch_us, 0, 1000, 5, 50, false},
    // Per network step beyond NCCL's own; EFA's 78 us is the most seen.
    {"net_hop_us", &Platform::net_hop_us, 0, 200, 5, 50, false},
    // Per NVLink step beyond NCCL's own figure (1.9-3.4 us): at most 20.
    {"intra_hop_us", &Platform::intra_hop_us, 0, 20, 1, 1, true},
    // Simple's ramp: at most 10 ms of data in flight (EFA: 1.65 ms).
    {"pipeline_ramp_us", &Platform::pipeline_ramp_us, 0, 10000, 20, 1000,
     false},
};

// What a move of a figure away from its start costs, against the mean log
// error: 0.5% of error per `scale` moved.
constexpr double kMovePenalty = 0.005;
// On a log across nodes the node's figures move only when they buy this
// share of the loss left once the network's are fitted: where the network
// explains the times, NVLink cannot be told from it.
constexpr double kNodeFigureGain = 0.10;

// A row on the log's own shape: its GPUs per node (their share of the
// node's NICs) and GPUs per process.
double Predict(const Platform& p, const NcclTestsLogRow& r) {
  Platform run = PlatformForGroup(p, r.ranks_per_node);
  run.nccl.gpus_per_process = r.gpus_per_process;
  return NcclCollective(run, r.op, r.ranks, static_cast<double>(r.bytes))
      .time_us;
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

// The loss plus the cost of every move away from `start`.
double Objective(const Platform& p, const Platform& start,
                 const std::vector<NcclTestsLogRow>& rows) {
  double moved = 0;
  for (const Knob& k : kKnobs)
    moved += std::abs(p.*k.field - start.*k.field) / k.scale;
  return Loss(p, rows) + kMovePenalty * moved;
}

// True when the log's rows can tell the figure: moving it by three steps
// changes some row's prediction by at least 0.5%.
bool Identifiable(const Platform& start, const Knob& k,
                  const std::vector<NcclTestsLogRow>& rows) {
  for (double sign : {-1.0, 1.0}) {
    Platform moved = start;
    moved.*k.field =
        std::clamp(start.*k.field + sign * 3 * k.first_step, k.lo, k.hi);
    for (const NcclTestsLogRow& r : rows) {
      if (std::abs(std::log(Predict(moved, r) / Predict(start, r))) > 0.005)
        return true;
    }
  }
  return false;
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

std::string SizeName(int64_t b) {
  if (b >= (int64_t{1} << 30))
    return absl::StrFormat("%g GiB", static_cast<double>(b) / (1 << 30));
  if (b >= (1 << 20))
    return absl::StrFormat("%g MiB", static_cast<double>(b) / (1 << 20));
  if (b >= (1 << 10))
    return absl::StrFormat("%g KiB", static_cast<double>(b) / (1 << 10));
  return absl::StrFormat("%d B", b);
}

// Rows the fitted model misses by more than 10%, worst first.
std::vector<std::string> Misses(const Platform& p,
                                const std::vector<NcclTestsLogRow>& rows) {
  std::vector<std::pair<double, std::string>> misses;
  for (const NcclTestsLogRow& r : rows) {
    const double e = Predict(p, r) / r.time_us - 1;
    if (std::abs(e) <= 0.10) continue;
    misses.push_back(
        {-std::abs(e),
         absl::StrFormat("%s %d ranks %s %+.0f%%", NcclOpName(r.op), r.ranks,
                         SizeName(r.bytes), 100 * e)});
  }
  std::stable_sort(
      misses.begin(), misses.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& m : misses) out.push_back(m.second);
  return out;
}

constexpr size_t kKnobCount = std::size(kKnobs);

// Coordinate descent over the figures `free` marks: each round tries one
// step up and down per figure; a figure whose steps both fail halves its
// step. 60 rounds shrink a step by up to 2^60.
void Descend(const Platform& start, const std::vector<NcclTestsLogRow>& rows,
             const bool (&free)[kKnobCount], Platform* p) {
  double steps[kKnobCount];
  for (size_t k = 0; k < kKnobCount; ++k) steps[k] = kKnobs[k].first_step;
  double best = Objective(*p, start, rows);
  for (int round = 0; round < 60; ++round) {
    for (size_t k = 0; k < kKnobCount; ++k) {
      if (!free[k]) continue;
      const Knob& knob = kKnobs[k];
      double& value = p->*knob.field;
      const double was = value;
      bool moved = false;
      for (double sign : {1.0, -1.0}) {
        value = std::clamp(was + sign * steps[k], knob.lo, knob.hi);
        const double objective = Objective(*p, start, rows);
        if (objective < best) {
          best = objective;
          moved = true;
          break;
        }
        value = was;
      }
      if (!moved) steps[k] /= 2;
    }
  }
}

// True when some row spans several nodes of its shape.
bool AcrossNodes(const Platform& p, const std::vector<NcclTestsLogRow>& rows) {
  for (const NcclTestsLogRow& r : rows) {
    const Platform run = PlatformForGroup(p, r.ranks_per_node);
    if (r.ranks > std::max<int64_t>(1, run.gpus_per_node)) return true;
  }
  return false;
}

}  // namespace

CommFit FitPlatform(const Platform& start,
                    const std::vector<NcclTestsLogRow>& rows) {
  CommFit fit;
  fit.platform = start;
  fit.rows = rows.size();
  fit.median_error_before = MedianError(start, rows);
  // A figure outside its bounds (a platform file's) starts at the bound.
  for (const Knob& k : kKnobs) {
    fit.platform.*k.field = std::clamp(start.*k.field, k.lo, k.hi);
  }
  bool free[kKnobCount];
  for (size_t k = 0; k < kKnobCount; ++k) {
    free[k] = Identifiable(fit.platform, kKnobs[k], rows);
    if (!free[k]) fit.held.push_back(kKnobs[k].name);
  }
  if (AcrossNodes(start, rows)) {
    // The network's figures (and launch, ramp) first, the node's held.
    bool network_first[kKnobCount];
    for (size_t k = 0; k < kKnobCount; ++k)
      network_first[k] = free[k] && !kKnobs[k].node;
    Descend(start, rows, network_first, &fit.platform);
    Platform both = fit.platform;
    Descend(start, rows, free, &both);
    if (Loss(both, rows) < (1 - kNodeFigureGain) * Loss(fit.platform, rows)) {
      fit.platform = both;
    } else {
      for (size_t k = 0; k < kKnobCount; ++k) {
        if (free[k] && kKnobs[k].node) fit.kept.push_back(kKnobs[k].name);
      }
    }
  } else {
    Descend(start, rows, free, &fit.platform);
  }
  fit.median_error_after = MedianError(fit.platform, rows);
  fit.misses = Misses(fit.platform, rows);
  return fit;
}

std::string DescribeFit(const Platform& start, const CommFit& fit,
                        absl::string_view source) {
  std::string out = absl::StrFormat(
      "fitted %s to %d measured rows (%s):", start.name, fit.rows, source);
  for (const Knob& knob : kKnobs) {
    auto named = [&](const std::vector<std::string>& list) {
      return std::find(list.begin(), list.end(), knob.name) != list.end();
    };
    if (named(fit.held) || named(fit.kept)) continue;
    absl::StrAppendFormat(&out, " %s %.3g -> %.3g;", knob.name,
                          start.*knob.field, fit.platform.*knob.field);
  }
  if (!fit.held.empty()) {
    absl::StrAppendFormat(&out, " held (the log cannot tell them): %s;",
                          absl::StrJoin(fit.held, ", "));
  }
  if (!fit.kept.empty()) {
    absl::StrAppendFormat(
        &out,
        " kept: %s (across nodes the network's figures explain the log; "
        "the node's would gain under %.0f%% more);",
        absl::StrJoin(fit.kept, ", "), 100 * kNodeFigureGain);
  }
  absl::StrAppendFormat(
      &out,
      " median error over sizes >= 1 MiB against them %.1f%% before, "
      "%.1f%% after",
      100 * fit.median_error_before, 100 * fit.median_error_after);
  if (!fit.misses.empty()) {
    constexpr size_t kShown = 6;
    std::vector<std::string> shown(
        fit.misses.begin(),
        fit.misses.begin() + std::min(kShown, fit.misses.size()));
    absl::StrAppendFormat(
        &out,
        "; the fitted model still misses %d of the %d rows by more than "
        "10%%%s: "
        "%s%s",
        fit.misses.size(), fit.rows,
        fit.median_error_after > 0.10 ? " (median too: the model lacks what "
                                        "this log measures)"
                                      : "",
        absl::StrJoin(shown, ", "), fit.misses.size() > kShown ? ", ..." : "");
  }
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
