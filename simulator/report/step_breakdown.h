// Where each step's time goes on one simulated rank, split the way the
// PyTorch profiler's overview splits a step: every instant of the step's
// window goes to the first of GPU kernels, memcpy, memset, communication no
// compute hides (exposed, by step/step_bound.h's rule), host ops running,
// the host's time between ops (the gaps the engine charges before host ops:
// Python, dispatch) and other (waiting for a dependency or another rank).
// The parts add up to the step. From the finished timeline; nothing is
// re-simulated. Plain data.
#ifndef SIMULATOR_REPORT_STEP_BREAKDOWN_H_
#define SIMULATOR_REPORT_STEP_BREAKDOWN_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "simulator/engine/engine.h"
#include "simulator/engine/rank_program.h"

namespace et::sim {

enum class StepPart {
  kKernel,
  kMemcpy,
  kMemset,
  kExposedComm,
  kHostOps,
  kHostGaps,
  kOther
};
inline constexpr int kStepParts = 7;

// "kernel", "memcpy", "memset", "exposed comm", "host ops",
// "host between ops", "other".
const char* StepPartName(StepPart part);

// A GPU op's part by its name: memcpy, memset, else kernel.
StepPart GpuPartOf(absl::string_view name);

struct StepBreakdown {
  int64_t step_ns = 0;
  std::array<int64_t, kStepParts> part_ns{};  // sums to step_ns
};

// `step_end_ns[k]`: when step k's last node finished (a running maximum is
// taken, as for the step times). One breakdown per step.
std::vector<StepBreakdown> BreakdownSteps(
    const RankProgram& program, const ClassTimeline& timeline,
    const std::vector<int64_t>& step_end_ns);

// The text section: a line per step (at most `max_steps`), ms per part.
std::string FormatStepBreakdownText(const std::vector<StepBreakdown>& steps,
                                    size_t max_steps);
// [{"step_ns", "kernel_ns", "memcpy_ns", ...}] per step.
nlohmann::json StepBreakdownJson(const std::vector<StepBreakdown>& steps);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_STEP_BREAKDOWN_H_
