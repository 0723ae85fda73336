// Per-step time by part, each instant given to the first part that holds it;
// see step_breakdown.h.
#include "simulator/report/step_breakdown.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "simulator/report/interval_set.h"
#include "simulator/report/timeline_sides.h"

namespace et::sim {

// A GPU op's part by its name (Kineto's "Memcpy HtoD (Pageable -> Device)",
// "Memset (Device)"; the node model has no kind of its own for them).
StepPart GpuPartOf(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  if (absl::StrContains(lower, "memcpy")) return StepPart::kMemcpy;
  if (absl::StrContains(lower, "memset")) return StepPart::kMemset;
  return StepPart::kKernel;
}

const char* StepPartName(StepPart part) {
  switch (part) {
    case StepPart::kKernel:
      return "kernel";
    case StepPart::kMemcpy:
      return "memcpy";
    case StepPart::kMemset:
      return "memset";
    case StepPart::kExposedComm:
      return "exposed comm";
    case StepPart::kHostOps:
      return "host ops";
    case StepPart::kHostGaps:
      return "host between ops";
    case StepPart::kOther:
      return "other";
  }
  return "?";
}

std::vector<StepBreakdown> BreakdownSteps(
    const RankProgram& p, const ClassTimeline& tl,
    const std::vector<int64_t>& step_end_ns) {
  const TimelineSides s = SortTimeline(p, tl);
  // Each part less every part before it: the first part holds an instant.
  // Exposed communication is the bound's (timeline_sides.h): it already
  // excludes the GPU's time, and a CPU-only run's host time, so it is taken
  // before the host ops whatever they overlap.
  std::vector<std::vector<Interval>> held(kStepParts);
  std::vector<Interval> taken;
  auto take = [&](StepPart part, const std::vector<Interval>& v) {
    held[static_cast<int>(part)] = Subtract(v, taken);
    taken = Union(taken, held[static_cast<int>(part)]);
  };
  take(StepPart::kKernel, s.kernel);
  take(StepPart::kMemcpy, s.memcpy);
  take(StepPart::kMemset, s.memset);
  take(StepPart::kExposedComm, s.exposed_comm);
  take(StepPart::kHostOps, s.host_ops);
  take(StepPart::kHostGaps, s.host_gaps);
  std::vector<StepBreakdown> out;
  int64_t prev_end = 0;
  for (int64_t end_k : step_end_ns) {
    const int64_t start = prev_end;
    const int64_t end = std::max(end_k, prev_end);
    prev_end = end;
    StepBreakdown b;
    b.step_ns = end - start;
    int64_t named = 0;
    for (int k = 0; k < kStepParts; ++k) {
      if (k == static_cast<int>(StepPart::kOther)) continue;
      b.part_ns[k] = Length(Clip(held[k], start, end));
      named += b.part_ns[k];
    }
    b.part_ns[static_cast<int>(StepPart::kOther)] =
        std::max<int64_t>(0, b.step_ns - named);
    out.push_back(b);
  }
  return out;
}

std::string FormatStepBreakdownText(const std::vector<StepBreakdown>& steps,
                                    size_t max_steps) {
  std::string out =
      "\nper step of the slowest rank, where the time goes (each instant to "
      "the first that holds it):\n"
      "step   step_ms  kernel_ms  memcpy_ms  memset_ms  exposed_comm_ms  "
      "host_ops_ms  host_between_ops_ms  other_ms\n";
  for (size_t k = 0; k < steps.size() && k < max_steps; ++k) {
    const StepBreakdown& b = steps[k];
    auto ms = [&](StepPart part) {
      return static_cast<double>(b.part_ns[static_cast<int>(part)]) / 1e6;
    };
    absl::StrAppendFormat(
        &out, "%-4d %9.3f %10.3f %10.3f %10.3f %16.3f %12.3f %20.3f %9.3f\n", k,
        b.step_ns / 1e6, ms(StepPart::kKernel), ms(StepPart::kMemcpy),
        ms(StepPart::kMemset), ms(StepPart::kExposedComm),
        ms(StepPart::kHostOps), ms(StepPart::kHostGaps), ms(StepPart::kOther));
  }
  return out;
}

nlohmann::json StepBreakdownJson(const std::vector<StepBreakdown>& steps) {
  nlohmann::json out = nlohmann::json::array();
  for (const StepBreakdown& b : steps) {
    nlohmann::json row = {{"step_ns", b.step_ns}};
    for (int k = 0; k < kStepParts; ++k) {
      std::string key = StepPartName(static_cast<StepPart>(k));
      std::replace(key.begin(), key.end(), ' ', '_');
      row[key + "_ns"] = b.part_ns[k];
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace et::sim
