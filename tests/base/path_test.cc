// Tests of base/path.h: which files may be read as inputs and replaced as
// outputs.
#include "base/path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"

namespace et {
namespace {

std::string Scratch(const char* name) {
  return ::testing::TempDir() + "/path_test_" + std::to_string(getpid()) + name;
}

TEST(PathTest, SpecialFilesAreRefusedAsInputs) {
  EXPECT_NE(
      CheckInputFileKind("/dev/zero").message().find("a character device"),
      std::string::npos);
  const std::string fifo = Scratch(".fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Checked without opening: a FIFO with no writer would block here.
  EXPECT_NE(CheckInputFileKind(fifo).message().find("a FIFO"),
            std::string::npos);
  EXPECT_FALSE(CheckOutputFileKind(fifo).ok());
  std::remove(fifo.c_str());
  EXPECT_TRUE(CheckInputFileKind(Scratch(".absent")).ok());
}

TEST(PathTest, OutputsMustBeRegularFilesOrAbsent) {
  const std::string file = Scratch(".file");
  const std::string link = Scratch(".link");
  FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  EXPECT_TRUE(CheckOutputFileKind(file).ok());
  EXPECT_TRUE(CheckOutputFileKind(Scratch(".absent")).ok());
  EXPECT_NE(CheckOutputFileKind(link).message().find("a symbolic link"),
            std::string::npos);
  EXPECT_FALSE(CheckOutputFileKind("/dev/null").ok());
  // The same file by another name is caught; two files are not one.
  EXPECT_TRUE(IsSameFile(file, link));
  EXPECT_FALSE(IsSameFile(file, "/dev/null"));
  std::remove(link.c_str());
  std::remove(file.c_str());
}

}  // namespace
}  // namespace et
