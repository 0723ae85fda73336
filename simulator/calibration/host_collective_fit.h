// Fits the host collective model (gloo, HOST-GLOO) to what the recording
// measured: each host collective's run on its backend's worker thread
// (comm_work_ns), the fastest rank's, per op, group size and size. A host's
// loopback bandwidth and per-step latency differ tenfold between machines;
// the preset's figures were measured on one of them, the trace on its own.
#ifndef SIMULATOR_CALIBRATION_HOST_COLLECTIVE_FIT_H_
#define SIMULATOR_CALIBRATION_HOST_COLLECTIVE_FIT_H_

#include <string>
#include <vector>

#include "simulator/calibration/nccl_tests_log.h"
#include "simulator/platform/platform.h"

namespace et::sim {

struct HostCollectiveFit {
  Platform platform;  // intra_gbps (efficiency 1) and net_hop_us fitted
  double median_error_before = 0;  // |predicted / measured - 1| over the rows
  double median_error_after = 0;
  bool hop_fitted = false;  // false: one size only, the step latency kept
  // The fit missed the rows more than `start` did: `start` is kept.
  bool kept_preset = false;
};

// Least squares of `rows` (relative errors) on launch_us + steps x net_hop_us
// + bus bytes / bandwidth, both figures non-negative and bounded
// (docs/collective-model.md).
HostCollectiveFit FitHostCollectives(const Platform& start,
                                     const std::vector<NcclTestsLogRow>& rows);

// One line for the report: where the rows came from, each figure before and
// after, and the fit's error against its rows.
std::string DescribeHostFit(const Platform& start, const HostCollectiveFit& fit,
                            size_t rows, const std::string& source);

}  // namespace et::sim

#endif  // SIMULATOR_CALIBRATION_HOST_COLLECTIVE_FIT_H_
