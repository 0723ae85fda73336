// Command-line behaviour every tool shares (cli/cli_args.h): --help lists
// the tool's own flags, one line each (Abseil's --help said "No flags
// matched" for et-replay). Runs the built binaries.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_tool.h"

namespace {

using et::testing::RunTool;

struct Tool {
  const char* path;
  std::vector<const char*> flags;  // a few it must list
};

TEST(ToolCliTest, HelpListsOwnFlagsOneLineEach) {
  const std::vector<Tool> tools = {
      {ET_CONVERT_BIN, {"--ranks", "--json-summary", "--kineto"}},
      {ET_SIM_BIN, {"--ranks", "--groups", "--compute"}},
      {ET_VIZ_BIN, {}},
      {ET_REPLAY_BIN, {"--device", "--iters", "--host-wait"}},
  };
  for (const Tool& tool : tools) {
    SCOPED_TRACE(tool.path);
    int code = -1;
    const std::string out = RunTool(std::string(tool.path) + " --help", &code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_EQ(out.find("No flags matched"), std::string::npos) << out;
    int flag_lines = 0;
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      if (line.substr(0, 4) == "  --") ++flag_lines;
    }
    EXPECT_GE(flag_lines, 3) << out;
    for (const char* f : tool.flags) {
      EXPECT_NE(out.find(std::string("\n  ") + f + " "), std::string::npos)
          << f << " missing from:\n"
          << out;
    }
    // Only the tool's flags, not Abseil's own (--flagfile, --fromenv...).
    EXPECT_EQ(out.find("--flagfile"), std::string::npos) << out;
  }
}

// The step-time flags: a truth that is not a positive number, or an unknown
// host-time mode, is one error line naming the flag and a non-zero exit.
TEST(ToolCliTest, StepFlagsRejectBadValuesInOneLine) {
  const std::string et =
      std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(ET_CONVERT_BIN) + " " + et +
           " /tmp/x.et --measured-step-ms -1",
       "--measured-step-ms"},
      {std::string(ET_CONVERT_BIN) + " " + et +
           " /tmp/x.et --measured-step-ms abc",
       "--measured-step-ms"},
      {std::string(ET_SIM_BIN) + " x.et --measured-step-ms 0",
       "--measured-step-ms"},
      {std::string(ET_SIM_BIN) + " x.et --host-time fast", "--host-time"},
      {std::string(ET_REPLAY_BIN) + " x.et --host-time fast", "--host-time"},
  };
  for (const auto& [cmd, flag] : cases) {
    SCOPED_TRACE(cmd);
    int code = -1;
    const std::string out = RunTool(cmd, &code);
    EXPECT_EQ(code, 2) << out;  // a usage error, in every tool
    EXPECT_NE(out.find(flag), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

// Every tool answers a usage mistake the same way: one line starting with its
// own name, exit status 2 (docs/*.md say so). A misspelled flag names the
// flag meant; Abseil said "ERROR: Unknown command line flag 'wrold'", with
// neither, and exit status 1.
TEST(ToolCliTest, UsageErrorsAreOneLineNamingTheToolWithExitTwo) {
  const std::string et =
      std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(ET_SIM_BIN) + " x.et --wrold 4",
       "et-sim: error: unknown flag --wrold (did you mean --world?)"},
      {std::string(ET_REPLAY_BIN) + " x.et --wrold 4",
       "et-replay: error: unknown flag --wrold (did you mean --world?)"},
      {std::string(ET_CONVERT_BIN) + " " + et + " x.et --kinteo k.json",
       "et-convert: error: unknown flag --kinteo (did you mean --kineto?)"},
      {std::string(ET_VIZ_BIN) + " x.et --ouput x.pdf",
       "et-viz: error: unknown flag --ouput (did you mean --output?)"},
      {std::string(ET_SIM_BIN) + " x.et --frobnicate",
       "et-sim: error: unknown flag --frobnicate; see --help"},
      {std::string(ET_SIM_BIN) + " x.et --world 2x",
       "et-sim: error: --world '2x': "},
      {std::string(ET_SIM_BIN) + " x.et --world",
       "et-sim: error: --world "
       "needs a value"},
      {std::string(ET_CONVERT_BIN) + " in.json",
       "et-convert: error: expected "
       "an input and an output"},
      {std::string(ET_CONVERT_BIN) + " 'x_%d.json' 'x.%d.et'",
       "et-convert: error: 'x_%d.json' -> 'x.%d.et': a rank pattern (%d) "
       "needs --ranks N"},
      {std::string(ET_SIM_BIN) + " 'x.%d.et'",
       "et-sim: error: 'x.%d.et': a rank pattern (%d) needs --ranks N"},
      {std::string(ET_SIM_BIN) + " " + std::string(ET_TEST_DATA) +
           "/chakra/mlp_mp.0.et --ranks 1",
       "et-sim: error: '" + std::string(ET_TEST_DATA) +
           "/chakra/mlp_mp.0.et': --ranks 1 counts the files of a rank "
           "pattern (out.%d.et); one trace runs as every rank with --world 1"},
      {std::string(ET_SIM_BIN) + " a.et b.et",
       "et-sim: error: expected one "
       "input"},
      {std::string(ET_VIZ_BIN), "et-viz: error: no input .et file"},
      {std::string(ET_REPLAY_BIN) + " x.et --iters 0",
       "et-replay: error: --iters needs an integer >= 1"},
      // Accepted and ignored before (issue 49, item 7).
      {std::string(ET_REPLAY_BIN) + " x.et --device cpu --op-timing in-step",
       "et-replay: error: --op-timing is used only with --device cuda"},
      {std::string(ET_VIZ_BIN) + " x.et --report --collapse",
       "et-viz: error: --collapse is used only with -o"},
  };
  for (const auto& [cmd, message] : cases) {
    SCOPED_TRACE(cmd);
    int code = -1;
    const std::string out = RunTool(cmd, &code);
    EXPECT_EQ(code, 2) << out;
    EXPECT_EQ(out.rfind(message, 0), 0u) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

// et-convert --host-profile: a file that is not a light Kineto trace fails
// the conversion (exit 1, naming it, no output left); with --ranks a file
// that is not a %d pattern is a usage error (one light trace is one rank's).
TEST(ToolCliTest, ConvertHostProfileErrors) {
  const std::string et =
      std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz";
  const std::string out_et = ::testing::TempDir() + "/host_profile.et";
  int code = -1;
  std::string out = RunTool(std::string(ET_CONVERT_BIN) + " " + et + " " +
                                out_et + " --host-profile " + et,
                            &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("simple_add_et.json.gz: --host-profile: not a Kineto "
                     "trace"),
            std::string::npos)
      << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_FALSE(std::filesystem::exists(out_et));
  out = RunTool(std::string(ET_CONVERT_BIN) +
                    " 'x_%d.json' 'x.%d.et' --ranks 2 --host-profile l.json",
                &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("--host-profile l.json: with --ranks 2, name each rank's "
                     "light profile with a %d pattern"),
            std::string::npos)
      << out;
}

// --host-profile with --ranks and a %d pattern: each rank's graph learns from
// its own light profile (tests/data/two-truths: a 2-rank DDP MLP recorded
// with Debian's torch 1.13; the ranks' light steps differ, 15.9 and 12.3 ms).
TEST(ToolCliTest, ConvertLearnsEachRanksOwnLightProfile) {
  const std::string data = std::string(ET_TEST_DATA) + "/two-truths/";
  const std::string out = ::testing::TempDir() + "/rank_light.%d.et";
  int code = -1;
  const std::string log = RunTool(
      std::string(ET_CONVERT_BIN) + " '" + data +
          "ddp_mlp_w64_et_r%d.json.gz' '" + out + "' --ranks 2 --kineto '" +
          data + "ddp_mlp_w64_kineto_r%d.json.gz' --host-profile '" + data +
          "ddp_mlp_w64_kineto_light_r%d.json.gz' --quiet",
      &code);
  ASSERT_EQ(code, 0) << log;
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    // The light step: the lower median of the light trace's ProfilerSteps.
    const std::string light =
        data + "ddp_mlp_w64_kineto_light_r" + std::to_string(rank) + ".json.gz";
    const nlohmann::json events =
        nlohmann::json::parse(RunTool("zcat '" + light + "'", &code));
    std::vector<int64_t> steps_us;
    for (const auto& e : events) {
      if (e.value("name", "").rfind("ProfilerStep#", 0) == 0)
        steps_us.push_back(e["dur"].get<int64_t>());
    }
    ASSERT_FALSE(steps_us.empty());
    std::sort(steps_us.begin(), steps_us.end());
    const int64_t light_step_ns = steps_us[(steps_us.size() - 1) / 2] * 1000;

    const std::string et =
        ::testing::TempDir() + "/rank_light." + std::to_string(rank) + ".et";
    ASSERT_EQ(RunTool(std::string(ET_CONVERT_BIN) + " --to-json " + et + " " +
                          et + ".json",
                      &code),
              "");
    const nlohmann::json graph =
        nlohmann::json::parse(RunTool("cat '" + et + ".json'", &code));
    std::map<std::string, nlohmann::json> attrs;
    for (const auto& a : graph["metadata"]["attr"]) attrs[a["name"]] = a;
    ASSERT_TRUE(attrs.count("host_cost_light_step_ns"));
    EXPECT_EQ(
        std::stoll(
            attrs["host_cost_light_step_ns"]["int64_val"].get<std::string>()),
        light_step_ns);
    EXPECT_NE(attrs["host_cost_source"]["string_val"].get<std::string>().find(
                  "light_r" + std::to_string(rank)),
              std::string::npos);
  }
}

// `--json-summary -` (stdout, as documented) is taken as it is: no "RAW: Did
// you really mean to set flag 'json_summary' to the value '-'?" from Abseil.
TEST(ToolCliTest, DashValueIsTakenWithoutAbseilsQuestion) {
  const std::string et =
      std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz";
  int code = -1;
  const std::string out =
      RunTool(std::string(ET_CONVERT_BIN) + " " + et + " " +
                  ::testing::TempDir() + "/dash.et --quiet --json-summary -",
              &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_EQ(out.find("RAW"), std::string::npos) << out;
  EXPECT_EQ(out.rfind("{", 0), 0u) << out;  // the JSON summary on stdout
}

// et-viz's one-letter flag is listed as users type it.
TEST(ToolCliTest, HelpSpellsOneLetterFlagsWithOneDash) {
  int code = -1;
  const std::string out = RunTool(std::string(ET_VIZ_BIN) + " --help", &code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("\n  -o "), std::string::npos) << out;
  EXPECT_EQ(out.find("--o "), std::string::npos) << out;
}

// A JSON trace where a .et is expected says which kind it is and what to do:
// a Kineto trace goes to et-convert (alone, or with its ET as --kineto; the
// old "convert it first" hint failed for those), an execution trace is
// converted first. et-convert itself takes a Kineto trace alone (issue 20).
TEST(ToolCliTest, JsonTracesWhereAnEtIsExpectedSayWhatToDo) {
  const std::string data = std::string(ET_TEST_DATA);
  const std::string kineto = data + "/recorded/ddp_gpt_4r_kineto_r0.json.gz";
  const std::string legacy = data + "/pytorch-1.13-cpu/nn_demo_trace.json.gz";
  const std::string et = data + "/recorded/ddp_gpt_4r_et_r0.json.gz";
  const std::string out_et = ::testing::TempDir() + "/never.et";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(ET_SIM_BIN) + " " + kineto,
       "et-sim: error: " + kineto + ": a Kineto/profiler trace"},
      {std::string(ET_SIM_BIN) + " " + legacy,
       "et-sim: error: " + legacy + ": a Kineto/profiler trace"},
      {std::string(ET_SIM_BIN) + " " + et,
       "et-sim: error: " + et +
           ": a PyTorch execution trace (JSON), not a "
           "Chakra .et: convert it first: et-convert " +
           et + " out.et"},
  };
  for (const auto& [cmd, message] : cases) {
    SCOPED_TRACE(cmd);
    int code = -1;
    const std::string out = RunTool(cmd, &code);
    EXPECT_EQ(code, 1) << out;
    EXPECT_EQ(out.rfind(message, 0), 0u) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
  // The hint is a command that works: et-convert takes the trace alone.
  EXPECT_NE(RunTool(std::string(ET_SIM_BIN) + " " + kineto, nullptr)
                .find("convert it first: et-convert " + kineto + " out.et"),
            std::string::npos);
  for (const std::string& trace : {kineto, legacy}) {
    int code = -1;
    const std::string out = RunTool(
        std::string(ET_CONVERT_BIN) + " " + trace + " " + out_et, &code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_NE(out.find("Kineto trace alone"), std::string::npos) << out;
  }
  std::remove(out_et.c_str());
}

// et-viz given the JSON recording (which exists) must not advise -o with its
// name: following that overwrote the recording.
TEST(ToolCliTest, VizNeverAdvisesOverwritingAnInput) {
  const std::string et =
      std::string(ET_TEST_DATA) + "/generated/golden_tiny_et.json";
  int code = -1;
  const std::string out =
      RunTool(std::string(ET_VIZ_BIN) + " " + et + " --report", &code);
  // An input of the wrong kind (1, as in et-sim), not a usage error; the
  // reader says which kind and how to convert it.
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out.find("-o " + et), std::string::npos) << out;
  EXPECT_NE(out.find(et +
                     ": a PyTorch execution trace (JSON), not a Chakra "
                     ".et: convert it first: et-convert " +
                     et),
            std::string::npos)
      << out;
  // A Kineto trace is told to go to et-convert alone or as --kineto (it was
  // told to convert "an execution trace", with --kineto for itself).
  const std::string kineto = ::testing::TempDir() + "/viz_kineto_22.json";
  std::system(("gzip -dc " + std::string(ET_TEST_DATA) +
               "/recorded/ddp_gpt_2r_kineto_r0.json.gz > " + kineto)
                  .c_str());
  const std::string k =
      RunTool(std::string(ET_VIZ_BIN) + " " + kineto + " -o x.pdf", &code);
  EXPECT_EQ(code, 1) << k;
  EXPECT_NE(k.find(kineto +
                   ": a Kineto/profiler trace (JSON), not a Chakra "
                   ".et: convert it first: et-convert " +
                   kineto + " out.et (alone, or as --kineto"),
            std::string::npos)
      << k;
  std::remove(kineto.c_str());
  // Gzipped, it reaches the reader too.
  const std::string gz =
      std::string(ET_TEST_DATA) + "/recorded/ddp_gpt_4r_et_r0.json.gz";
  const std::string read =
      RunTool(std::string(ET_VIZ_BIN) + " " + gz + " --report", &code);
  EXPECT_EQ(code, 1) << read;
  EXPECT_NE(read.find("convert it first: et-convert " + gz), std::string::npos)
      << read;
  // A name that does not exist yet is still taken for a stray output name.
  const std::string missing = ::testing::TempDir() + "/not_here.pdf";
  const std::string stray =
      RunTool(std::string(ET_VIZ_BIN) + " " + missing, &code);
  EXPECT_NE(stray.find("did you mean -o " + missing), std::string::npos)
      << stray;
}

// Folders: a missing output folder is named as such (it was "cannot open"
// on a temporary file's name, after converting every rank).
TEST(ToolCliTest, ConvertNamesAMissingOutputFolder) {
  const std::string et =
      std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz";
  const std::string folder = ::testing::TempDir() + "/no_such_folder_22";
  int code = -1;
  const std::string out = RunTool(
      std::string(ET_CONVERT_BIN) + " " + et + " " + folder + "/x.et", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out, "et-convert: error: " + folder + "/x.et: the output folder " +
                     folder + " does not exist (create it first)\n");
}

// A %d pattern run without mpirun: one rank of a 4-rank trace would replay
// alone, collectives included; refused like the directory form.
TEST(ToolCliTest, ReplayRefusesAPatternWithMoreRanksThanTheLaunch) {
  const std::string pattern =
      std::string(ET_TEST_DATA) +
      "/astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.%d.et";
  int code = -1;
  const std::string out = RunTool(
      std::string(ET_REPLAY_BIN) + " '" + pattern + "' --device cpu", &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find(pattern +
                     ": 4 per-rank traces for a launch of 1 ranks (mpirun -np "
                     "4)"),
            std::string::npos)
      << out;
}

// A CPU-only trace (the 2-rank gpt recording: gloo, no GPU op) is told
// nothing about a GPU in et-sim's notes and bound lines nor in et-viz's
// report: no warm-up step's GPU work, no GPU share of a step, no H100 or
// roofline as if it had run there.
TEST(ToolCliTest, CpuOnlyTracesAreNotToldAboutAGpu) {
  const std::string data = std::string(ET_TEST_DATA) + "/recorded/";
  const std::string dir = ::testing::TempDir() + "/cpu_only_22";
  std::system(("mkdir -p " + dir).c_str());
  for (int rank = 0; rank < 2; ++rank) {
    const std::string r = std::to_string(rank);
    int code = -1;
    const std::string out =
        RunTool(std::string(ET_CONVERT_BIN) + " " + data + "ddp_gpt_2r_et_r" +
                    r + ".json.gz " + dir + "/gpt." + r + ".et --kineto " +
                    data + "ddp_gpt_2r_kineto_r" + r + ".json.gz",
                &code);
    ASSERT_EQ(code, 0) << out;
  }
  int code = -1;
  const std::string sim = RunTool(std::string(ET_SIM_BIN) + " " + dir, &code);
  ASSERT_EQ(code, 0) << sim;
  int bound_lines = 0;
  for (absl::string_view line : absl::StrSplit(sim, '\n')) {
    const bool note = absl::StrContains(line, "note:");
    const bool bound = absl::StrContains(line, "-bound:");
    if (!note && !bound) continue;
    bound_lines += bound;
    EXPECT_FALSE(absl::StrContains(line, "warm-up")) << line;
    EXPECT_FALSE(absl::StrContains(line, "H100")) << line;
    EXPECT_FALSE(absl::StrContains(line, "roofline")) << line;
    if (bound) {
      EXPECT_TRUE(absl::StrContains(line, "no GPU work")) << line;
      EXPECT_FALSE(absl::StrContains(line, "), GPU ")) << line;
    }
  }
  EXPECT_EQ(bound_lines, 7);  // both ranks' 3 steps and the mean
  // --device on it says there is nothing to scale, and why.
  const std::string h200 =
      RunTool(std::string(ET_SIM_BIN) + " " + dir + " --device H200", &code);
  EXPECT_NE(h200.find("--device H200: the trace ran on a CPU only (no GPU "
                      "ops): nothing to scale"),
            std::string::npos)
      << h200;
  const std::string report =
      RunTool(std::string(ET_VIZ_BIN) + " " + dir + " --report", &code);
  ASSERT_EQ(code, 0) << report;
  EXPECT_FALSE(absl::StrContains(absl::AsciiStrToLower(report), "gpu"))
      << report;
  EXPECT_FALSE(absl::StrContains(report, "warm-up")) << report;
}

}  // namespace
