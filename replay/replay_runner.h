// The replay loop: warm-up iterations, then timed ones, each started together
// on every rank (a barrier) and issued op by op in the plan's order through a
// DeviceBackend. Keeps the timing of the timed iterations for the report, the
// trace and the calibration; where timing every op would stretch the step
// (DeviceBackend::OpTimingStretchesRun), op times come from one more
// iteration.
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
  // Where timing every op stretches the run: time the step without it, and
  // the ops in one more iteration (false: every timed iteration times both).
  bool separate_op_timing = true;
};

absl::StatusOr<ReplayTimings> RunReplay(const ReplayPlan& plan,
                                        DeviceBackend* backend,
                                        const MpiWorld& world,
                                        const RunOptions& options);

}  // namespace et::replay

#endif  // REPLAY_REPLAY_RUNNER_H_
