// Which trace each rank of a launch replays (TracePathForRank in
// replay/replay_session.h): a pattern, a directory of per-rank files (new in
// et-replay, with the rule of base/rank_files.h that et-sim and et-convert
// use), or one file run on every rank with --world.
#include "replay/replay_session.h"

#include <string>

#include "gtest/gtest.h"

namespace et::replay {
namespace {

const std::string kAllReduceDir =
    std::string(ET_TEST_DATA) +
    "/astra-sim/microbenchmarks/all_reduce/4npus_1MB";

ReplayOptions WithTrace(const std::string& trace, int world = 0) {
  ReplayOptions options;
  options.trace = trace;
  options.world = world;
  return options;
}

TEST(TracePathForRankTest, APatternIsExpandedForTheRank) {
  auto path = TracePathForRank(WithTrace("out.%d.et"), 3, 4);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, "out.3.et");
  EXPECT_FALSE(TracePathForRank(WithTrace("out.%d.et", 4), 3, 4).ok());
}

TEST(TracePathForRankTest, ADirectoryGivesEachRankItsFile) {
  for (int rank = 0; rank < 4; ++rank) {
    auto path = TracePathForRank(WithTrace(kAllReduceDir), rank, 4);
    ASSERT_TRUE(path.ok()) << path.status();
    EXPECT_EQ(*path,
              kAllReduceDir + "/all_reduce." + std::to_string(rank) + ".et");
  }
}

// Four files for a launch of two ranks would leave ranks 2 and 3's
// collectives unmatched: refused, naming the count to launch with.
TEST(TracePathForRankTest, ADirectoryMustMatchTheLaunch) {
  auto path = TracePathForRank(WithTrace(kAllReduceDir), 0, 2);
  ASSERT_FALSE(path.ok());
  EXPECT_NE(std::string(path.status().message()).find("mpirun -np 4"),
            std::string::npos)
      << path.status();
  EXPECT_FALSE(TracePathForRank(WithTrace(kAllReduceDir, 4), 0, 4).ok());
}

TEST(TracePathForRankTest, OneFileNeedsWorldForSeveralRanks) {
  EXPECT_FALSE(TracePathForRank(WithTrace("one.et"), 0, 2).ok());
  auto path = TracePathForRank(WithTrace("one.et", 2), 1, 2);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, "one.et");
}

}  // namespace
}  // namespace et::replay
