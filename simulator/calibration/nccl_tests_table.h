// et-sim --nccl-tests: the table nccl-tests prints (size, count, type, redop,
// root, time, algbw, busbw) as the NCCL model predicts it for sizes doubling
// from min to max, in nccl-tests' own size conventions, so a user can diff it
// against their cluster's run.
#ifndef SIMULATOR_CALIBRATION_NCCL_TESTS_TABLE_H_
#define SIMULATOR_CALIBRATION_NCCL_TESTS_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "simulator/comm/nccl_cost_model.h"
#include "simulator/platform/platform.h"

namespace et::sim {

struct NcclTestsRow {
  int64_t bytes = 0;  // nccl-tests' size column: the larger buffer
  int64_t count = 0;  // its count column (per-rank elements for gather ops)
  double time_us = 0;
  double algbw_gbps = 0;  // bytes / time, GB = 1e9 B
  double busbw_gbps = 0;  // algbw x BusBandwidthFactor
  // What the model's tuner picked, as NCCL's TUNING lines name it.
  std::string algorithm, protocol;
};

// nccl-tests' size arguments: a number with an optional K, M, G or T suffix
// (powers of 1024), e.g. "8", "128M", "16G".
absl::StatusOr<int64_t> ParseNcclTestsSize(absl::string_view text);

// One row per size from `min_bytes`, doubling while <= `max_bytes` (nccl-tests
// -f 2), 4-byte floats, rounded as nccl-tests rounds counts to the ranks.
std::vector<NcclTestsRow> NcclTestsTable(const Platform& platform, NcclOp op,
                                         int64_t world, int64_t min_bytes,
                                         int64_t max_bytes);

// The text table, headed by what was predicted on which platform and
// `cluster` (the shape and NCCL knobs simulated; "" for none).
std::string FormatNcclTestsText(const std::vector<NcclTestsRow>& rows,
                                NcclOp op, int64_t world,
                                absl::string_view platform,
                                absl::string_view cluster = "");

// {"op", "world", "topology", "cluster", "rows": [{bytes, time_us,
// algbw_gbps, busbw_gbps, algorithm, protocol}]}.
std::string FormatNcclTestsJson(const std::vector<NcclTestsRow>& rows,
                                NcclOp op, int64_t world,
                                absl::string_view platform,
                                absl::string_view cluster = "");

}  // namespace et::sim

#endif  // SIMULATOR_CALIBRATION_NCCL_TESTS_TABLE_H_
