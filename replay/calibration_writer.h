// The calibration file et-sim reads (docs/calibration-format.md,
// "et-calibration" version 1): measured times of the replayed ops grouped by op
// name and input shapes (the node's inputs.shapes as a JSON list), with count,
// mean and standard deviation over every timed sample of every op in the group
// (plus min and median, informational).
#ifndef REPLAY_CALIBRATION_WRITER_H_
#define REPLAY_CALIBRATION_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "replay/device_backend.h"
#include "replay/replay_plan.h"

namespace et::replay {

std::string CalibrationJson(const ReplayPlan& plan,
                            const std::vector<IterationTiming>& timed,
                            const std::string& device);

// CalibrationJson written atomically to `path`.
absl::Status WriteCalibration(const std::string& path, const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              const std::string& device);

}  // namespace et::replay

#endif  // REPLAY_CALIBRATION_WRITER_H_
