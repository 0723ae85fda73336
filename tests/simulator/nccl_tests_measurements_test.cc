// The NCCL model against real nccl-tests logs (tests/data/nccl-tests/
// measurements.csv, sources in tests/data/README.md): per log, on the preset
// of the machine it ran on, the median error over sizes >= 1 MiB within 10%,
// the worst such size within 25% (two documented exceptions), and the median
// over 8 B - 64 KiB (the latency floor) within 30%. Prints the per-log table
// that docs/benchmarks.md holds.
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
#include "simulator/nccl_cost_model.h"

namespace et::sim {
namespace {

struct Measurement {
  std::string log_id, gpu, op, settings;
  int64_t ranks = 0, bytes = 0;
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
  // predicts, the old NCCL running fewer channels (worst -45.1% at 2 MiB).
  if (log_id == "02") return 0.50;
  return 0.25;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string SizeName(int64_t b) {
  if (b >= (1 << 30)) return absl::StrFormat("%g GiB", b / double(1 << 30));
  if (b >= (1 << 20)) return absl::StrFormat("%g MiB", b / double(1 << 20));
  if (b >= (1 << 10)) return absl::StrFormat("%g KiB", b / double(1 << 10));
  return absl::StrFormat("%d B", b);
}

TEST(NcclTestsMeasurementsTest, EveryLogWithinItsBounds) {
  const auto logs = ReadLogs();
  ASSERT_EQ(logs.size(), PresetOfLog().size());
  absl::PrintF(
      "| log | machine | op | ranks | preset | median >= 1 MiB | worst >= 1 "
      "MiB (size) | median 8 B-64 KiB |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& [log_id, rows] : logs) {
    SCOPED_TRACE("log " + log_id);
    ASSERT_EQ(PresetOfLog().count(log_id), 1u);
    const Platform platform = *FindPlatformPreset(PresetOfLog().at(log_id));
    // NCCL_ALGO=ring in the log's settings: the tuner had only the ring.
    const unsigned algorithms =
        absl::StrContains(absl::AsciiStrToLower(rows[0].settings),
                          "nccl_algo=ring")
            ? kNcclRing
            : kNcclAllAlgorithms;
    std::vector<double> large, small;
    double worst = 0;
    int64_t worst_bytes = 0;
    for (const Measurement& m : rows) {
      const double predicted_us =
          NcclCollective(platform, *NcclOpByName(m.op), m.ranks,
                         static_cast<double>(m.bytes), algorithms)
              .time_us;
      const double error = predicted_us / m.time_us - 1;
      if (m.bytes >= (1 << 20)) {
        large.push_back(std::abs(error));
        if (std::abs(error) > std::abs(worst)) {
          worst = error;
          worst_bytes = m.bytes;
        }
      } else if (m.bytes <= (64 << 10)) {
        small.push_back(std::abs(error));
      }
    }
    ASSERT_GE(large.size(), 5u);
    EXPECT_LE(Median(large), 0.10);
    EXPECT_LE(std::abs(worst), WorstBound(log_id)) << SizeName(worst_bytes);
    if (!small.empty()) {
      EXPECT_LE(Median(small), 0.30);
    }
    absl::PrintF("| %s | %s | %s | %d | %s | %.1f%% | %+.1f%% (%s) | %s |\n",
                 log_id, rows[0].gpu, rows[0].op, rows[0].ranks, platform.name,
                 100 * Median(large), 100 * worst, SizeName(worst_bytes),
                 small.empty()
                     ? "no sizes"
                     : absl::StrFormat("%.1f%%", 100 * Median(small)));
  }
}

}  // namespace
}  // namespace et::sim
