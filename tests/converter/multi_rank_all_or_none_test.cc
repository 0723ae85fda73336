// et-convert --ranks N writes all ranks' outputs or none, and its JSON summary
// names the rank that failed and why. Runs the et-convert binary on the 4-rank
// DDP traces, with one rank's input broken on purpose.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

const std::string kTraces = std::string(ET_TEST_DATA) + "/pytorch-1.13-cpu/";
const std::string kConvert = ET_CONVERT_BIN;

std::string FreshDir(const std::string& name) {
  const std::string dir = std::string(ET_BINARY_DIR) + "/multi_rank_test_" +
                          name + "_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Copies the 4 DDP ranks to DIR/in_R.json.gz; `broken` (if >= 0) gets a
// truncated JSON instead.
void StageInputs(const std::string& dir, int broken) {
  for (int r = 0; r < 4; ++r) {
    const std::string to = dir + "/in_" + std::to_string(r) + ".json.gz";
    if (r == broken) {
      std::ofstream(dir + "/in_" + std::to_string(r) + ".json.gz")
          << "{\"schema\": \"1.0.1\", \"nodes\": [{\"id\": 1,";
      continue;
    }
    std::filesystem::copy_file(
        kTraces + "ddp_mlp_et_r" + std::to_string(r) + ".json.gz", to);
  }
}

int RunConvert(const std::string& dir) {
  const std::string cmd = kConvert + " '" + dir + "/in_%d.json.gz' '" + dir +
                          "/out.%d.et' --ranks 4 --jobs 2 --quiet " +
                          "--json-summary " + dir + "/summary.json 2>" + dir +
                          "/stderr.txt";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

int CountEtFiles(const std::string& dir) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".et") != std::string::npos) ++n;  // outputs and staging
  }
  return n;
}

TEST(MultiRankAllOrNoneTest, OneFailingRankLeavesNoOutputAndNamesIt) {
  const std::string dir = FreshDir("fail");
  StageInputs(dir, /*broken=*/2);
  EXPECT_EQ(RunConvert(dir), 1);
  EXPECT_EQ(CountEtFiles(dir), 0) << "outputs or staging files left behind";
  const nlohmann::json s = ReadJson(dir + "/summary.json");
  ASSERT_TRUE(s.is_object()) << "no JSON summary written";
  EXPECT_EQ(s["outputs_written"], false);
  ASSERT_EQ(s["failed"].size(), 1u);
  EXPECT_EQ(s["failed"][0]["rank"], 2);
  EXPECT_NE(s["failed"][0]["error"].get<std::string>().find("in_2.json.gz"),
            std::string::npos);
  EXPECT_EQ(s["ranks"].size(), 3u);  // the others converted, not published
  EXPECT_TRUE(s.contains("cross_rank_mismatches"));  // the check still ran
}

TEST(MultiRankAllOrNoneTest, AllRanksConvertedAreAllWritten) {
  const std::string dir = FreshDir("ok");
  StageInputs(dir, /*broken=*/-1);
  EXPECT_EQ(RunConvert(dir), 0);
  for (int r = 0; r < 4; ++r) {
    struct stat st;
    EXPECT_EQ(stat((dir + "/out." + std::to_string(r) + ".et").c_str(), &st), 0)
        << r;
  }
  EXPECT_EQ(CountEtFiles(dir), 4);  // no staging file left
  const nlohmann::json s = ReadJson(dir + "/summary.json");
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s["outputs_written"], true);
  EXPECT_TRUE(s["failed"].empty());
  ASSERT_EQ(s["ranks"].size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(s["ranks"][r]["rank"], r);
    EXPECT_EQ(s["ranks"][r]["output"],
              dir + "/out." + std::to_string(r) + ".et");
  }
  EXPECT_TRUE(s["cross_rank_mismatches"].empty());
}

}  // namespace
