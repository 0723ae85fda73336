// The NCCL model against real nccl-tests logs (tests/data/nccl-tests/
// measurements.csv, sources in tests/data/README.md), run as a user runs it:
// `et-sim --nccl-tests OP` on the preset of the machine the log ran on, with
// the log's own shape (--nodes, --gpus-per-node) and settings (NCCL_ALGO,
// NCCL_PROTO, -g as et-sim's flags). Per log the median error over sizes
// >= 1 MiB within 10%, the worst such size within 25% (a documented
// exception), and the median over 8 B - 64 KiB (the latency floor) within
// 30%. Prints the per-log table that docs/benchmarks.md holds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/simulator/calibration/nccl_log_check.h"

namespace et::sim {
namespace {

struct Measurement {
  std::string log_id, gpu, op, settings;
  int64_t ranks = 0, nodes = 0, gpus_per_node = 0, bytes = 0;
  double time_us = 0;  // out of place
};

// One CSV line into fields; quoted fields may hold commas ("" is a quote).
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::map<std::string, std::vector<Measurement>> ReadLogs() {
  std::ifstream in(std::string(ET_TEST_DATA) + "/nccl-tests/measurements.csv");
  std::map<std::string, std::vector<Measurement>> logs;
  std::string line;
  std::getline(in, line);  // header
  EXPECT_EQ(line.rfind("log_id,source,gpu,ranks,nodes,gpus_per_node,op,", 0),
            0u);
  while (std::getline(in, line)) {
    const std::vector<std::string> f = SplitCsv(line);
    Measurement m;
    if (f.size() < 15 || !absl::SimpleAtoi(f[3], &m.ranks) ||
        !absl::SimpleAtoi(f[4], &m.nodes) ||
        !absl::SimpleAtoi(f[5], &m.gpus_per_node) ||
        !absl::SimpleAtoi(f[8], &m.bytes) ||
        !absl::SimpleAtod(f[9], &m.time_us)) {
      ADD_FAILURE() << "bad row: " << line;
      continue;
    }
    m.log_id = f[0];
    m.gpu = f[2];
    m.op = f[6];
    m.settings = f[14];
    logs[m.log_id].push_back(m);
  }
  return logs;
}

// The machine each log ran on (tests/data/README.md, docs/collective-model.md).
const std::map<std::string, std::string>& PresetOfLog() {
  static const auto* presets = new std::map<std::string, std::string>{
      {"02", "AWS-P4D"},  {"03", "HGX-H100"}, {"10", "DGX-A100"},
      {"12", "DGX-V100"}, {"13", "HGX-H800"}, {"14", "HGX-H100"},
      {"15", "HGX-H100"}, {"16", "HGX-H100"}, {"17", "HGX-H100"},
      {"18", "HGX-H100"}, {"24", "HGX-H100"}, {"26", "L40S-PCIE"}};
  return *presets;
}

// Worst-size bounds looser than 25%, each for a measured anomaly the model
// should not chase (docs/collective-model.md, "What it misses").
double WorstBound(const std::string& log_id) {
  // p4d, NCCL 2.9.9 over EFA: 1-4 MiB take twice what LL's bandwidth
  // predicts, the old NCCL running fewer channels (worst -43.4% at 2 MiB).
  if (log_id == "02") return 0.50;
  return 0.25;
}

TEST(NcclTestsMeasurementsTest, EveryLogWithinItsBounds) {
  const auto logs = ReadLogs();
  ASSERT_EQ(logs.size(), PresetOfLog().size());
  absl::PrintF(
      "| log | machine | op | ranks | et-sim flags | median >= 1 MiB | worst "
      ">= 1 MiB (size) | median 8 B-64 KiB |\n|---|---|---|---|---|---|---|---|"
      "\n");
  for (const auto& [log_id, rows] : logs) {
    SCOPED_TRACE("log " + log_id);
    ASSERT_EQ(PresetOfLog().count(log_id), 1u);
    const Measurement& m = rows[0];
    // The log's own settings through the command line.
    const std::string flags = absl::StrFormat(
        "--nccl-tests %s --topology %s --nodes %d --gpus-per-node %d%s", m.op,
        PresetOfLog().at(log_id), m.nodes, m.gpus_per_node,
        testing::FlagsForSettings(m.settings));
    std::vector<testing::LogPoint> points;
    for (const Measurement& r : rows) points.push_back({r.bytes, r.time_us});
    const testing::LogCheck check = testing::CheckLog(points, flags);
    ASSERT_TRUE(check.error.empty()) << check.error;
    ASSERT_GE(check.large, 5u);
    EXPECT_LE(check.median, 0.10) << flags;
    EXPECT_LE(std::abs(check.worst), WorstBound(log_id))
        << flags << ": " << testing::SizeName(check.worst_bytes);
    if (check.small_median >= 0) {
      EXPECT_LE(check.small_median, 0.30) << flags;
    }
    absl::PrintF("| %s | %s | %s | %d | `%s` | %.1f%% | %+.1f%% (%s) | %s |\n",
                 log_id, m.gpu, m.op, m.ranks,
                 flags.substr(flags.find("--topology")), 100 * check.median,
                 100 * check.worst, testing::SizeName(check.worst_bytes),
                 check.small_median < 0
                     ? "no sizes"
                     : absl::StrFormat("%.1f%%", 100 * check.small_median));
  }
}

}  // namespace
}  // namespace et::sim
