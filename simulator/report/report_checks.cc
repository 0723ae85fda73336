// The report's invariants; see report_checks.h.
#include "simulator/report/report_checks.h"

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

}  // namespace

std::vector<std::string> ReportInconsistencies(const Report& report) {
  std::vector<std::string> out;
  for (const RankSteps& r : report.step.ranks) CheckBounds(r, &out);
  for (const RankStats& s : report.ranks) {
    if (s.compute_ns < 0 || s.exposed_comm_ns < 0 || s.idle_ns < 0 ||
        s.compute_ns + s.exposed_comm_ns + s.idle_ns > s.step_ns + 1000) {
      out.push_back(absl::StrFormat(
          "%s: compute %d + exposed comm %d + idle %d ns beyond its %d ns",
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
