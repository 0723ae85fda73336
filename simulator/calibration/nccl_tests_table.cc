// nccl-tests' table from the NCCL model; conventions from nccl-tests'
// src/common.cu (setupArgs, the size and count columns) and each test's
// GetCollByteCount and GetBw.
#include "simulator/calibration/nccl_tests_table.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace et::sim {
namespace {

constexpr int64_t kFloatBytes = 4;

bool Reduces(NcclOp op) {
  return op == NcclOp::kAllReduce || op == NcclOp::kReduceScatter;
}

// nccl-tests' (size, count) for a requested size: gather-like ops keep a
// whole number of elements per rank and print the larger buffer.
NcclTestsRow Shape(NcclOp op, int64_t world, int64_t requested_bytes) {
  const int64_t count = requested_bytes / kFloatBytes;
  NcclTestsRow row;
  switch (op) {
    case NcclOp::kAllGather:
    case NcclOp::kReduceScatter:
    case NcclOp::kAllToAll:
      row.count = count / world;
      row.bytes = row.count * world * kFloatBytes;
      break;
    default:
      row.count = count;
      row.bytes = count * kFloatBytes;
  }
  return row;
}

}  // namespace

absl::StatusOr<int64_t> ParseNcclTestsSize(absl::string_view text) {
  std::string digits(absl::StripAsciiWhitespace(text));
  int shift = 0;
  if (!digits.empty()) {
    switch (absl::ascii_toupper(digits.back())) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        break;
    }
    if (shift > 0) digits.pop_back();
  }
  int64_t value = 0;
  // The limit is the suffix's: a plain byte count may be large (33554432),
  // a 'T' one no more than 2^22.
  if (!absl::SimpleAtoi(digits, &value) || value < 0 ||
      value > (std::numeric_limits<int64_t>::max() >> (shift + 1))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': expected a size in bytes with an optional K, M, G or T suffix",
        text));
  }
  return value << shift;
}

std::vector<NcclTestsRow> NcclTestsTable(const Platform& platform, NcclOp op,
                                         int64_t world, int64_t min_bytes,
                                         int64_t max_bytes) {
  std::vector<NcclTestsRow> rows;
  const double factor = BusBandwidthFactor(op, world);
  for (int64_t size = std::max<int64_t>(min_bytes, 1); size <= max_bytes;
       size *= 2) {
    NcclTestsRow row = Shape(op, world, size);
    const NcclEstimate estimate =
        NcclCollective(platform, op, world, static_cast<double>(row.bytes));
    row.time_us = estimate.time_us;
    row.algorithm = std::string(estimate.algorithm);
    row.protocol = std::string(estimate.protocol);
    if (row.time_us > 0) {
      row.algbw_gbps = static_cast<double>(row.bytes) / row.time_us / 1e3;
      row.busbw_gbps = row.algbw_gbps * factor;
    }
    rows.push_back(row);
    if (size > max_bytes / 2) break;  // the next doubling would overflow
  }
  return rows;
}

std::string FormatNcclTestsText(const std::vector<NcclTestsRow>& rows,
                                NcclOp op, int64_t world,
                                absl::string_view platform,
                                absl::string_view cluster) {
  std::string out = absl::StrFormat(
      "# et-sim --nccl-tests %s: %d ranks on %s%s, predicted by the NCCL "
      "model (no measurement: compare with your own nccl-tests run)\n"
      "#\n"
      "#       size         count      type   redop    root     time   algbw "
      "  busbw\n"
      "#        (B)    (elements)                               (us)  (GB/s) "
      " (GB/s)\n",
      NcclOpName(op), world, platform,
      cluster.empty() ? "" : absl::StrCat(" (", cluster, ")"));
  const char* redop = Reduces(op) ? "sum" : "none";
  const int root = op == NcclOp::kBroadcast ? 0 : -1;
  for (const NcclTestsRow& r : rows) {
    absl::StrAppendFormat(
        &out, "%12d  %12d  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f\n", r.bytes,
        r.count, "float", redop, root, r.time_us, r.algbw_gbps, r.busbw_gbps);
  }
  return out;
}

std::string FormatNcclTestsJson(const std::vector<NcclTestsRow>& rows,
                                NcclOp op, int64_t world,
                                absl::string_view platform,
                                absl::string_view cluster) {
  nlohmann::json j;
  j["op"] = std::string(NcclOpName(op));
  j["world"] = world;
  j["topology"] = std::string(platform);
  j["cluster"] = std::string(cluster);
  j["rows"] = nlohmann::json::array();
  for (const NcclTestsRow& r : rows) {
    j["rows"].push_back({{"bytes", r.bytes},
                         {"count", r.count},
                         {"time_us", r.time_us},
                         {"algbw_gbps", r.algbw_gbps},
                         {"busbw_gbps", r.busbw_gbps},
                         {"algorithm", r.algorithm},
                         {"protocol", r.protocol}});
  }
  return j.dump(1) + "\n";
}

}  // namespace et::sim
