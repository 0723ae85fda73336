// --comm calibrated: the trace's own NCCL kernels as measurements for the
// collective model's fit (simulator/calibration/comm_fit.h), or for host
// collectives (gloo) their backend's work records
// (simulator/calibration/host_collective_fit.h). Per (operation, group size,
// size) the shortest recorded duration over every rank and call: it carries the
// least waiting for late peers.
#ifndef SIMULATOR_CALIBRATION_COMM_CALIBRATION_H_
#define SIMULATOR_CALIBRATION_COMM_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "simulator/calibration/nccl_tests_log.h"
#include "simulator/engine/rank_program.h"
#include "simulator/platform/platform.h"

namespace et::sim {

// The programs' recorded collectives, shortest per (op, ranks, nccl-tests
// size), in that order. Group sizes are the recorded ones (`world_size` for
// the all-ranks group when the trace does not say).
std::vector<NcclTestsLogRow> RecordedCollectives(
    const std::vector<const RankProgram*>& programs, int64_t world_size);

// Fits `*platform` to RecordedCollectives; the report's line, or an error
// when the trace recorded no collective durations. A host platform
// (HOST-GLOO) gets the host model's fit.
absl::StatusOr<std::string> CalibratePlatformToTrace(
    const std::vector<const RankProgram*>& programs, int64_t world_size,
    Platform* platform);

}  // namespace et::sim

#endif  // SIMULATOR_CALIBRATION_COMM_CALIBRATION_H_
