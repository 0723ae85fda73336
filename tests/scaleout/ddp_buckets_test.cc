// PyTorch DDP's bucket assignment (compute_bucket_assignment_by_size).
#include "scaleout/ddp_buckets.h"

#include <vector>

#include "gtest/gtest.h"

namespace et::scaleout {
namespace {

constexpr int64_t kMiB = 1024 * 1024;

std::vector<int64_t> Sizes(const std::vector<Bucket>& buckets) {
  std::vector<int64_t> sizes;
  for (const Bucket& b : buckets) sizes.push_back(b.bytes);
  return sizes;
}

TEST(DdpBucketsTest, ABucketClosesOnTheGradientThatReachesItsLimit) {
  // First limit 1 MiB, then 3 MiB: {0.5, 0.5} reach 1 MiB exactly (>=).
  const std::vector<BucketInput> in = {{0, kMiB / 2, Dtype::kFloat32},
                                       {1, kMiB / 2, Dtype::kFloat32},
                                       {2, 2 * kMiB, Dtype::kFloat32},
                                       {3, 2 * kMiB, Dtype::kFloat32},
                                       {4, kMiB, Dtype::kFloat32}};
  const std::vector<Bucket> b = RebuiltBuckets(in, 3 * kMiB, kMiB);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(Sizes(b), (std::vector<int64_t>{kMiB, 4 * kMiB, kMiB}));
  EXPECT_EQ(b[0].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(b[1].members, (std::vector<int>{2, 3}));
  EXPECT_EQ(b[1].limit_bytes, 3 * kMiB);
  EXPECT_EQ(b[2].members, (std::vector<int>{4}));
}

TEST(DdpBucketsTest, AGradientBiggerThanTheCapIsABucketOfItsOwn) {
  const std::vector<BucketInput> in = {{0, 10, Dtype::kFloat32},
                                       {1, 100 * kMiB, Dtype::kFloat32},
                                       {2, 10, Dtype::kFloat32}};
  const std::vector<Bucket> b = RebuiltBuckets(in, 25 * kMiB, 1);
  // 10 bytes reach the 1-byte first limit alone; the 100 MiB one then
  // fills (and overflows) a 25 MiB bucket by itself.
  EXPECT_EQ(Sizes(b), (std::vector<int64_t>{10, 100 * kMiB, 10}));
}

TEST(DdpBucketsTest, EachDtypeFillsItsOwnBuckets) {
  const std::vector<BucketInput> in = {{0, 600, Dtype::kFloat16},
                                       {1, 800, Dtype::kFloat32},
                                       {2, 600, Dtype::kFloat16},
                                       {3, 100, Dtype::kFloat32}};
  const std::vector<Bucket> b = RebuiltBuckets(in, 10000, 1000);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].dtype, Dtype::kFloat16);  // closed first (1200 >= 1000)
  EXPECT_EQ(b[0].members, (std::vector<int>{0, 2}));
  EXPECT_EQ(b[1].dtype, Dtype::kFloat32);  // still open at the end
  EXPECT_EQ(b[1].members, (std::vector<int>{1, 3}));
}

TEST(DdpBucketsTest, TheFirstIterationHasOneBucketUnlessUnusedAreSearched) {
  const std::vector<BucketInput> reg = {{0, 3 * kMiB, Dtype::kFloat32},
                                        {1, 3 * kMiB, Dtype::kFloat32},
                                        {2, kMiB, Dtype::kFloat32}};
  EXPECT_EQ(Sizes(InitialBuckets(reg, 4 * kMiB, kMiB, false)),
            (std::vector<int64_t>{7 * kMiB}));
  // find_unused_parameters: {0} reaches 1 MiB, {1, 2} reach 4 MiB; sorted by
  // smallest index and reversed: the last-registered bucket goes first.
  const std::vector<Bucket> b = InitialBuckets(reg, 4 * kMiB, kMiB, true);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].members, (std::vector<int>{1, 2}));
  EXPECT_EQ(b[1].members, (std::vector<int>{0}));
}

}  // namespace
}  // namespace et::scaleout
