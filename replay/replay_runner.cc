// Warm-up and timed iterations; see replay_runner.h.
#include "replay/replay_runner.h"

#include "base/status_macros.h"

namespace et::replay {

absl::StatusOr<std::vector<IterationTiming>> RunReplay(
    const ReplayPlan& plan, DeviceBackend* backend, const MpiWorld& world,
    const RunOptions& options) {
  std::vector<IterationTiming> timed;
  timed.reserve(options.timed_iterations);
  const int total = options.warmup_iterations + options.timed_iterations;
  for (int iter = 0; iter < total; ++iter) {
    // Ranks start each iteration together, so one rank's slow start-up (or the
    // previous iteration's tail) is not counted as communication time on the
    // others.
    world.Barrier();
    RETURN_IF_ERROR(backend->BeginIteration());
    for (size_t i = 0; i < plan.ops.size(); ++i)
      RETURN_IF_ERROR(backend->Issue(i));
    IterationTiming timing;
    RETURN_IF_ERROR(backend->EndIteration(&timing));
    if (iter >= options.warmup_iterations) timed.push_back(std::move(timing));
  }
  return timed;
}

}  // namespace et::replay
