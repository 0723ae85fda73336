// Pairing an ET with the Kineto trace of another rank: the ranks of a job run
// the same ops, so the link matches 100% and nothing looked wrong. The Kineto
// file's distributedInfo names its rank; a different one is an error. Also: a
// full match is reported as a note, not as a warning.
#include <fstream>
#include <string>

#include "base/gzip_input.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

// simple_add_kineto (distributedInfo rank 0) rewritten to claim `rank`.
std::string KinetoOfRank(int rank) {
  std::string text;
  absl::Status read =
      ReadFileMaybeGzip(DataPath("hta/simple_add_kineto.json.gz"), &text);
  EXPECT_TRUE(read.ok()) << read;
  const std::string from = "\"distributedInfo\": {\"rank\": 0}";
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) {
    text.replace(
        at, from.size(),
        "\"distributedInfo\": {\"rank\": " + std::to_string(rank) + "}");
  }
  const std::string path =
      TempOut("simple_add_kineto_rank" + std::to_string(rank) + ".json");
  std::ofstream(path) << text;
  return path;
}

TEST(KinetoRankTest, KinetoOfAnotherRankIsAnError) {
  ConvertOptions options;
  options.rank = 0;
  options.kineto_path = KinetoOfRank(5);
  auto s = ConvertFile(DataPath("hta/simple_add_et.json.gz"),
                       TempOut("rank_mismatch.et"), options);
  ASSERT_FALSE(s.ok());
  const std::string message(s.status().message());
  EXPECT_NE(message.find("rank 5"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 0"), std::string::npos) << message;
}

TEST(KinetoRankTest, SameRankLinks) {
  ConvertOptions options;
  options.rank = 5;
  options.kineto_path = KinetoOfRank(5);
  auto s = ConvertFile(DataPath("hta/simple_add_et.json.gz"),
                       TempOut("rank_match.et"), options);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT(s->kineto_host_ops_matched, 0);
}

TEST(KinetoRankTest, FullMatchIsANoteNotAWarning) {
  ConvertOptions options;
  options.kineto_path = DataPath("hta/simple_add_kineto.json.gz");
  auto s = ConvertFile(DataPath("hta/simple_add_et.json.gz"),
                       TempOut("full_match.et"), options);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->kineto_host_ops_matched, s->kineto_host_ops);
  ASSERT_FALSE(s->notes.empty());
  EXPECT_NE(s->notes[0].find("host ops matched (100.0%)"), std::string::npos)
      << s->notes[0];
  const std::string text = s->ToText();
  EXPECT_EQ(text.find("warning: Kineto"), std::string::npos) << text;
  EXPECT_NE(text.find("  Kineto: "), std::string::npos) << text;
}

}  // namespace
}  // namespace et::convert
