// The replay loop: warm-up iterations, then timed ones, each started together
// on every rank (a barrier) and issued op by op in the plan's order through a
// DeviceBackend. Keeps the timing of the timed iterations for the report, the
// trace and the calibration.
#ifndef REPLAY_REPLAY_RUNNER_H_
#define REPLAY_REPLAY_RUNNER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "replay/device_backend.h"
#include "replay/mpi_world.h"
#include "replay/replay_plan.h"

namespace et::replay {

struct RunOptions {
  int warmup_iterations = 1;
  int timed_iterations = 3;
};

// Timing of each timed iteration, in order.
absl::StatusOr<std::vector<IterationTiming>> RunReplay(
    const ReplayPlan& plan, DeviceBackend* backend, const MpiWorld& world,
    const RunOptions& options);

}  // namespace et::replay

#endif  // REPLAY_REPLAY_RUNNER_H_
