// base/gzip_input.h: plain and gzip files read alike, truncated and corrupt
// streams refused with the file's name, and the gzip expansion limits.
#include "base/gzip_input.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/input_limits.h"
#include "gtest/gtest.h"

namespace et {
namespace {

std::string TempDirPath(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string Gzip(const std::string& text) {
  const std::string path = TempDirPath("gzip_tmp.gz");
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return bytes;
}

TEST(GzipInputTest, PlainAndGzipFilesReadAlike) {
  const std::string text(100000, 'x');
  const std::string plain = TempDirPath("plain.json");
  const std::string packed = TempDirPath("packed.json.gz");
  WriteBytes(plain, text);
  WriteBytes(packed, Gzip(text));
  std::string a, b;
  ASSERT_TRUE(ReadFileMaybeGzip(plain, &a).ok());
  ASSERT_TRUE(ReadFileMaybeGzip(packed, &b).ok());
  EXPECT_EQ(a, text);
  EXPECT_EQ(b, text);
  std::remove(plain.c_str());
  std::remove(packed.c_str());
}

TEST(GzipInputTest, TruncatedStreamIsRefusedWithTheFileName) {
  const std::string text(100000, 'y');
  const std::string bytes = Gzip(text);
  const std::string cut = TempDirPath("cut.gz");
  WriteBytes(cut, bytes.substr(0, bytes.size() - 12));
  std::string contents = "stale";
  absl::Status s = ReadFileMaybeGzip(cut, &contents);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(s.message().rfind(cut + ": truncated gzip stream", 0), 0u) << s;
  EXPECT_TRUE(contents.empty());
  std::remove(cut.c_str());
}

TEST(GzipInputTest, CorruptStreamIsRefused) {
  std::string bytes = Gzip(std::string(100000, 'z'));
  for (size_t i = 20; i < 40; ++i) bytes[i] = static_cast<char>(0xff);
  const std::string bad = TempDirPath("bad.gz");
  WriteBytes(bad, bytes);
  std::string contents;
  absl::Status s = ReadFileMaybeGzip(bad, &contents);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("corrupt gzip stream"), std::string::npos) << s;
  std::remove(bad.c_str());
}

TEST(GzipInputTest, DirectoriesAndMissingFilesAreNamed) {
  absl::StatusOr<GzipInput> dir = GzipInput::Open(::testing::TempDir());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("is a directory"), std::string::npos);
  absl::StatusOr<GzipInput> missing = GzipInput::Open("/nonexistent/x.et");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(
      missing.status().message().rfind("/nonexistent/x.et: cannot open", 0),
      0u);
}

TEST(GzipInputTest, GzipExpansionLimitsNameTheFileAndTheLimit) {
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
