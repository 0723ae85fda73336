// Reads nccl-tests output as users have it: one or more operations per file,
// lines possibly prefixed by mpirun's "[1,0]<stdout>:", tables with or
// without the root column (nccl-tests before 2.10 had none, and an 'error'
// column instead of '#wrong'). For --comm-from, which fits a platform to it.
#ifndef SIMULATOR_CALIBRATION_NCCL_TESTS_LOG_H_
#define SIMULATOR_CALIBRATION_NCCL_TESTS_LOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "simulator/comm/nccl_cost_model.h"

namespace et::sim {

struct NcclTestsLogRow {
  NcclOp op = NcclOp::kAllReduce;
  int64_t ranks = 0;
  int64_t bytes = 0;   // nccl-tests' size column
  double time_us = 0;  // out of place
  // The run's shape from its rank list: ranks per host (0: the hosts do not
  // divide the ranks evenly, or are not named) and GPUs per process
  // (nccl-tests' "nGpus", 1 when not printed).
  int64_t ranks_per_node = 0;
  int64_t gpus_per_process = 1;
};

struct NcclTestsLog {
  std::vector<NcclTestsLogRow> rows;
  std::string device_name;  // of rank 0, "" when not listed
  // Set when a table had no "<op>_perf" line before it: all_reduce was
  // assumed from its reduction column (say so in reports).
  bool op_assumed = false;
};

// Parses `text`; `origin` names it in errors. An error when no table row is
// found or the ranks are never listed ("# Using devices").
absl::StatusOr<NcclTestsLog> ParseNcclTestsLog(absl::string_view text,
                                               absl::string_view origin);

// Reads and parses each file, rows concatenated in order.
absl::StatusOr<NcclTestsLog> LoadNcclTestsLogs(
    const std::vector<std::string>& paths);

}  // namespace et::sim

#endif  // SIMULATOR_CALIBRATION_NCCL_TESTS_LOG_H_
