// Multi-rank replays with the CPU backend under mpirun (4 ranks,
// oversubscribed): the ASTRA-sim microbenchmarks (one collective per rank, 1
// MiB) really run as MPI collectives of that size, and launch errors are
// reported by every rank.
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "mpi_launch.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_writer.h"
#include "replay_test_graphs.h"

namespace et::replay {
namespace {

using testing::CountOccurrences;
using testing::LaunchReplay;
using testing::ReadJsonFile;

const std::string kData = ET_TEST_DATA;

class AstraSimMicrobenchmarkTest
    : public ::testing::TestWithParam<const char*> {};

TEST_P(AstraSimMicrobenchmarkTest, EveryRankRunsTheRecordedCollective) {
  const std::string kind = GetParam();
  const std::string pattern = kData + "/astra-sim/microbenchmarks/" + kind +
                              "/4npus_1MB/" + kind + ".%d.et";
  const std::string json = testing::TempEtPath(kind + ".replay.%d.json");
  auto run = LaunchReplay(
      4, "'" + pattern + "' --device cpu --warmup 1 --iters 2 --json '" + json +
             "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // The files name the collective; comm_size is 1 MiB (the "1MB" of the folder
  // name).
  std::string type = kind;
  for (char& c : type) c = static_cast<char>(toupper(c));
  for (int rank = 0; rank < 4; ++rank) {
    nlohmann::json report = ReadJsonFile(testing::TempEtPath(
        kind + ".replay." + std::to_string(rank) + ".json"));
    ASSERT_FALSE(report.is_discarded()) << "rank " << rank;
    EXPECT_EQ(report["rank"], rank);
    EXPECT_EQ(report["ranks"], 4);
    EXPECT_EQ(report["comm_calls_per_iteration"], 1);
    ASSERT_TRUE(report["collectives"].contains(type))
        << report["collectives"].dump();
    EXPECT_EQ(report["collectives"][type]["count"], 1);
    EXPECT_EQ(report["collectives"][type]["bytes"], 1048576);
    EXPECT_GT(report["collectives"][type]["busbw_gbps"].get<double>(), 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Collectives, AstraSimMicrobenchmarkTest,
                         ::testing::Values("all_reduce", "all_gather",
                                           "reduce_scatter", "all_to_all"));

// An error every rank meets is printed once, by rank 0 (issue 30: mpirun -np 2
// printed each line twice); every rank still exits non-zero.
TEST(MpiReplayErrorTest, TooFewRanksIsReportedOnce) {
  ChakraProtoMsg::GlobalMetadata meta;
  SetInt64(meta.mutable_attr(), attr::kWorldSize, 4);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string path =
        testing::TempEtPath("needs4." + std::to_string(rank) + ".et");
    ASSERT_TRUE(
        WriteEtFile(path, meta,
                    {testing::CollNode(1, ChakraProtoMsg::ALL_REDUCE, 64, {})})
            .ok());
  }
  auto run = LaunchReplay(
      2, "'" + testing::TempEtPath("needs4.%d.et") + "' --device cpu");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(CountOccurrences(run.output, "needs 4 ranks but the launch has 2"),
            1)
      << run.output;
}

TEST(MpiReplayErrorTest, OneRanksMissingTraceStopsEveryRank) {
  // Rank 1's file does not exist: rank 0 must not wait for it in a collective.
  const std::string dir = testing::TempEtPath("");
  const absl::Status written =
      WriteEtFile(dir + "half.0.et", testing::Metadata(),
                  {testing::CollNode(1, ChakraProtoMsg::ALL_REDUCE, 64, {})});
  ASSERT_TRUE(written.ok()) << written;
  std::remove((dir + "half.1.et").c_str());
  auto run = LaunchReplay(2, "'" + dir + "half.%d.et' --device cpu");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(CountOccurrences(run.output, "et-replay: error: rank 1:"), 1)
      << run.output;
}

TEST(MpiReplayErrorTest, MissingDeviceIsReportedOnce) {
  const std::string pattern =
      kData +
      "/astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.%d.et";
  auto run = LaunchReplay(4, "'" + pattern + "' --device cuda:0");
  if (run.exit_code == 0) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(CountOccurrences(run.output, "no CUDA device"), 1) << run.output;
}

// A pattern names every rank's file, like a directory: launched with fewer
// ranks than it has files, the replay refuses (it once replayed rank 0 of a
// 4-rank trace alone, collectives included, without a word).
TEST(MpiReplayErrorTest, PatternWithMoreRanksThanTheLaunchIsRefused) {
  const std::string pattern =
      kData +
      "/astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.%d.et";
  auto run = LaunchReplay(2, "'" + pattern + "' --device cpu");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(CountOccurrences(run.output,
                             "4 per-rank traces for a launch of 2 ranks "
                             "(mpirun -np 4)"),
            1)
      << run.output;
}

}  // namespace
}  // namespace et::replay
