// Recorded groups on a bigger world: recorded dimensions keep their sizes,
// the data-parallel one grows, members are placed by the target layout.
#include "scaleout/group_remap.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/scaleout/process_group_fixture.h"

namespace et::scaleout {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GroupRemapTest, RecordedTp8WorldStaysEightAtDp64) {
  std::vector<ProcessGroup> groups = {
      Group("0", "default_pg", {}),
      Group("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1, 2, 3, 4, 5, 6, 7})};
  RecordedLayout rec = *DetectRecordedLayout(groups, 8, std::nullopt);
  absl::StatusOr<ScaledGroups> s =
      RemapGroups(groups, rec, *ParseLayout("tp=8,dp=64"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->all_ranks.ranks.size(), 8u);
  ASSERT_EQ(s->groups.size(), 3u);
  EXPECT_EQ(s->groups[0].ranks.size(), 8u);  // default_pg: the recorded world
  EXPECT_EQ(s->groups[1].ranks.size(), 8u);
  // No recorded DP collectives: a DP group is added, one rank per 8.
  EXPECT_FALSE(s->dp_recorded);
  EXPECT_EQ(s->dp_group_name, kDpGroupName);
  EXPECT_EQ(s->groups[2].ranks.size(), 64u);
  EXPECT_EQ(s->groups[2].ranks[1], 8);
}

TEST(GroupRemapTest, RecordedDdpWorldBecomesTheNewDp) {
  RecordedLayout rec = *DetectRecordedLayout({}, 4, std::nullopt);
  absl::StatusOr<ScaledGroups> s = RemapGroups({}, rec, *ParseLayout("dp=64"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->all_ranks.ranks.size(), 64u);
  EXPECT_TRUE(s->dp_recorded);
  EXPECT_EQ(s->dp_group_name, kAllRanksGroupName);
  EXPECT_TRUE(s->groups.empty());
}

TEST(GroupRemapTest, TpByDpKeepsTpAndGrowsDp) {
  std::vector<ProcessGroup> groups = {
      Group("0", "default_pg", {}), Group("1", "tensor_model_parallel", {0, 1}),
      Group("2", "data_parallel", {0, 2})};
  RecordedLayout rec = *DetectRecordedLayout(groups, 4, std::nullopt);
  ASSERT_EQ(rec.layout.ToString(), "tp=2,dp=2");
  absl::StatusOr<ScaledGroups> s =
      RemapGroups(groups, rec, *ParseLayout("tp=2,dp=8"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->groups[0].ranks.size(), 16u);
  EXPECT_THAT(s->groups[1].ranks, ElementsAre(0, 1));
  EXPECT_THAT(s->groups[2].ranks, ElementsAre(0, 2, 4, 6, 8, 10, 12, 14));
  EXPECT_TRUE(s->dp_recorded);
  EXPECT_EQ(s->dp_group_name, "2");
}

TEST(GroupRemapTest, OnlyDpScales) {
  RecordedLayout rec = *DetectRecordedLayout(
      {Group("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1, 2, 3, 4, 5, 6, 7})}, 8,
      std::nullopt);
  absl::StatusOr<ScaledGroups> s = RemapGroups(
      {Group("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1, 2, 3, 4, 5, 6, 7})},
      rec, *ParseLayout("tp=4,dp=2"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("the trace records tp=8"));
  RecordedLayout one = *DetectRecordedLayout({}, 1, std::nullopt);
  s = RemapGroups({}, one, *ParseLayout("dp=2,pp=2"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("records no pp"));
}

}  // namespace
}  // namespace et::scaleout
