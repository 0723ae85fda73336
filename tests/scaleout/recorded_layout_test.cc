// The recorded layout from process-group tables as PyTorch writes them
// (Megatron's and DeepSpeed's descriptions, or bare rank lists), and the
// errors for a --recorded-layout the groups contradict.
#include "scaleout/recorded_layout.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/scaleout/process_group_fixture.h"

namespace et::scaleout {
namespace {

using ::testing::HasSubstr;

// Rank 5's table in a Megatron tp=2, dp=2, pp=2 job of 8 ranks.
std::vector<ProcessGroup> MegatronRank5() {
  return {Group("0", "default_pg", {}),
          Group("1", "TENSOR_MODEL_PARALLEL_GROUP", {4, 5}),
          Group("2", "DATA_PARALLEL_GROUP", {5, 7}),
          Group("3", "PIPELINE_MODEL_PARALLEL_GROUP", {1, 5}),
          Group("4", "EMBEDDING_GROUP", {1, 5})};
}

TEST(RecordedLayoutTest, MegatronDescriptions) {
  absl::StatusOr<RecordedLayout> r =
      DetectRecordedLayout(MegatronRank5(), 8, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->layout.ToString(), "tp=2,dp=2,pp=2");
  ASSERT_EQ(r->roles.size(), 5u);
  EXPECT_EQ(r->roles[0].mask, r->layout.NonTrivial());
  EXPECT_EQ(r->roles[1].mask, MaskOf(Dim::kTp));
  EXPECT_EQ(r->roles[2].mask, MaskOf(Dim::kDp));
  EXPECT_EQ(r->roles[3].mask, MaskOf(Dim::kPp));
  // The embedding group spans stages 0 and 1 here, so it fits pp; in general
  // it is kept as recorded.
  EXPECT_FALSE(r->roles[1].kept);
}

TEST(RecordedLayoutTest, BareRankListsByStride) {
  // tp=4 x dp=2 without descriptions ("undefined", as PyTorch writes them).
  std::vector<ProcessGroup> groups = {
      Group("0", "default_pg", {}), Group("1", "undefined", {0, 1, 2, 3}),
      Group("2", "undefined", {4, 5, 6, 7}), Group("3", "undefined", {1, 5})};
  absl::StatusOr<RecordedLayout> r =
      DetectRecordedLayout(groups, 8, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->layout.ToString(), "tp=4,dp=2");
  EXPECT_EQ(r->roles[3].mask, MaskOf(Dim::kDp));
}

TEST(RecordedLayoutTest, TensorParallelGroupOfTheWholeWorld) {
  // Megatron TP8 on 8 GPUs: the tensor group is every rank.
  std::vector<ProcessGroup> groups = {
      Group("0", "default_pg", {}),
      Group("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1, 2, 3, 4, 5, 6, 7})};
  absl::StatusOr<RecordedLayout> r =
      DetectRecordedLayout(groups, 8, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->layout.ToString(), "tp=8");
  EXPECT_EQ(r->all_ranks_mask, MaskOf(Dim::kTp));
}

TEST(RecordedLayoutTest, DataParallelGroupOfOneRankUnderTp8) {
  // Megatron's table on a TP8 run of 8 ranks (what examples/record_trace.py
  // --tp 8 writes): rank 3's data-parallel group is itself. It is a dp group
  // of that layout (dp=1), and on a new job it becomes the new dp group.
  std::vector<ProcessGroup> groups = {
      Group("0", "default_pg", {}),
      Group("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1, 2, 3, 4, 5, 6, 7}),
      Group("5", "DATA_PARALLEL_GROUP", {3})};
  absl::StatusOr<RecordedLayout> r =
      DetectRecordedLayout(groups, 8, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->layout.ToString(), "tp=8");
  EXPECT_EQ(r->roles[1].mask, MaskOf(Dim::kTp));
  EXPECT_EQ(r->roles[2].mask, MaskOf(Dim::kDp));
  EXPECT_FALSE(r->roles[2].kept);
  // A dp group of two ranks contradicts tp=8 on 8 ranks.
  groups[2] = Group("5", "DATA_PARALLEL_GROUP", {3, 4});
  EXPECT_FALSE(DetectRecordedLayout(groups, 8, std::nullopt).ok());
}

TEST(RecordedLayoutTest, NoGroupsIsDataParallelOverTheRecordedWorld) {
  absl::StatusOr<RecordedLayout> r = DetectRecordedLayout({}, 4, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->layout.ToString(), "dp=4");
  EXPECT_EQ(r->all_ranks_mask, MaskOf(Dim::kDp));
  r = DetectRecordedLayout({}, 0, std::nullopt);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->layout.world(), 1);
}

TEST(RecordedLayoutTest, GivenLayoutIsCheckedAgainstTheGroups) {
  absl::StatusOr<RecordedLayout> ok =
      DetectRecordedLayout(MegatronRank5(), 8, *ParseLayout("tp=2,dp=2,pp=2"));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->source, "--recorded-layout");
  // The named tensor group says 2, the flag says 4.
  absl::StatusOr<RecordedLayout> contradicted =
      DetectRecordedLayout(MegatronRank5(), 8, *ParseLayout("tp=4,dp=2"));
  ASSERT_FALSE(contradicted.ok());
  EXPECT_THAT(contradicted.status().message(),
              HasSubstr("TENSOR_MODEL_PARALLEL_GROUP"));
  // A product other than the recorded world.
  absl::StatusOr<RecordedLayout> product =
      DetectRecordedLayout({}, 8, *ParseLayout("tp=4"));
  ASSERT_FALSE(product.ok());
  EXPECT_THAT(product.status().message(),
              HasSubstr("spans 4 ranks, but the trace was recorded on 8"));
  // tp=3 divides no group of 4 (a world of 12: 3 x 4).
  std::vector<ProcessGroup> groups = {Group("1", "undefined", {0, 1, 2, 3})};
  absl::StatusOr<RecordedLayout> divide =
      DetectRecordedLayout(groups, 12, *ParseLayout("tp=3,dp=4"));
  ASSERT_FALSE(divide.ok());
  EXPECT_THAT(divide.status().message(), HasSubstr("do not divide"));
}

TEST(RecordedLayoutTest, ContradictoryGroupsAreAnError) {
  std::vector<ProcessGroup> groups = {
      Group("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1}),
      Group("2", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1, 2, 3})};
  absl::StatusOr<RecordedLayout> r =
      DetectRecordedLayout(groups, 8, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("have 2 and 4 ranks"));
  // A tp group of 3 in a world of 8.
  r = DetectRecordedLayout({Group("1", "tp", {0, 1, 2})}, 8, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("do not divide"));
}

TEST(RecordedLayoutTest, DescriptionsOfMegatronAndDeepSpeed) {
  auto role = [](const char* desc) {
    return RoleFromDescription(Group("9", desc, {}));
  };
  EXPECT_EQ(role("TENSOR_MODEL_PARALLEL_GROUP"), MaskOf(Dim::kTp));
  EXPECT_EQ(role("DATA_PARALLEL_GROUP_WITH_CP"), MaskOf(Dim::kDp));
  EXPECT_EQ(role("PIPELINE_MODEL_PARALLEL_GROUP"), MaskOf(Dim::kPp));
  EXPECT_EQ(role("ep_size_4"), MaskOf(Dim::kEp));
  EXPECT_EQ(role("EXPERT_MODEL_PARALLEL_GROUP"), MaskOf(Dim::kEp));
  EXPECT_EQ(role("expert_data_parallel_group_ep_size_4"), 0u);
  EXPECT_EQ(role("TENSOR_AND_DATA_PARALLEL_GROUP"),
            MaskOf(Dim::kTp) | MaskOf(Dim::kDp));
  EXPECT_EQ(role("default_pg"), 0u);
  EXPECT_EQ(role("undefined"), 0u);
}

}  // namespace
}  // namespace et::scaleout
