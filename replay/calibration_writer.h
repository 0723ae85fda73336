// The calibration file of a replay: measured times of the replayed ops
// grouped by op name and input shapes (the model's canonical key), in the
// format step/calibration.h writes and et-sim reads.
#ifndef REPLAY_CALIBRATION_WRITER_H_
#define REPLAY_CALIBRATION_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/node_model.h"
#include "replay/device_backend.h"
#include "replay/replay_plan.h"
#include "step/calibration.h"

namespace et::replay {

// One entry per (name, input shapes) of the replayed ops, with every timed
// sample of every op in it.
std::vector<CalibrationEntry> CalibrationEntries(
    const NodeModel& model, const ReplayPlan& plan,
    const std::vector<IterationTiming>& timed);

std::string CalibrationJson(const NodeModel& model, const ReplayPlan& plan,
                            const std::vector<IterationTiming>& timed,
                            const std::string& device);

// CalibrationJson written atomically to `path`.
absl::Status WriteCalibration(const std::string& path, const NodeModel& model,
                              const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              const std::string& device);

}  // namespace et::replay

#endif  // REPLAY_CALIBRATION_WRITER_H_
