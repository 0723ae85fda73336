// ASTRA-sim oracle: every row of tests/data/astra-sim/expected_results.csv that
// names configs we have must be reproduced within 1% by et-sim's
// ASTRA-compatible mode, run end to end on ASTRA-sim's own per-rank .et
// microbenchmarks.
#include "simulator/comm/astra_compat.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

const std::string kDir = std::string(ET_TEST_DATA) + "/astra-sim/";

struct Row {
  std::string workload, network, system, backend;
  int64_t finish_ns = 0;
};

std::vector<Row> ReadRows() {
  std::ifstream in(kDir + "expected_results.csv");
  std::string line;
  std::getline(in, line);  // header
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '"')
      continue;  // rt_template row: configs not shipped
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() < 5) continue;
    rows.push_back({f[0], f[1], f[2], f[3], std::stoll(f[4])});
  }
  return rows;
}

TEST(AstraCompatTest, EveryExpectedRowWithinOnePercent) {
  const std::vector<Row> rows = ReadRows();
  ASSERT_EQ(rows.size(),
            64u);  // 4 collectives x 16 network/system/backend combinations
  for (const Row& row : rows) {
    const std::string npus = row.workload.substr(row.workload.find('/') + 1);
    const int64_t ranks = std::stoll(npus.substr(npus.find('/') + 1));
    SimInput input{kDir + row.workload + ".%d.et", ranks};
    SimOptions options;
    options.scheduling = SchedulingMode::kAstraCompat;
    options.comm_model =
        row.backend == "aware" ? CommModel::kAstraAware : CommModel::kAstra;
    options.topology = kDir + row.network;
    options.astra_system = kDir + row.system;
    auto sim = Simulation::Run(input, options);
    ASSERT_TRUE(sim.ok()) << row.workload << ": " << sim.status();
    const double got = static_cast<double>((*sim)->report().step_ns);
    EXPECT_NEAR(got, row.finish_ns, 0.01 * row.finish_ns)
        << row.workload << " " << row.network << " " << row.system << " "
        << row.backend;
    // Every rank finishes at the same time: one ring collective, all members.
    for (const RankStats& s : (*sim)->report().ranks) EXPECT_EQ(s.step_ns, got);
  }
}

TEST(AstraCompatTest, RingAllReduceByHand) {
  // 4 ranks, 1 chunk, 1 MiB, 50 GiB/s ring, 500 ns: 6 messages of 256 KiB, each
  // trunc(500 + 262144 / 53.687) = 5382 ns, + 10 ns hand-off; 3 reductions of
  // 3 * trunc(262144 / 1600) = 3 * 163 ns; + 10 ns at the start.
  Topology t;
  t.astra_units = true;
  t.dims.push_back({LinkKind::kRing, 4, 50, 500});
  AstraSystemConfig sys;
  sys.preferred_dataset_splits = 1;
  sys.endpoint_delay_ns = 10;
  sys.local_mem_bw_gbps = 1600;
  EXPECT_EQ(
      AstraCollectiveNs(ChakraProtoMsg::ALL_REDUCE, 1 << 20, 4, t, sys, false),
      10 + 6 * (5382 + 10) + 3 * 3 * 163);
  // Aware with one chunk: no contention, a ring link is one hop: same time.
  EXPECT_EQ(
      AstraCollectiveNs(ChakraProtoMsg::ALL_REDUCE, 1 << 20, 4, t, sys, true),
      10 + 6 * (5382 + 10) + 3 * 3 * 163);
}

TEST(AstraCompatTest, RejectsUnmodelledImplementation) {
  auto c = ParseAstraSystemJson(
      R"({"all-reduce-implementation": ["doubleBinaryTree"]})", "sys.json");
  EXPECT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("ring"), std::string::npos);
}

}  // namespace
}  // namespace et::sim
