// base/string_pool.h: dense ids, the empty string at 0, views that survive
// growth and moves, and copies that own their strings.
#include "base/string_pool.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace et {
namespace {

TEST(StringPoolTest, EmptyStringIsIdZeroAndIdsAreDense) {
  StringPool pool;
  EXPECT_EQ(pool.Intern(""), 0u);
  EXPECT_EQ(pool.Intern("aten::mm"), 1u);
  EXPECT_EQ(pool.Intern("aten::add"), 2u);
  EXPECT_EQ(pool.Intern("aten::mm"), 1u);
  EXPECT_EQ(pool.size(), 3u);
  EXPECT_EQ(pool.Get(2), "aten::add");
  EXPECT_EQ(pool.Find("aten::add"), std::optional<uint32_t>(2));
  EXPECT_EQ(pool.Find("aten::bmm"), std::nullopt);
}

TEST(StringPoolTest, ViewsStayValidAsThePoolGrowsAndMoves) {
  StringPool pool;
  // Short strings live inside std::string itself (SSO): a pool that moved
  // its strings would leave this view dangling.
  const absl::string_view first = pool.Get(pool.Intern("mm"));
  for (int i = 0; i < 10000; ++i) pool.Intern("op" + std::to_string(i));
  StringPool moved = std::move(pool);
  EXPECT_EQ(first, "mm");
  EXPECT_EQ(moved.Find("mm"), std::optional<uint32_t>(1));
  EXPECT_EQ(moved.Get(moved.Intern("op9999")), "op9999");
}

TEST(StringPoolTest, CopiesOwnTheirStrings) {
  auto original = std::make_unique<StringPool>();
  original->Intern("nccl:all_reduce");
  StringPool copy = *original;
  original.reset();
  EXPECT_EQ(copy.Find("nccl:all_reduce"), std::optional<uint32_t>(1));
  EXPECT_EQ(copy.Intern("nccl:all_reduce"), 1u);
  EXPECT_EQ(copy.Get(1), "nccl:all_reduce");
}

}  // namespace
}  // namespace et
