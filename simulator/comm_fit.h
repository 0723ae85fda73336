// --comm-from: fits a platform's few free figures (intra-node and network
// efficiency, launch cost, Simple pipeline ramp) to measured collectives by
// coordinate descent on the squared log error of the NCCL model's times. The
// link rates, NCCL's own latencies and the structure stay; a handful of
// physical parameters, not a table of sizes.
#ifndef SIMULATOR_COMM_FIT_H_
#define SIMULATOR_COMM_FIT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "simulator/nccl_tests_log.h"
#include "simulator/platform.h"

namespace et::sim {

struct CommFit {
  Platform platform;               // the start with the fitted figures
  double median_error_before = 0;  // |predicted / measured - 1|, sizes >= 1 MiB
  double median_error_after = 0;   // (all sizes when none is >= 1 MiB)
  size_t rows = 0;
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

#endif  // SIMULATOR_COMM_FIT_H_
