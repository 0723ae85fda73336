// Warm-up and timed iterations; see replay_runner.h.
#include "replay/replay_runner.h"

#include "base/status_macros.h"

namespace et::replay {

namespace {

absl::StatusOr<IterationTiming> RunIteration(const ReplayPlan& plan,
                                             DeviceBackend* backend,
                                             const MpiWorld& world,
                                             IterationTimingMode mode) {
  // Ranks start each iteration together, so one rank's slow start-up (or the
  // previous iteration's tail) is not counted as communication time on the
  // others.
  world.Barrier();
  RETURN_IF_ERROR(backend->BeginIteration(mode));
  for (size_t i = 0; i < plan.ops.size(); ++i)
    RETURN_IF_ERROR(backend->Issue(i));
  IterationTiming timing;
  RETURN_IF_ERROR(backend->EndIteration(&timing));
  return timing;
}

}  // namespace

absl::StatusOr<ReplayTimings> RunReplay(const ReplayPlan& plan,
                                        DeviceBackend* backend,
                                        const MpiWorld& world,
                                        const RunOptions& options) {
  const bool separate =
      options.separate_op_timing && backend->OpTimingStretchesRun();
  const IterationTimingMode mode =
      separate ? IterationTimingMode::kStep : IterationTimingMode::kEveryOp;
  ReplayTimings timings;
  timings.steps.reserve(options.timed_iterations);
  const int total = options.warmup_iterations + options.timed_iterations;
  for (int iter = 0; iter < total; ++iter) {
    ASSIGN_OR_RETURN(IterationTiming timing,
                     RunIteration(plan, backend, world, mode));
    if (iter >= options.warmup_iterations)
      timings.steps.push_back(std::move(timing));
  }
  if (separate && options.timed_iterations > 0) {
    ASSIGN_OR_RETURN(
        IterationTiming timing,
        RunIteration(plan, backend, world, IterationTimingMode::kEveryOp));
    timings.ops.push_back(std::move(timing));
  }
  return timings;
}

}  // namespace et::replay
