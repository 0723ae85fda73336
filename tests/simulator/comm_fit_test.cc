// --comm-from: the nccl-tests output parser on the formats users have (mpirun
// prefixes, tables with and without the root column, op named or not), and
// the fit bringing a log within 5% median from a platform that starts wrong.
#include "simulator/comm_fit.h"

#include <string>

#include "gtest/gtest.h"
#include "simulator/nccl_tests_log.h"

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
  const std::string line = DescribeFit(*start, fit);
  EXPECT_NE(line.find("intra_efficiency 0.4 -> 0.7"), std::string::npos)
      << line;
}

}  // namespace
}  // namespace et::sim
