// --comm-from: the nccl-tests output parser on the formats users have (mpirun
// prefixes, tables with and without the root column, op named or not), and
// the fit bringing a log within 5% median from a platform that starts wrong.
#include "simulator/calibration/comm_fit.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/node_model.h"
#include "simulator/calibration/comm_calibration.h"
#include "simulator/calibration/nccl_tests_log.h"
#include "simulator/engine/rank_program.h"
#include "simulator/platform/compute_cost_model.h"
#include "simulator/platform/platform.h"
#include "tests/simulator/sim_test_graphs.h"

namespace et::sim {
namespace {

std::string LogPath(const std::string& name) {
  return std::string(ET_TEST_DATA) + "/nccl-tests/logs/" + name + ".txt";
}

TEST(NcclTestsLogTest, MpirunPrefixesAndNoRootColumn) {
  auto log = LoadNcclTestsLogs({LogPath("02_p4d-a100-2x8-efa_allreduce")});
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->rows.size(), 30u);  // 8 B .. 4 GiB
  EXPECT_TRUE(log->op_assumed);      // no all_reduce_perf line in this log
  EXPECT_EQ(log->device_name, "A100-SXM4-40GB");
  EXPECT_EQ(log->rows[0].ranks, 16);
  EXPECT_EQ(log->rows[0].bytes, 8);
  EXPECT_DOUBLE_EQ(log->rows[0].time_us, 179.1);  // out of place, not 176.3
  EXPECT_EQ(log->rows.back().bytes, int64_t{1} << 32);
  // The run's shape from its rank list: 16 ranks on two hosts, 1 GPU each.
  EXPECT_EQ(log->rows[0].ranks_per_node, 8);
  EXPECT_EQ(log->rows[0].gpus_per_process, 1);
}

// One process driving 8 GPUs (nccl-tests -g 8) and one GPU per host (the
// 10-node held-out run with 1 GPU per node): the fit prices each row so.
TEST(NcclTestsLogTest, ShapeFromTheRankList) {
  auto g8 = ParseNcclTestsLog(
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor)\n"
      "# Using devices\n"
      "#   Rank  0 Pid   9 on host-a device  0 [0x1b] NVIDIA H800\n"
      "#   Rank  7 Pid   9 on host-a device  7 [0xdf] NVIDIA H800\n"
      "           8             2     float     sum      -1    25.45    0.00"
      "    0.00      0    25.4    0.00    0.00      0\n",
      "g8.txt");
  ASSERT_TRUE(g8.ok()) << g8.status();
  EXPECT_EQ(g8->rows[0].ranks, 8);
  EXPECT_EQ(g8->rows[0].ranks_per_node, 8);
  EXPECT_EQ(g8->rows[0].gpus_per_process, 8);
  auto ten =
      LoadNcclTestsLogs({std::string(ET_TEST_DATA) +
                         "/nccl-tests-heldout/h100_10x1_nccl_N10_G1.log"});
  ASSERT_TRUE(ten.ok()) << ten.status();
  EXPECT_EQ(ten->rows[0].ranks, 10);
  EXPECT_EQ(ten->rows[0].ranks_per_node, 1);
}

TEST(NcclTestsLogTest, RootColumnAndOpNames) {
  auto a100 =
      LoadNcclTestsLogs({LogPath("10_a100sxm4-80gb-1x8_allreduce_mpirun")});
  ASSERT_TRUE(a100.ok()) << a100.status();
  EXPECT_FALSE(a100->op_assumed);
  EXPECT_EQ(a100->rows.size(), 30u);
  EXPECT_EQ(a100->rows[0].ranks, 8);
  EXPECT_DOUBLE_EQ(a100->rows[0].time_us, 20.26);  // after the root column
  auto both =
      LoadNcclTestsLogs({LogPath("10_a100sxm4-80gb-1x8_allreduce_mpirun"),
                         LogPath("15_h100-1x8-cnode3-002_allgather")});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->rows.size(), 40u);
  EXPECT_EQ(both->rows.front().op, NcclOp::kAllReduce);
  EXPECT_EQ(both->rows.back().op, NcclOp::kAllGather);
}

TEST(NcclTestsLogTest, NotALogIsAnError) {
  auto none = ParseNcclTestsLog("hello\nworld\n", "x.txt");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(std::string(none.status().message()),
            "x.txt: no nccl-tests table rows found");
  auto no_ranks = ParseNcclTestsLog(
      "  8  2  float  sum  -1  20.26  0.00  0.00  0"
      "  17.74  0.00  0.00  0\n",
      "y.txt");
  EXPECT_FALSE(no_ranks.ok());
  EXPECT_FALSE(LoadNcclTestsLogs({LogPath("missing")}).ok());
}

