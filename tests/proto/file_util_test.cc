// Temp-file handling of proto/file_util.h: unique names per call, cleanup on
// SIGTERM, and the gzip expansion limits.
#include "proto/file_util.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "proto/input_limits.h"

namespace et {
namespace {

std::string TempDirPath(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

TEST(FileUtilTest, TempPathsAreUniquePerCall) {
  const std::string out = TempDirPath("same.et");
  const std::string a = TempPathFor(out);
  const std::string b = TempPathFor(out);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind(out + ".tmp.", 0), 0u) << a;
  DiscardTempFile(a);
  DiscardTempFile(b);
}

TEST(FileUtilTest, CommitRenamesAndDiscardRemoves) {
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
TEST(FileUtilDeathTest, SigtermRemovesUncommittedTempFiles) {
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

TEST(FileUtilTest, GzipExpansionLimitsNameTheFileAndTheLimit) {
  EXPECT_TRUE(CheckGzipExpansion("a.gz", 100 << 20, 10 << 20).ok());
  EXPECT_TRUE(
      CheckGzipExpansion("small.gz", 10 << 20, 1).ok());  // under 64 MiB
  absl::Status bomb = CheckGzipExpansion("b.gz", uint64_t{80} << 20, 80 << 10);
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.message().find("b.gz: a gzip bomb?"), std::string::npos)
      << bomb;
  absl::Status huge =
      CheckGzipExpansion("c.gz", kMaxExpandedFileBytes + 1, uint64_t{1} << 40);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.message().find("limit on one input file"), std::string::npos)
      << huge;
}

}  // namespace
}  // namespace et
