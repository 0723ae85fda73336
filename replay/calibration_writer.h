// The calibration file et-sim reads (docs/calibration-format.md): measured times of the
// replayed ops grouped by op name and input shapes (the node's inputs.shapes string
// exactly as stored in the .et), with count, mean, min and median over every timed
// sample of every op in the group.
#ifndef REPLAY_CALIBRATION_WRITER_H_
#define REPLAY_CALIBRATION_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "replay/device_backend.h"
#include "replay/replay_plan.h"

namespace et::replay {

std::string CalibrationJson(const ReplayPlan& plan, const std::vector<IterationTiming>& timed,
                            const std::string& device);

// CalibrationJson written atomically to `path`.
absl::Status WriteCalibration(const std::string& path, const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              const std::string& device);

}  // namespace et::replay

#endif  // REPLAY_CALIBRATION_WRITER_H_