TEST(NcclTestsLogTest, RowsThatCannotBeFittedAreRefusedByLine) {
  const std::string head =
      "#  Rank  0 Group  0 Pid 1 on h device  0 [0x07] NVIDIA H100\n"
      "#  Rank  1 Group  0 Pid 1 on h device  1 [0x08] NVIDIA H100\n";
  auto inf = ParseNcclTestsLog(
      head + "  8  2  float  sum  -1  inf  0.00  0.00  0  9.1  0.00  0.00  0\n",
      "inf.txt");
  ASSERT_FALSE(inf.ok());
  EXPECT_EQ(std::string(inf.status().message()),
            "inf.txt: line 3: time 'inf' is not a finite positive number of us "
            "in [0.001, 3.6e+09] (1 ns to an hour)");
  // Times no run takes (issue 51), and binary data after a valid header.
  for (const char* time : {"1e308", "1e-300", "0.0001"}) {
    auto odd = ParseNcclTestsLog(head + "  8  2  float  sum  -1  " + time +
                                     "  0.00  0.00  0  9.1  0.00  0.00  0\n",
                                 "t.txt");
    ASSERT_FALSE(odd.ok()) << time;
    EXPECT_NE(odd.status().message().find(
                  absl::StrCat("t.txt: line 3: time '", time, "'")),
              std::string::npos)
        << odd.status();
  }
  auto binary = ParseNcclTestsLog(
      head + std::string("\x01\x02\xff garbage\n", 12) +
          "  8  2  float  sum  -1  9.2  0.00  0.00  0  9.1  0.00  0.00  0\n",
      "b.txt");
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.status().message().find("b.txt: line 3: binary data"),
            std::string::npos)
      << binary.status();
  auto zero = ParseNcclTestsLog(
      head + "  0  0  float  sum  -1  9.2  0.00  0.00  0  9.1  0.00  0.00  0\n",
      "zero.txt");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(std::string(zero.status().message()),
            "zero.txt: line 3: a row of 0 bytes (a size must be positive to "
            "fit)");
}

TEST(CommFitTest, FitBringsALogWithinFivePercent) {
  // An A100 platform whose figures are wrong: half the NVLink efficiency, no
  // launch cost, a long ramp; 8xA100 all_reduce (log 10) is then far off.
  auto start = ParsePlatform(
      "{gpu: A100, intra_efficiency: 0.4, launch_us: 0, "
      "pipeline_ramp_us: 500}",
      "start.yaml");
  ASSERT_TRUE(start.ok()) << start.status();
  auto log =
      LoadNcclTestsLogs({LogPath("10_a100sxm4-80gb-1x8_allreduce_mpirun")});
  ASSERT_TRUE(log.ok()) << log.status();
  const CommFit fit = FitPlatform(*start, log->rows);
  EXPECT_GT(fit.median_error_before, 0.30);
  EXPECT_LE(fit.median_error_after, 0.05);
  // The figures land near what the DGX-A100 preset holds (0.76, 9.5 us).
  EXPECT_NEAR(fit.platform.intra_efficiency, 0.76, 0.05);
  EXPECT_NEAR(fit.platform.launch_us, 9.5, 3);
  const std::string line = DescribeFit(*start, fit, "--comm-from");
  EXPECT_NE(line.find("intra_efficiency 0.4 -> 0.7"), std::string::npos)
      << line;
}

// Log 03 (2 x 8 H100, 8 x 400G InfiniBand) with every time doubled: a
// network twice as slow as HGX-H100's. The fit moves the network figures,
// leaves NVLink's where they were, and brings the log within 5% median.
TEST(CommFitTest, ASlowerNetworkMovesTheNetworkFigures) {
  auto log = LoadNcclTestsLogs({LogPath("03_xe9680-h100-2x8-ib_allreduce")});
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->rows.size(), 32u);
  std::vector<NcclTestsLogRow> slow = log->rows;
  for (NcclTestsLogRow& r : slow) r.time_us *= 2;
  const Platform h100 = *FindPlatformPreset("HGX-H100");
  const CommFit fit = FitPlatform(h100, slow);
  EXPECT_GT(fit.median_error_before, 0.4);
  EXPECT_LE(fit.median_error_after, 0.05);
  EXPECT_LT(fit.platform.net_efficiency, 0.6);  // about half of 0.94
  EXPECT_NEAR(fit.platform.intra_efficiency, h100.intra_efficiency, 0.05);
  EXPECT_LE(fit.platform.intra_hop_us, 0.5);
  const std::string line = DescribeFit(h100, fit, "--comm-from");
  EXPECT_NE(line.find("net_efficiency 0.94 -> 0.4"), std::string::npos) << line;
}

