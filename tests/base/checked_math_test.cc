// Overflow-checked arithmetic (base/checked_math.h): the edges where plain
// int64 arithmetic would wrap, and conversions of doubles that are undefined
// behaviour when cast directly.
#include "base/checked_math.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace et {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedMathTest, CheckedOpsRefuseOverflowAndKeepExactResults) {
  EXPECT_EQ(CheckedAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(CheckedAdd(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd(kMin, -1), std::nullopt);
  EXPECT_EQ(CheckedSub(kMin, 1), std::nullopt);
  EXPECT_EQ(CheckedSub(0, kMin), std::nullopt);
  EXPECT_EQ(CheckedMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(CheckedMul(int64_t{1} << 32, int64_t{1} << 32), std::nullopt);
  EXPECT_EQ(CheckedMul(-3, 7), -21);
}

TEST(CheckedMathTest, SaturatingOpsClampInTheRightDirection) {
  EXPECT_EQ(SaturatingAdd(kMax, 5), kMax);
  EXPECT_EQ(SaturatingAdd(kMin, -5), kMin);
  EXPECT_EQ(SaturatingAdd(40, 2), 42);
  EXPECT_EQ(SaturatingSub(kMin, 1), kMin);
  EXPECT_EQ(SaturatingSub(kMax, -1), kMax);
  EXPECT_EQ(SaturatingMul(kMax / 2, 3), kMax);
  EXPECT_EQ(SaturatingMul(kMax / 2, -3), kMin);
  EXPECT_EQ(SaturatingMul(-(kMax / 2), -3), kMax);
  EXPECT_EQ(SaturatingMul(6, 7), 42);
}

TEST(CheckedMathTest, DoubleToInt64RefusesWhatACastWouldGetWrong) {
  EXPECT_EQ(DoubleToInt64(1e30), std::nullopt);
  EXPECT_EQ(DoubleToInt64(-1e30), std::nullopt);
  EXPECT_EQ(DoubleToInt64(std::nan("")), std::nullopt);
  EXPECT_EQ(DoubleToInt64(std::numeric_limits<double>::infinity()),
            std::nullopt);
  EXPECT_EQ(DoubleToInt64(9223372036854775808.0), std::nullopt);  // 2^63
  EXPECT_EQ(DoubleToInt64(-9223372036854775808.0), kMin);
  EXPECT_EQ(DoubleToInt64(12.9), 12);
}

TEST(CheckedMathTest, MicrosToNanosSaturatesInsteadOfGoingNegative) {
  EXPECT_EQ(MicrosToNanosSaturating(7), 7000);
  EXPECT_EQ(MicrosToNanosSaturating(std::numeric_limits<uint64_t>::max()),
            kMax);
  EXPECT_EQ(MicrosToNanosSaturating(uint64_t{1} << 62), kMax);
  EXPECT_EQ(MicrosToNanosSaturating(static_cast<uint64_t>(kMax / 1000)),
            kMax / 1000 * 1000);
}

}  // namespace
}  // namespace et
