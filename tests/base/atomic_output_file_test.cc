// Temp-file handling of base/atomic_output_file.h: unique names per call,
// commit and discard, cleanup on SIGTERM.
#include "base/atomic_output_file.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace et {
namespace {

std::string TempDirPath(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

TEST(AtomicOutputFileTest, TempPathsAreUniquePerCall) {
  const std::string out = TempDirPath("same.et");
  const std::string a = TempPathFor(out);
  const std::string b = TempPathFor(out);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind(out + ".tmp.", 0), 0u) << a;
  DiscardTempFile(a);
  DiscardTempFile(b);
}

TEST(AtomicOutputFileTest, CommitRenamesAndDiscardRemoves) {
  const std::string out = TempDirPath("commit.txt");
  const std::string tmp = TempPathFor(out);
  std::ofstream(tmp) << "hello";
  ASSERT_TRUE(CommitTempFile(tmp, out).ok());
  EXPECT_TRUE(Exists(out));
  EXPECT_FALSE(Exists(tmp));
  const std::string tmp2 = TempPathFor(out);
  std::ofstream(tmp2) << "x";
  DiscardTempFile(tmp2);
  EXPECT_FALSE(Exists(tmp2));
  std::remove(out.c_str());
}

// An interrupted run must not leave its temp file behind: the handler
// installed with the first temp path unlinks it, then the process dies of the
// signal as it would have.
TEST(AtomicOutputFileDeathTest, SigtermRemovesUncommittedTempFiles) {
  const std::string out = TempDirPath("interrupted.et");
  std::string tmp_seen;
  EXPECT_EXIT(
      {
        const std::string tmp = TempPathFor(out);
        std::ofstream(tmp) << "partial";
        std::ofstream(out + ".which") << tmp;
        raise(SIGTERM);
      },
      ::testing::KilledBySignal(SIGTERM), "");
  std::ifstream which(out + ".which");
  std::getline(which, tmp_seen);
  ASSERT_FALSE(tmp_seen.empty());
  EXPECT_FALSE(Exists(tmp_seen)) << tmp_seen;
  EXPECT_FALSE(Exists(out));
  std::remove((out + ".which").c_str());
}

}  // namespace
}  // namespace et
