// --comm-from: fits a platform's few free figures (network and intra-node
// efficiency, per-step latency on each, launch cost, Simple pipeline ramp) to
// measured collectives by coordinate descent on the mean absolute log error
// of the NCCL model's times, each figure within a physical bound and held
// where the log cannot tell it. The link rates, NCCL's own latencies and the
// structure stay; a handful of physical parameters, not a table of sizes.
#ifndef SIMULATOR_CALIBRATION_COMM_FIT_H_
#define SIMULATOR_CALIBRATION_COMM_FIT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "simulator/calibration/nccl_tests_log.h"
#include "simulator/platform/platform.h"

namespace et::sim {

struct CommFit {
  Platform platform;               // the start with the fitted figures
  double median_error_before = 0;  // |predicted / measured - 1|, sizes >= 1 MiB
  double median_error_after = 0;   // (all sizes when none is >= 1 MiB)
  size_t rows = 0;
  // Figures the log's sizes and shape cannot tell (a one-node log says
  // nothing of the network): kept at the start's value.
  std::vector<std::string> held;
  // Node figures (NVLink) a log across nodes did not need: fitting them
  // after the network's gained under 10% of the loss, so NVLink cannot be
  // told from the network there.
  std::vector<std::string> kept;
  // Rows the fitted model still misses by more than 10%, worst first:
  // "all_reduce 16 ranks 2 MiB -45%".
  std::vector<std::string> misses;
};

// Fits `start` to `rows` (each row's op, ranks, size and time).
CommFit FitPlatform(const Platform& start,
                    const std::vector<NcclTestsLogRow>& rows);

// --comm-from FILES: fits `*platform` to the logs' rows in place; returns
// DescribeFit's line for the report. Errors name the file.
absl::StatusOr<std::string> FitPlatformToLogs(
    const std::vector<std::string>& paths, Platform* platform);

// One line: each fitted figure "name before -> after", and the errors
// against `source` (what was fitted to, e.g. "--comm-from").
std::string DescribeFit(const Platform& start, const CommFit& fit,
                        absl::string_view source);

}  // namespace et::sim

#endif  // SIMULATOR_CALIBRATION_COMM_FIT_H_