// A one-node log says nothing of the network: its figures are held and
// named; a log the model cannot follow is said to be missed, and where.
TEST(CommFitTest, HeldFiguresAndMissesAreReported) {
  auto a100 =
      LoadNcclTestsLogs({LogPath("10_a100sxm4-80gb-1x8_allreduce_mpirun")});
  ASSERT_TRUE(a100.ok()) << a100.status();
  const Platform dgx = *FindPlatformPreset("DGX-A100");
  const CommFit one_node = FitPlatform(dgx, a100->rows);
  EXPECT_DOUBLE_EQ(one_node.platform.net_efficiency, dgx.net_efficiency);
  EXPECT_DOUBLE_EQ(one_node.platform.net_hop_us, dgx.net_hop_us);
  const std::string line = DescribeFit(dgx, one_node, "--comm-from");
  EXPECT_NE(line.find("held (the log cannot tell them): net_efficiency, "
                      "net_hop_us"),
            std::string::npos)
      << line;
  // 02: EFA on p4d, priced from the DGX-A100 (InfiniBand) preset as if its
  // NCCL were free to pick: the fit cannot follow, and says where.
  auto efa = LoadNcclTestsLogs({LogPath("02_p4d-a100-2x8-efa_allreduce")});
  ASSERT_TRUE(efa.ok()) << efa.status();
  Platform crude = dgx;
  crude.net_efficiency = 0.3;
  crude.net_hop_us = 0;
  const CommFit miss = FitPlatform(crude, efa->rows);
  ASSERT_FALSE(miss.misses.empty());
  const std::string said = DescribeFit(crude, miss, "--comm-from");
  EXPECT_NE(said.find("the fitted model still misses"), std::string::npos)
      << said;
  EXPECT_NE(said.find("all_reduce 16 ranks"), std::string::npos) << said;
}

// --comm calibrated: a trace whose all-reduces took what 8xA100 measured
// (log 10, sizes >= 1 MiB, one kernel per size plus a slower repeat of one
// that waited for a peer) calibrates a wrong A100 platform within 5%.
TEST(CommCalibrationTest, TracesOwnKernelsCalibrateThePlatform) {
  auto log =
      LoadNcclTestsLogs({LogPath("10_a100sxm4-80gb-1x8_allreduce_mpirun")});
  ASSERT_TRUE(log.ok()) << log.status();
  std::vector<ChakraProtoMsg::Node> nodes;
  for (const NcclTestsLogRow& row : log->rows) {
    if (row.bytes < (1 << 20)) continue;
    const uint64_t id = nodes.size() + 1;
    nodes.push_back(
        testing::Collective(id, ChakraProtoMsg::ALL_REDUCE, row.bytes, {}));
    SetInt64(nodes.back().mutable_attr(), attr::kDurationNs,
             static_cast<int64_t>(row.time_us * 1e3));
  }
  ASSERT_GE(nodes.size(), 10u);
  ChakraProtoMsg::Node late = nodes.front();  // 1 MiB again, 3x as long
  late.set_id(nodes.size() + 1);
  SetInt64(late.mutable_attr(), attr::kDurationNs,
           3 * static_cast<int64_t>(log->rows[17].time_us * 1e3));
  nodes.push_back(late);
  const Graph graph = testing::MakeGraph(nodes);
  const NodeModel model = NodeModel::FromGraph(graph);
  SimOptions options;
  auto compute = ComputeCostModel::Create(options);
  ASSERT_TRUE(compute.ok()) << compute.status();
  auto program = CompileRankProgram(model, options, *compute);
  ASSERT_TRUE(program.ok()) << program.status();

  const std::vector<NcclTestsLogRow> rows = RecordedCollectives({&*program}, 8);
  ASSERT_EQ(rows.size(), nodes.size() - 1);  // the repeat folded in
  EXPECT_EQ(rows[0].bytes, 1 << 20);
  EXPECT_EQ(rows[0].ranks, 8);
  EXPECT_NEAR(rows[0].time_us, 37.89, 0.01);  // the shorter of the two

  Platform platform = *ParsePlatform(
      "{gpu: A100, intra_efficiency: 0.4, launch_us: 0, "
      "pipeline_ramp_us: 500}",
      "start.yaml");
  auto line = CalibratePlatformToTrace({&*program}, 8, &platform);
  ASSERT_TRUE(line.ok()) << line.status();
  const CommFit check = FitPlatform(platform, rows);
  EXPECT_LE(check.median_error_before, 0.05) << *line;
  EXPECT_NE(line->find("--comm calibrated"), std::string::npos);

  // No recorded durations: an error, not a silent default.
  const Graph bare = testing::MakeGraph(
      {testing::Collective(1, ChakraProtoMsg::ALL_REDUCE, 1 << 20, {})});
  const NodeModel bare_model = NodeModel::FromGraph(bare);
  auto bare_program = CompileRankProgram(bare_model, options, *compute);
  ASSERT_TRUE(bare_program.ok());
  EXPECT_FALSE(CalibratePlatformToTrace({&*bare_program}, 8, &platform).ok());
}

}  // namespace
}  // namespace et::sim
