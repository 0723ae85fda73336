// Tests of base/text_escape.h: what input text may and may not print as.
#include "base/text_escape.h"

#include "gtest/gtest.h"

namespace et {
namespace {

TEST(TextEscapeTest, ControlCharactersCannotForgeALine) {
  EXPECT_EQ(EscapeForPrint("1\net-convert: wrote everything fine"),
            "1\\net-convert: wrote everything fine");
  EXPECT_EQ(EscapeForPrint("red\x1b[31m\r\t\x7f"), "red\\x1b[31m\\r\\t\\x7f");
  // C1 controls (U+009B is a one-character CSI on some terminals).
  EXPECT_EQ(EscapeForPrint("a\xc2\x9b"
                           "b"),
            "a\\xc2\\x9bb");
}

TEST(TextEscapeTest, Utf8IsKeptAndDamageIsEscaped) {
  EXPECT_EQ(EscapeForPrint("aten::mm µs ✓ 𝄞"), "aten::mm µs ✓ 𝄞");
  EXPECT_EQ(EscapeForPrint("A\xff"
                           "B"),
            "A\\xffB");
  // Overlong '/', a surrogate, past U+10FFFF, a cut sequence.
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));
  EXPECT_FALSE(IsValidUtf8("ab\xe2\x9c"));
  EXPECT_TRUE(IsValidUtf8("plain ✓ 𝄞"));
  EXPECT_EQ(EscapeForPrint("ab\xe2\x9c"), "ab\\xe2\\x9c");
}

}  // namespace
}  // namespace et
