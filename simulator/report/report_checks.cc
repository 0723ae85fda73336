// The report's invariants; see report_checks.h.
#include "simulator/report/report_checks.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_format.h"

namespace et::sim {
namespace {

// Times are rounded to the ns and summed per step: a microsecond of slack.
constexpr double kSlackUs = 1.0;

void CheckBounds(const RankSteps& r, std::vector<std::string>* out) {
  for (size_t k = 0; k < r.bounds.size(); ++k) {
    const StepBound& b = r.bounds[k];
    for (const auto& [side, us] :
         {std::pair<const char*, double>{"host busy", b.host_busy_us},
          {"GPU busy", b.gpu_busy_us},
          {"exposed comm", b.exposed_comm_us}}) {
      if (us < -kSlackUs || us > b.step_us + kSlackUs) {
        out->push_back(absl::StrFormat(
            "%s step %d: %s %.3f ms of a %.3f ms step", RanksLabel(r.ranks), k,
            side, us / 1e3, b.step_us / 1e3));
      }
    }
  }
}

// Each step's parts add up to it, and its exposed communication is the one
// the slowest rank's bound says (the same rule, step_busy.h).
void CheckBreakdown(const Report& report, std::vector<std::string>* out) {
  const RankStats* slowest = nullptr;
  for (const RankStats& s : report.ranks)
    if (!slowest || s.step_ns > slowest->step_ns) slowest = &s;
  const RankSteps* steps = nullptr;
  for (const RankSteps& r : report.step.ranks)
    if (slowest && r.ranks == slowest->ranks) steps = &r;
  for (size_t k = 0; k < report.breakdown.size(); ++k) {
    const StepBreakdown& b = report.breakdown[k];
    int64_t sum = 0;
    for (int64_t ns : b.part_ns) sum += ns;
    if (sum != b.step_ns || b.part_ns[kStepParts - 1] < 0) {
      out->push_back(absl::StrFormat(
          "step %d: parts add up to %d ns of a %d ns step", k, sum, b.step_ns));
    }
    if (steps == nullptr || k >= steps->bounds.size()) continue;
    const double exposed_us =
        b.part_ns[static_cast<int>(StepPart::kExposedComm)] / 1e3;
    if (std::abs(exposed_us - steps->bounds[k].exposed_comm_us) > kSlackUs) {
      out->push_back(absl::StrFormat(
          "step %d: exposed comm part %.3f ms, its bound %.3f ms", k,
          exposed_us / 1e3, steps->bounds[k].exposed_comm_us / 1e3));
    }
  }
  // The per-rank table's exposed communication is the steps' together
  // where the steps span the graph: one figure, one value.
  if (steps == nullptr || steps->bounds.empty()) return;
  double steps_us = 0, exposed_us = 0;
  for (const StepBound& b : steps->bounds) {
    steps_us += b.step_us;
    exposed_us += b.exposed_comm_us;
  }
  const double slack_us = kSlackUs * steps->bounds.size();
  if (std::abs(steps_us - slowest->step_ns / 1e3) <= slack_us &&
      std::abs(exposed_us - slowest->exposed_comm_ns / 1e3) > slack_us) {
    out->push_back(absl::StrFormat(
        "%s: exposed comm %.3f ms over the graph, %.3f ms over its steps",
        RanksLabel(slowest->ranks), slowest->exposed_comm_ns / 1e6,
        exposed_us / 1e3));
  }
}

}  // namespace

std::vector<std::string> ReportInconsistencies(const Report& report) {
  std::vector<std::string> out;
  for (const RankSteps& r : report.step.ranks) CheckBounds(r, &out);
  CheckBreakdown(report, &out);
  for (const RankStats& s : report.ranks) {
    if (s.compute_ns < 0 || s.exposed_comm_ns < 0 || s.idle_ns < 0 ||
        s.exposed_comm_ns > s.comm_ns ||
        s.compute_ns + s.exposed_comm_ns + s.idle_ns != s.step_ns) {
      out.push_back(absl::StrFormat(
          "%s: compute %d + exposed comm %d + idle %d ns is not its %d ns, "
          "or exposed above comm",
          RanksLabel(s.ranks), s.compute_ns, s.exposed_comm_ns, s.idle_ns,
          s.step_ns));
    }
  }
  for (const CollectiveRow& c : report.collectives) {
    if (c.calls > 0 && c.group_size > 1 && c.group_size <= report.world_size &&
        c.total_ns <= 0) {
      out.push_back(
          absl::StrFormat("%s on %s (%d ranks of %d): %d calls at 0 ns", c.type,
                          c.group, c.group_size, report.world_size, c.calls));
    }
  }
  return out;
}

}  // namespace et::sim
