// The per-rank file rule every tool shares (base/rank_files.h): patterns,
// ranks in file names, directories of per-rank files. Where the tools used to
// disagree, the test of the rule says which tool changed.
#include "base/rank_files.h"

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "base/input_limits.h"
#include "gtest/gtest.h"

namespace et {
namespace {

// A fresh directory holding empty files with these names.
std::string DirWith(const std::string& name,
                    const std::vector<std::string>& files) {
  const std::string dir = ::testing::TempDir() + "/rank_files_" + name;
  mkdir(dir.c_str(), 0755);
  for (const std::string& f : files) std::ofstream(dir + "/" + f) << "x";
  return dir;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(RankPatternTest, ExpandsEveryPlaceholder) {
  EXPECT_TRUE(IsRankPattern("out.%d.et"));
  EXPECT_FALSE(IsRankPattern("out.3.et"));
  EXPECT_EQ(ExpandRankPattern("out.%d.et", 3), "out.3.et");
  EXPECT_EQ(ExpandRankPattern("r%d/out.%d.et", 12), "r12/out.12.et");
  EXPECT_EQ(ExpandRankPattern("out.et", 3), "out.et");
}

TEST(RankPatternTest, ExpandsForRanksInOrder) {
  auto paths = ExpandRankPatternForRanks("t.%d.et", 3);
  ASSERT_TRUE(paths.ok()) << paths.status();
  EXPECT_EQ(*paths, (std::vector<std::string>{"t.0.et", "t.1.et", "t.2.et"}));
}

TEST(RankPatternTest, RefusesAPathWithoutPlaceholderOrABadRankCount) {
  auto no_placeholder = ExpandRankPatternForRanks("t.et", 2);
  ASSERT_FALSE(no_placeholder.ok());
  EXPECT_NE(Message(no_placeholder.status()).find("need a %d"),
            std::string::npos);
  for (int64_t ranks : {int64_t{0}, int64_t{-1}, kMaxRanks + 1}) {
    auto bad = ExpandRankPatternForRanks("t.%d.et", ranks);
    ASSERT_FALSE(bad.ok()) << ranks;
    EXPECT_NE(Message(bad.status()).find("--ranks"), std::string::npos);
  }
}

// et-viz read only "x.<digits>.et"; et-sim any digits ending the stem;
// et-convert the last number anywhere in the name. The rule: the last piece
// after '.',
// '_' or '-', bare digits or after "r"/"rank".
// Per-rank files typed one by one (`et-sim ddp.0.et ddp.1.et`) are one
// job's input: the usage error says the pattern that names them.
TEST(RankPatternTest, FilesOfRanksZeroToNAreNamedByTheirPattern) {
  EXPECT_EQ(RankPatternOf({"out/ddp.1.et", "out/ddp.0.et"}), "out/ddp.%d.et");
  EXPECT_EQ(RankPatternOf({"r0/et_r0.json", "r0/et_r1.json"}),
            "r0/et_r%d.json");
  EXPECT_EQ(RankPatternOf({"a.0.et", "b.1.et"}), std::nullopt);
  EXPECT_EQ(RankPatternOf({"a.0.et", "a.2.et"}), std::nullopt);  // no rank 1
  EXPECT_EQ(RankPatternOf({"a.0.et"}), std::nullopt);
  EXPECT_EQ(RankPatternOf({"gpt2.et", "gpt3.et"}), std::nullopt);
  EXPECT_EQ(RanksAsOneInputHint({"ddp.0.et", "ddp.1.et"}),
            "; the ranks of one job are one argument: 'ddp.%d.et' --ranks 2, "
            "or their folder");
  EXPECT_EQ(RanksAsOneInputHint({"et_r0.json", "et_r1.json", "out.et"},
                                "'OUT.%d.et'"),
            "; the ranks of one job are one argument: 'et_r%d.json' "
            "'OUT.%d.et' --ranks 2, or their folder");
  EXPECT_EQ(RanksAsOneInputHint({"a.et", "b.et"}), "");
}

TEST(RankFromFileNameTest, TheLastPieceOfTheStemIsTheRank) {
  EXPECT_EQ(RankFromFileName("dir/all_reduce.3.et"), 3);
  EXPECT_EQ(RankFromFileName("trace.12.et.gz"), 12);
  EXPECT_EQ(RankFromFileName("rank_3.json"), 3);
  EXPECT_EQ(RankFromFileName("ddp_mlp_et_r2.json.gz"), 2);  // examples/data
  EXPECT_EQ(RankFromFileName("rank7.et"), 7);
  EXPECT_EQ(RankFromFileName("trace-5.et"), 5);
  EXPECT_EQ(RankFromFileName("0.et"), 0);
  // Changed for et-viz: these carried no rank there (only ".<digits>.et").
  EXPECT_EQ(RankFromFileName("mlp_4.et"), 4);
}

TEST(RankFromFileNameTest, NamesWithoutARankPiece) {
  EXPECT_EQ(RankFromFileName("resnet.et"), std::nullopt);
  EXPECT_EQ(RankFromFileName("a.b.et"), std::nullopt);
  EXPECT_EQ(RankFromFileName("dir.3/trace.et"), std::nullopt);
  EXPECT_EQ(RankFromFileName("trace.3.txt"), std::nullopt);
  EXPECT_EQ(RankFromFileName("trace.3.et.tmp.99.0"), std::nullopt);
  // Changed for et-sim (directory mode read 50 and 2) and et-convert: a model
  // name ending in digits is not a rank.
  EXPECT_EQ(RankFromFileName("resnet50.et"), std::nullopt);
  EXPECT_EQ(RankFromFileName("gpt2.json"), std::nullopt);
  // Changed for et-convert: it took the last number anywhere in the name; a
  // number followed by words that are no profiler's suffix is none.
  EXPECT_EQ(RankFromFileName("bert_12_layer.json"), std::nullopt);
  EXPECT_EQ(RankFromFileName("worker0.1623143089861.pt.trace.json"),
            std::nullopt);  // the kineto sample: a worker and a timestamp
}

// Issue 48, item 11: the public traces' own names, the rank followed by the
// profiler's suffixes (astra-sim's result/ and megatron-tp8/, Chakra's ET+).
TEST(RankFromFileNameTest, ProfilerSuffixesMayFollowTheRank) {
  EXPECT_EQ(RankFromFileName("eg.rank_1.pt.trace.json"), 1);
  EXPECT_EQ(RankFromFileName("megatron_kineto_7.json"), 7);
  EXPECT_EQ(RankFromFileName("dlrm_eg_5_plus.json.gz"), 5);
  EXPECT_EQ(RankFromFileName("rank_3_trace.json"), 3);
}

TEST(ListRankFileGroupsTest, TwoFilesOfOneRankAreGrouped) {
  const std::string dir =
      DirWith("groups", {"megatron_et_0.json", "megatron_kineto_0.json",
                         "megatron_et_1.json", "megatron_kineto_1.json"});
  auto groups = ListRankFileGroups(dir, ".json");
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[1],
            (std::vector<std::string>{dir + "/megatron_et_1.json",
                                      dir + "/megatron_kineto_1.json"}));
  EXPECT_FALSE(ListRankFiles(dir, ".json").ok());  // one file per rank there
}

TEST(RankFromFileNameTest, RanksStayBelowTheLimit) {
  EXPECT_EQ(RankFromFileName("t.1048575.et"), 1048575);  // kMaxRanks - 1
  EXPECT_EQ(RankFromFileName("t.1048576.et"), std::nullopt);
  EXPECT_EQ(RankFromFileName("t.99999999999999999999.et"), std::nullopt);
}

TEST(ListRankFilesTest, OrdersByRankNotByName) {
  const std::string dir =
      DirWith("order", {"t.10.et", "t.2.et.gz", "t.0.et", "t.1.et", "t.3.et",
                        "t.4.et", "t.5.et", "t.6.et", "t.7.et", "t.8.et",
                        "t.9.et", "notes.txt", ".partial-12-t.0.et"});
  auto files = ListRankFiles(dir, ".et");
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 11u);
  EXPECT_EQ((*files)[0], dir + "/t.0.et");
  EXPECT_EQ((*files)[2], dir + "/t.2.et.gz");
  EXPECT_EQ((*files)[10], dir + "/t.10.et");
}

TEST(ListRankFilesTest, OnlyTheToolsExtensionCounts) {
  const std::string dir =
      DirWith("ext", {"t.0.json", "t.1.json.gz", "t.0.et", "t.0.json.txt"});
  auto json = ListRankFiles(dir, ".json");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->size(), 2u);
  auto et = ListRankFiles(dir, ".et");
  ASSERT_TRUE(et.ok()) << et.status();
  EXPECT_EQ(et->size(), 1u);
}

