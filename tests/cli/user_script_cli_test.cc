// A new user's own script (issue 49; tests/data/user-script: a conv stem and a
// transformer layer, SGD, recorded with examples/et_record.py on one rank and
// on two DDP ranks) through the README's commands: every number compared with
// its own truth or said to have none, nothing warned that is not true, and
// the mistakes of item 6 and 8 refused. Runs the built binaries.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_tool.h"

namespace {

using et::testing::RunTool;

std::string Data(const std::string& name) {
  return std::string(ET_TEST_DATA) + "/user-script/" + name;
}

std::string Tmp(const std::string& name) {
  std::string dir = ::testing::TempDir();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return absl::StrCat(dir, "/user_script_", getpid(), "_", name);
}

std::string RunOn(const std::string& tool, const std::string& args, int* code) {
  return RunTool(absl::StrCat(tool, " ", args), code);
}

// The two DDP ranks converted as one argument into `pattern`; et-convert's
// output in `log`.
bool ConvertDdpRanks(const std::string& pattern, std::string* log) {
  int code = -1;
  *log = RunOn(ET_CONVERT_BIN,
               absl::StrCat("'", Data("ddp_et_r%d.json.gz"), "' '", pattern,
                            "' --ranks 2 --kineto '",
                            Data("ddp_kineto_r%d.json.gz"), "'"),
               &code);
  return code == 0;
}

// The one-rank recording, converted as examples/README.md says.
const std::string& OneRank() {
  static const std::string path = [] {
    const std::string out = Tmp("one.et");
    int code = -1;
    const std::string log =
        RunOn(ET_CONVERT_BIN,
              Data("one_et_r0.json.gz") + " " + out + " --kineto " +
                  Data("one_kineto_r0.json.gz"),
              &code);
    EXPECT_EQ(code, 0) << log;
    return out;
  }();
  return path;
}

// Item 6: a pair recorded by et_record carries the process id on both
// sides; nothing warns that it might be another run's (the warning that every
// conversion of a user's own traces printed, "a legacy trace from before
// examples/record_trace.py wrote them", taught users to ignore it).
TEST(UserScriptTest, ItsOwnPairConvertsWithoutARunWarning) {
  int code = -1;
  const std::string log =
      RunOn(ET_CONVERT_BIN,
            Data("one_et_r0.json.gz") + " " + Tmp("w.et") + " --kineto " +
                Data("one_kineto_r0.json.gz"),
            &code);
  EXPECT_EQ(code, 0) << log;
  EXPECT_FALSE(absl::StrContains(log, "same run")) << log;
  EXPECT_FALSE(absl::StrContains(log, "legacy")) << log;
  // Another run's trace (the DDP run's rank 0) is refused by its process id.
  const std::string other =
      RunOn(ET_CONVERT_BIN,
            Data("one_et_r0.json.gz") + " " + Tmp("x.et") + " --kineto " +
                Data("ddp_kineto_r0.json.gz"),
            &code);
  EXPECT_EQ(code, 1) << other;
  EXPECT_TRUE(absl::StrContains(other, "not the same run")) << other;
}

// The README's first prediction: against the unprofiled truth the recorder
// stored, with how far that truth itself moved.
TEST(UserScriptTest, PredictionIsComparedWithItsTruth) {
  int code = -1;
  const std::string out = RunOn(ET_SIM_BIN, OneRank(), &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "error")) << out;
  EXPECT_TRUE(absl::StrContains(out, "unprofiled")) << out;
  // Item 12: the iteration's phases, as HTA and the TensorBoard plugin split
  // them.
  EXPECT_TRUE(absl::StrContains(out, "by phase, as simulated")) << out;
  EXPECT_TRUE(absl::StrContains(out, "backward ")) << out;
  EXPECT_TRUE(absl::StrContains(out, "optimizer ")) << out;
}

