// --layout parsing and Megatron's rank placement.
#include "scaleout/parallel_layout.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace et::scaleout {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseLayoutTest, ReadsEveryDimensionInAnyOrder) {
  absl::StatusOr<ParallelLayout> l = ParseLayout("tp=8,dp=64,pp=2,ep=4");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->of(Dim::kTp), 8);
  EXPECT_EQ(l->of(Dim::kDp), 64);
  EXPECT_EQ(l->of(Dim::kPp), 2);
  EXPECT_EQ(l->of(Dim::kEp), 4);
  EXPECT_EQ(l->world(), 8 * 64 * 2 * 4);
  EXPECT_EQ(l->ToString(), "tp=8,dp=64,pp=2,ep=4");
  EXPECT_EQ(ParseLayout("dp=4")->ToString(), "dp=4");
  EXPECT_EQ(ParseLayout("tp=1,dp=1")->ToString(), "dp=1");
}

TEST(ParseLayoutTest, MistakesAreOneLineErrors) {
  for (const char* bad :
       {"", "dp", "dp=", "=4", "dp=0", "dp=-2", "dp=x", "xp=2", "dp=2,dp=4",
        "dp=1048576,tp=2", "dp=99999999999999999999"}) {
    absl::StatusOr<ParallelLayout> l = ParseLayout(bad);
    ASSERT_FALSE(l.ok()) << bad;
    EXPECT_EQ(l.status().message().find('\n'), std::string::npos);
  }
  EXPECT_THAT(ParseLayout("dp=2,dp=4").status().message(),
              HasSubstr("dp given twice"));
  EXPECT_THAT(ParseLayout("xp=2").status().message(),
              HasSubstr("unknown dimension 'xp'"));
  EXPECT_THAT(ParseLayout("tp=1024,dp=1024,pp=2").status().message(),
              HasSubstr("exceeds"));
}

TEST(PlacementTest, TensorParallelInnermostThenDataThenPipeline) {
  const ParallelLayout l = *ParseLayout("tp=2,dp=3,pp=2");
  EXPECT_EQ(l.stride(Dim::kTp), 1);
  EXPECT_EQ(l.stride(Dim::kDp), 2);
  EXPECT_EQ(l.stride(Dim::kPp), 6);
  // Rank 9 = tp 1, dp 1, pp 1.
  EXPECT_EQ(l.coord(9, Dim::kTp), 1);
  EXPECT_EQ(l.coord(9, Dim::kDp), 1);
  EXPECT_EQ(l.coord(9, Dim::kPp), 1);
  EXPECT_THAT(l.GroupOf(9, MaskOf(Dim::kTp)), ElementsAre(8, 9));
  EXPECT_THAT(l.GroupOf(9, MaskOf(Dim::kDp)), ElementsAre(7, 9, 11));
  EXPECT_THAT(l.GroupOf(9, MaskOf(Dim::kPp)), ElementsAre(3, 9));
  EXPECT_THAT(l.GroupOf(9, MaskOf(Dim::kTp) | MaskOf(Dim::kDp)),
              ElementsAre(6, 7, 8, 9, 10, 11));
  EXPECT_THAT(l.GroupOf(9, 0), ElementsAre(9));
}

TEST(PlacementTest, EveryRankIsInExactlyOneGroupPerDimension) {
  const ParallelLayout l = *ParseLayout("tp=4,ep=2,dp=3,pp=2");
  for (Dim d : kDims) {
    std::vector<int> seen(l.world(), 0);
    for (int64_t r = 0; r < l.world(); ++r) {
      std::vector<int64_t> g = l.GroupOf(r, MaskOf(d));
      ASSERT_EQ(static_cast<int64_t>(g.size()), l.of(d));
      if (g.front() == r) {
        for (int64_t m : g) ++seen[m];
      }
      EXPECT_NE(std::find(g.begin(), g.end(), r), g.end());
    }
    for (int s : seen) EXPECT_EQ(s, 1) << DimName(d);
  }
}

TEST(ParseSweepTest, OneDimensionAndItsPoints) {
  absl::StatusOr<LayoutSweep> s = ParseSweep("dp=1,2,4,8");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dim, Dim::kDp);
  EXPECT_THAT(s->values, ElementsAre(1, 2, 4, 8));
  EXPECT_FALSE(ParseSweep("dp").ok());
  EXPECT_FALSE(ParseSweep("dp=1,,2").ok());
  EXPECT_FALSE(ParseSweep("zz=1,2").ok());
}

}  // namespace
}  // namespace et::scaleout