// et-convert converted both (and a gap silently); et-sim refused. Now both
// refuse.
TEST(ListRankFilesTest, TwoFilesForOneRankAreRefused) {
  const std::string dir = DirWith("dup", {"r.0.json", "r.0.json.gz"});
  auto files = ListRankFiles(dir, ".json");
  ASSERT_FALSE(files.ok());
  EXPECT_NE(Message(files.status())
                .find("r.0.json and r.0.json.gz would both be rank 0"),
            std::string::npos)
      << files.status();
}

TEST(ListRankFilesTest, AMissingRankIsRefused) {
  const std::string dir = DirWith("gap", {"t.0.et", "t.2.et"});
  auto files = ListRankFiles(dir, ".et");
  ASSERT_FALSE(files.ok());
  EXPECT_NE(Message(files.status()).find("no file for rank 1"),
            std::string::npos)
      << files.status();
}

// et-sim skipped such a file and et-convert gave it its position in name
// order: both now refuse, naming it.
TEST(ListRankFilesTest, AFileWithoutARankIsRefused) {
  const std::string dir = DirWith("norank", {"t.0.et", "summary.et"});
  auto files = ListRankFiles(dir, ".et");
  ASSERT_FALSE(files.ok());
  EXPECT_NE(Message(files.status()).find("summary.et carries no rank"),
            std::string::npos)
      << files.status();
}

TEST(ListRankFilesTest, EmptyOrMissingDirectoriesAreRefused) {
  const std::string dir = DirWith("empty", {"notes.txt"});
  auto empty = ListRankFiles(dir, ".et");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(Message(empty.status()).find("no per-rank .et"), std::string::npos);
  auto missing = ListRankFiles(dir + "/nope", ".et");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(ResolveRankPathsTest, PatternDirectoryOrOneFile) {
  auto pattern = ResolveRankPaths("t.%d.et", 2, ".et");
  ASSERT_TRUE(pattern.ok()) << pattern.status();
  EXPECT_EQ(*pattern, (std::vector<std::string>{"t.0.et", "t.1.et"}));
  auto no_ranks = ResolveRankPaths("t.%d.et", 0, ".et");
  ASSERT_FALSE(no_ranks.ok());
  EXPECT_NE(Message(no_ranks.status()).find("needs --ranks"),
            std::string::npos);
  const std::string dir = DirWith("resolve", {"t.1.et", "t.0.et"});
  auto listed = ResolveRankPaths(dir, 0, ".et");
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(*listed,
            (std::vector<std::string>{dir + "/t.0.et", dir + "/t.1.et"}));
  auto one = ResolveRankPaths("single.et", 0, ".et");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector<std::string>{"single.et"});
}

}  // namespace
}  // namespace et