// Item 12: --device H100 on a CPU trace prices GPU ops (it has none) and
// moves no tensor: the preset's capacity is not checked, and says why.
TEST(UserScriptTest, AGpuPresetsCapacityIsNotHostMemorys) {
  int code = -1;
  const std::string out =
      RunOn(ET_SIM_BIN, OneRank() + " --device H100", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(
      absl::StrContains(out, "capacity: not checked: the H100 preset's"))
      << out;
  EXPECT_FALSE(absl::StrContains(out, "fits:")) << out;
}

// Item 9: the light profile's cost is this trace's, not a constant of an H100
// host.
TEST(UserScriptTest, LightProfileCostIsEstimatedFromTheLightTrace) {
  int code = -1;
  const std::string out = RunOn(
      ET_SIM_BIN, OneRank() + " --host-profile " + Data("one_light_r0.json.gz"),
      &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "estimated from the light profile itself"))
      << out;
  EXPECT_FALSE(absl::StrContains(out, "H100 host")) << out;
}

// Item 8: a .et cut between two messages is refused, not simulated as a
// shorter run.
TEST(UserScriptTest, FileCutBetweenNodesIsRefused) {
  std::ifstream in(OneRank(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  // Walk the length prefixes to the end of the 301st message (the metadata
  // and 300 of its 582 nodes).
  size_t pos = 0;
  for (int m = 0; m < 301; ++m) {
    uint64_t size = 0;
    int shift = 0;
    while (true) {
      const auto b = static_cast<uint8_t>(bytes[pos++]);
      size |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    pos += size;
  }
  const std::string cut = Tmp("cut.et");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, pos);
  int code = -1;
  const std::string out = RunOn(ET_SIM_BIN, cut, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "truncated: 300 of the 582 nodes")) << out;
  EXPECT_TRUE(absl::StrContains(out, "nodes its metadata announces")) << out;
}

// The two DDP ranks as one argument; and one rank of them alone runs in the
// world it was recorded in (item 2), its collectives priced.
TEST(UserScriptTest, DdpRanksAndOneRankOfThem) {
  const std::string pattern = Tmp("ddp.%d.et");
  std::string log;
  ASSERT_TRUE(ConvertDdpRanks(pattern, &log)) << log;
  EXPECT_FALSE(absl::StrContains(log, "same run")) << log;
  int code = -1;
  std::string out = RunOn(ET_SIM_BIN, "'" + pattern + "' --ranks 2", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "error")) << out;
  out = RunOn(ET_SIM_BIN, Tmp("ddp.0.et"), &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "is rank 0 of a 2-rank job")) << out;
  EXPECT_TRUE(absl::StrContains(out, "2 ranks (1 simulated)")) << out;
}

// Item 12: the two DDP ranks run the same program, so their predicted peaks
// agree. They were 3.35 and 2.91 MiB: PyTorch 1.13's ET numbers an object by
// its address, and where one rank's allocator handed a freed address to
// dropout's mask (inside the folded dropout), the mask's backward use
// extended the earlier tensor's life (docs/memory-model.md, "Addresses
// handed out again").
TEST(UserScriptTest, IdenticalDdpRanksHaveThePeakOfOne) {
  const std::string pattern = Tmp("ddp_mem.%d.et");
  std::string log;
  ASSERT_TRUE(ConvertDdpRanks(pattern, &log)) << log;
  int code = -1;
  const std::string out =
      RunOn(ET_SIM_BIN, "'" + pattern + "' --ranks 2 --json", &code);
  ASSERT_EQ(code, 0) << out;
  const size_t brace = out.find('{');
  ASSERT_NE(brace, std::string::npos) << out;
  const nlohmann::json json =
      nlohmann::json::parse(out.substr(brace), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  ASSERT_EQ(json["ranks"].size(), 2u) << json["ranks"];
  double peak_mib[2] = {0, 0};
  for (int r = 0; r < 2; ++r) {
    peak_mib[r] = json["ranks"][r]["peak_allocated_bytes"].get<double>() /
                  (1024.0 * 1024.0);
  }
  EXPECT_GT(peak_mib[0], 2.0);
  EXPECT_NEAR(peak_mib[0], peak_mib[1], 0.03 * peak_mib[1])
      << peak_mib[0] << " vs " << peak_mib[1] << " MiB";
}

}  // namespace
