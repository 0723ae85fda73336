// A new user's first hour (issue 30), on real CPU recordings (tests/data/
// recorded): the built tools must compare a number only with a truth of the
// same job, machine and scale; use every flag and input they are given or
// refuse it; check their outputs before the work; name a file of the wrong
// kind; exit 2 for usage and 1 for input errors; and word what they print
// for what the trace is. Runs the built binaries.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "run_tool.h"

namespace {

using et::testing::RunTool;

std::string Data(const std::string& name) {
  return std::string(ET_TEST_DATA) + "/recorded/" + name;
}

// One slash between folder and name: the tools' own paths are checked for
// "//" below.
std::string Tmp(const std::string& name) {
  std::string dir = ::testing::TempDir();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return absl::StrCat(dir, "/first_hour_", getpid(), "_", name);
}

int Lines(const std::string& out) {
  return static_cast<int>(std::count(out.begin(), out.end(), '\n'));
}

std::string Convert(const std::string& args) {
  return RunTool(absl::StrCat(ET_CONVERT_BIN, " ", args, " --quiet"), nullptr);
}

// The one-rank MLP recorded on a CPU with its profiler trace: 3 steps, each
// profiled step a truth for --host-time recorded.
const std::string& Mlp() {
  static const std::string path = [] {
    const std::string out = Tmp("mlp.et");
    Convert(Data("mlp_steps_et.json.gz") + " " + out + " --kineto " +
            Data("mlp_steps_trace.json.gz"));
    return out;
  }();
  return path;
}

std::string Sim(const std::string& args, int* code) {
  return RunTool(absl::StrCat(ET_SIM_BIN, " ", args), code);
}

// Item 1: an H100's roofline is no prediction of the CPU that ran the trace.
TEST(FirstHourTest, RooflineOfAGpuIsNotComparedWithACpuStep) {
  int code = -1;
  const std::string recorded = Sim(Mlp() + " --host-time recorded", &code);
  ASSERT_EQ(code, 0) << recorded;
  ASSERT_TRUE(absl::StrContains(recorded, "error")) << recorded;  // a truth
  const std::string roofline = Sim(
      Mlp() + " --host-time recorded --compute roofline --device H100", &code);
  ASSERT_EQ(code, 0) << roofline;
  EXPECT_TRUE(absl::StrContains(
      roofline,
      "no error reported: the prediction is for H100 (the roofline model), "
      "not the CPU the trace ran on"))
      << roofline;
  EXPECT_FALSE(absl::StrContains(roofline, "error -")) << roofline;
  EXPECT_FALSE(absl::StrContains(roofline, "error +")) << roofline;
}

// Item 2: files written for an 8-rank job carry the recorded one-rank step,
// which is no truth for them.
TEST(FirstHourTest, WrittenRanksOfAnotherJobAreNotComparedWithTheRecording) {
  const std::string dir = Tmp("job8");
  int code = -1;
  const std::string wrote =
      Sim(Mlp() + " --host-time recorded --layout dp=8 --write-ranks " + dir,
          &code);
  ASSERT_EQ(code, 0) << wrote;
  const std::string out = Sim(dir + " --host-time recorded", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "no error reported")) << out;
  EXPECT_TRUE(absl::StrContains(out, "not the 8")) << out;
  EXPECT_FALSE(absl::StrContains(out, "error +")) << out;
  EXPECT_FALSE(absl::StrContains(out, "error -")) << out;
  std::system(("rm -rf " + dir).c_str());
}

// Item 3: the sweep's recorded point is the recorded job: it shows its truth.
TEST(FirstHourTest, SweepShowsTheTruthAtTheRecordedPoint) {
  int code = -1;
  const std::string chart = Tmp("sweep.svg");
  const std::string out = Sim(
      Mlp() + " --host-time recorded --sweep dp=1,8 --chart " + chart, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "dp=1 is the recorded job")) << out;
  EXPECT_FALSE(absl::StrContains(out, "every point is a prediction")) << out;
  const std::string json =
      Sim(Mlp() + " --host-time recorded --sweep dp=1,8 --json", &code);
  ASSERT_EQ(code, 0) << json;
  // The dp=1 point has a number; the dp=8 one none.
  const size_t dp8 = json.find("\"value\": 8");
  ASSERT_NE(dp8, std::string::npos) << json;
  const std::string first = json.substr(0, dp8);
  EXPECT_FALSE(absl::StrContains(first, "\"measured_us\": null")) << json;
  EXPECT_TRUE(absl::StrContains(json.substr(dp8), "\"measured_us\": null"))
      << json;
  std::FILE* f = std::fopen(chart.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string svg(1 << 16, '\0');
  svg.resize(std::fread(svg.data(), 1, svg.size(), f));
  std::fclose(f);
  EXPECT_TRUE(absl::StrContains(svg, "class=\"truth\"")) << svg;
  EXPECT_FALSE(absl::StrContains(svg, "no measured truth for these jobs"));
  std::remove(chart.c_str());
}

// Item 4: one rank, no communication: the critical path's other time is the
// host's own, not waiting for collectives or other ranks.
TEST(FirstHourTest, CriticalPathSaysWhatItsOtherTimeIs) {
  int code = -1;
  const std::string out = Sim(Mlp(), &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_FALSE(absl::StrContains(out, "(collectives, other ranks, host gaps)"))
      << out;
  EXPECT_FALSE(absl::StrContains(out, "collectives waiting")) << out;
  EXPECT_TRUE(absl::StrContains(out, "host time between ops")) << out;
}

// Item 5: --kineto with a directory of traces is used, and a missing one is
// an error before any rank is converted.
TEST(FirstHourTest, KinetoPatternWithADirectoryIsUsed) {
  const std::string in = Tmp("ddp_in"), out = Tmp("ddp_out");
  std::system(("mkdir -p " + in + " " + out + " && cp " +
               Data("ddp_gpt_2r_et_r0.json.gz") + " " +
               Data("ddp_gpt_2r_et_r1.json.gz") + " " + in)
                  .c_str());
  int code = -1;
  const std::string linked =
      RunTool(absl::StrCat(ET_CONVERT_BIN, " ", in, " ", out, "/ --kineto ",
                           Data("ddp_gpt_2r_kineto_r%d.json.gz")),
              &code);
  ASSERT_EQ(code, 0) << linked;
  EXPECT_TRUE(absl::StrContains(linked, "Kineto:")) << linked;
  EXPECT_FALSE(absl::StrContains(linked, "//")) << linked;
  const std::string missing =
      RunTool(absl::StrCat(ET_CONVERT_BIN, " ", in, " ", out, " --kineto ",
                           Tmp("nonexistent_%d.json")),
              &code);
  EXPECT_EQ(code, 1) << missing;
  EXPECT_EQ(Lines(missing), 1) << missing;
  EXPECT_TRUE(absl::StrContains(missing, "nonexistent_0.json")) << missing;
  std::system(("rm -rf " + in + " " + out).c_str());
}

// Item 6: a flag that only means something with another is refused without
// it, as --dp-sync without --layout always was.
TEST(FirstHourTest, FlagsThatWouldBeIgnoredAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Mlp() + " --calibration " + Tmp("nonexist.json"),
       "--calibration is used only with --compute calibrated"},
      {Mlp() + " --bucket-mb 10", "--bucket-mb is used only with --layout"},
      {Mlp() + " --min-bytes 1K", "--min-bytes is used only with --nccl-tests"},
      {Mlp() + " --dp-sync zero", "--dp-sync is used only with --layout"},
      // A new user's script (issue 49, item 7): accepted and ignored before.
      {Mlp() + " --algorithm tree",
       "--algorithm is used only with --comm alpha-beta"},
      {Mlp() + " --nccl-efficiency",
       "--nccl-efficiency is used only with --comm alpha-beta"},
      {Mlp() + " --host-speed 2 --host-time recorded",
       "--host-speed is used only with --host-time unprofiled"},
  };
  for (const auto& [args, message] : cases) {
    int code = -1;
    const std::string out = Sim(args, &code);
    EXPECT_EQ(code, 2) << args << "\n" << out;
    EXPECT_EQ(Lines(out), 1) << out;
    EXPECT_TRUE(absl::StartsWith(out, "et-sim: error: " + message)) << out;
  }
  int code = -1;
  const std::string passes =
      RunTool(absl::StrCat(ET_CONVERT_BIN, " ", Data("mlp_steps_et.json.gz"),
                           " ", Tmp("never.et"), " --passes 3"),
              &code);
  EXPECT_EQ(code, 2) << passes;
  EXPECT_TRUE(absl::StrContains(passes,
                                "--passes is used only with "
                                "--astra-text"))
      << passes;
  EXPECT_NE(access(Tmp("never.et").c_str(), F_OK), 0);
}

// Items 7 and 8: outputs and inputs are checked before the work.
TEST(FirstHourTest, OutputsAndInputsAreCheckedBeforeTheWork) {
  const std::string nodir = Tmp("nodir");
  int code = -1;
  const std::string timeline =
      Sim(Mlp() + " --timeline " + nodir + "/t.json", &code);
  EXPECT_EQ(code, 1) << timeline;
  EXPECT_EQ(timeline, "et-sim: error: --timeline " + nodir +
                          "/t.json: the output folder " + nodir +
                          " does not exist (create it first)\n");
  const std::string et = Tmp("summary_first.et");
  const std::string summary =
      RunTool(absl::StrCat(ET_CONVERT_BIN, " ", Data("mlp_steps_et.json.gz"),
                           " ", et, " --json-summary ", nodir, "/s.json"),
              &code);
  EXPECT_EQ(code, 1) << summary;
  EXPECT_EQ(Lines(summary), 1) << summary;
  EXPECT_NE(access(et.c_str(), F_OK), 0) << "converted before failing";
  const std::string viz = RunTool(
      absl::StrCat(ET_VIZ_BIN, " ", Mlp(), " -o ", nodir, "/x.pdf"), &code);
  EXPECT_EQ(code, 1) << viz;
  EXPECT_EQ(Lines(viz), 1) << viz;
  EXPECT_FALSE(absl::StrContains(viz, ".tmp.")) << viz;
  // --ranks beyond the files: one line, before any rank is converted.
  const std::string ranks = RunTool(
      absl::StrCat(ET_CONVERT_BIN, " ", Data("ddp_gpt_2r_et_r%d.json.gz"), " ",
                   Tmp("r.%d.et"), " --ranks 3"),
      &code);
  EXPECT_EQ(code, 1) << ranks;
  EXPECT_EQ(Lines(ranks), 1) << ranks;
  EXPECT_TRUE(absl::StrContains(ranks, "ddp_gpt_2r_et_r2.json.gz")) << ranks;
  EXPECT_FALSE(absl::StrContains(ranks, "rank 0:")) << ranks;
}

// Item 7: a folder typed with a trailing slash ("job/") is joined to the
// names the tools make with one slash: --write-ranks printed
// "--workload-configuration=job//mlp" for ASTRA-sim.
TEST(FirstHourTest, FoldersEndingInASlashAreJoinedWithOne) {
  const std::string job = Tmp("slash_job");
  int code = -1;
  const std::string out =
      Sim(Mlp() + " --layout dp=2 --write-ranks " + job + "/", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "--workload-configuration=" + job + "/"))
      << out;
  EXPECT_FALSE(absl::StrContains(out, "//")) << out;
  const std::string again = Sim(job + "/", &code);
  EXPECT_EQ(code, 0) << again;
  EXPECT_FALSE(absl::StrContains(again, "//")) << again;
}

// Item 8: an error every MPI rank agrees on is printed once, not per rank.
TEST(FirstHourTest, ReplayPrintsAnAgreedErrorOnce) {
  if (system("mpirun --version > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no mpirun";
  }
  const std::string pattern = Tmp("replay4.%d.et");
  Convert(Data("ddp_gpt_4r_et_r%d.json.gz") + " " + pattern + " --ranks 4");
  int code = -1;
  const std::string out =
      RunTool(absl::StrCat("mpirun --allow-run-as-root --oversubscribe -np 2 ",
                           ET_REPLAY_BIN, " ", pattern, " --device cpu"),
              &code);
  EXPECT_NE(code, 0) << out;
  size_t errors = 0;
  for (size_t at = out.find("et-replay: error:"); at != std::string::npos;
       at = out.find("et-replay: error:", at + 1)) {
    ++errors;
  }
  EXPECT_EQ(errors, 1u) << out;
  EXPECT_TRUE(absl::StrContains(out, "4 per-rank traces for a launch of 2"))
      << out;
}

// Item 9: a file of the wrong kind is named as such, in one line.
TEST(FirstHourTest, WrongKindsOfFileAreNamed) {
  int code = -1;
  const std::string svg = Tmp("chart.svg");
  Sim(Mlp() + " --sweep dp=1,2 --chart " + svg, &code);
  ASSERT_EQ(code, 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {absl::StrCat(ET_SIM_BIN, " ", svg), "an SVG/XML file"},
      {absl::StrCat(ET_REPLAY_BIN, " ", svg, " --device cpu"),
       "an SVG/XML file"},
      {absl::StrCat(ET_CONVERT_BIN, " ", Data("mlp_steps_et.json.gz"), " ",
                    Tmp("k.et"), " --kineto ", Mlp()),
       "a Chakra .et (et-convert's output), not a Kineto trace"},
      {absl::StrCat(ET_SIM_BIN, " ", Mlp(), " --topology ", Mlp()),
       "a Chakra .et (a trace), not a topology"},
  };
  for (const auto& [cmd, message] : cases) {
    const std::string out = RunTool(cmd, &code);
    EXPECT_EQ(code, 1) << cmd << "\n" << out;
    EXPECT_EQ(Lines(out), 1) << out;
    EXPECT_TRUE(absl::StrContains(out, message)) << out;
  }
  std::remove(svg.c_str());
}

// Item 10: usage errors exit 2, input errors 1 (README).
TEST(FirstHourTest, ExitCodesFollowTheReadme) {
  int code = -1;
  std::string out = Sim(Mlp() + " --world 12 --layout dp=8", &code);
  EXPECT_EQ(code, 2) << out;
  out = RunTool(absl::StrCat(ET_VIZ_BIN, " ", Mlp(), " -o x.jpg"), &code);
  EXPECT_EQ(code, 2) << out;
  out = Sim("--nccl-tests all_reduce --comm-from " + Mlp(), &code);
  EXPECT_EQ(code, 1) << out;
  out = RunTool(absl::StrCat(ET_VIZ_BIN, " ", Mlp(), " --out x.pdf"), &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_TRUE(absl::StrContains(out, "did you mean --output?")) << out;
}

// A new user gives the ranks of one job file by file, as et-viz takes them:
// et-sim, et-replay and et-convert take one argument for them, and their usage
// error says which ("expected one input, got extra argument" alone left the
// user guessing).
TEST(FirstHourTest, RankFilesGivenOneByOneAreNamedByTheirPattern) {
  int code = -1;
  std::string out = Sim("ddp.0.et ddp.1.et", &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_TRUE(absl::StrContains(out, "'ddp.%d.et' --ranks 2, or their folder"))
      << out;
  out = RunTool(absl::StrCat(ET_REPLAY_BIN, " ddp.0.et ddp.1.et --device cpu"),
                &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_TRUE(absl::StrContains(out, "'ddp.%d.et' --ranks 2")) << out;
  out = RunTool(
      absl::StrCat(ET_CONVERT_BIN, " et_r0.json et_r1.json et_r2.json out.et"),
      &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_TRUE(absl::StrContains(out, "'et_r%d.json' 'OUT.%d.et' --ranks 3"))
      << out;
}

// The usual mistake of mismatched ranks: a folder holding rank 0 of the
// tp=2 x dp=2 recording and rank 1 of the 2-rank DDP one simulated to a
// deadlock report ("collective #0 on group '1' ... never issued by rank(s)
// 0") that named no file; the files now say they are not one job.
TEST(FirstHourTest, RankFilesOfTwoJobsAreRefusedByName) {
  const std::string dir = Tmp("two_jobs");
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  Convert(Data("tp_dp_4r_et_r0.json.gz") + " " + dir + "/m.0.et");
  Convert(Data("ddp_gpt_2r_et_r1.json.gz") + " " + dir + "/m.1.et");
  int code = -1;
  const std::string out = Sim(dir, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "m.0.et: recorded in a job of 4 ranks"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "not one job's ranks")) << out;
  EXPECT_FALSE(absl::StrContains(out, "deadlock")) << out;
  EXPECT_EQ(Lines(out), 1) << out;
}

// Issue 49, item 6: rank 0 of one run beside rank 1 of another run of the
// same script (the same model, world and names; recorded 11 hours apart) was
// simulated (+181%); the recordings' start times tell the runs apart.
TEST(FirstHourTest, RankFilesOfTwoRunsOfOneScriptAreRefused) {
  const std::string dir = Tmp("two_runs");
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  const std::string vm = std::string(ET_TEST_DATA) + "/cpu-corpus-vm/";
  Convert(vm + "ddp_gpt_2r_et_r0.json.gz " + dir +
          "/m.0.et --rank 0 --kineto " + vm + "ddp_gpt_2r_kineto_r0.json.gz");
  // The same script's rank 1, recorded in another run (its ET records the
  // world of 2 its process-group table holds; the other's Kineto trace does).
  Convert(std::string(ET_TEST_DATA) + "/cpu-corpus/ddp_gpt_2r_et_r1.json.gz " +
          dir + "/m.1.et --rank 1");
  int code = -1;
  std::string out = Sim(dir, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "m.1.et: recorded 2026-11-27 09:08:21"))
      << out;
  EXPECT_TRUE(absl::StrContains(out,
                                "m.0.et 2026-11-27 20:36:00 (41259 s "
                                "apart"))
      << out;
  EXPECT_TRUE(absl::StrContains(out, "not one run's ranks")) << out;
  // The two ranks of one run (started 0 s apart) simulate.
  Convert(vm + "ddp_gpt_2r_et_r1.json.gz " + dir +
          "/m.1.et --rank 1 --kineto " + vm + "ddp_gpt_2r_kineto_r1.json.gz");
  out = Sim(dir, &code);
  EXPECT_EQ(code, 0) << out;
}

// Item 13: words that fit what the trace is.
TEST(FirstHourTest, SummariesSayWhatTheTraceIs) {
  int code = -1;
  const std::string alone =
      RunTool(absl::StrCat(ET_CONVERT_BIN, " ", Data("mlp_steps_trace.json.gz"),
                           " ", Tmp("alone.et")),
              &code);
  ASSERT_EQ(code, 0) << alone;
  EXPECT_FALSE(absl::StrContains(alone, "ET nodes")) << alone;
  EXPECT_FALSE(absl::StrContains(alone, "Kineto matches")) << alone;
  // A one-rank CPU trace uses no network: not "HGX-H100 (default)".
  const std::string sim = Sim(Mlp(), &code);
  ASSERT_EQ(code, 0) << sim;
  EXPECT_FALSE(absl::StrContains(sim, "HGX-H100 (default)")) << sim;
  // The recorder's own process-group table is not a host op to match.
  const std::string tp =
      RunTool(absl::StrCat(ET_CONVERT_BIN, " ", Data("tp_dp_4r_et_r0.json.gz"),
                           " ", Tmp("tp.et"), " --kineto ",
                           Data("tp_dp_4r_kineto_r0.json.gz")),
              &code);
  ASSERT_EQ(code, 0) << tp;
  EXPECT_FALSE(absl::StrContains(tp, "matched 0 of 1 host ops")) << tp;
  // An A100 trace: its untimed ops on the A100's roofline, as its topology
  // is the A100's platform.
  const std::string alex = Tmp("alexnet.et");
  Convert(std::string(ET_TEST_DATA) +
          "/kineto-only/hta_alexnet_trace.json.gz " + alex);
  const std::string a100 = Sim(alex, &code);
  ASSERT_EQ(code, 0) << a100;
  EXPECT_TRUE(absl::StrContains(a100, "topology: DGX-A100")) << a100;
  EXPECT_FALSE(absl::StrContains(a100, "roofline model on H100")) << a100;
  EXPECT_TRUE(absl::StrContains(a100, "roofline model on A100")) << a100;
  const std::string help = RunTool(absl::StrCat(ET_SIM_BIN, " --help"), &code);
  EXPECT_FALSE(absl::StrContains(help, "kineto_light")) << help;
}

// Item 12: a 4-rank step dot lays out in seconds is not refused (its edges
// between page columns and between ranks add no virtual nodes: the estimate
// had 24,252 layout units for it, now 3,092).
TEST(FirstHourTest, AFourRankStepIsNotRefusedByAMiscount) {
  const std::string gpt = Tmp("gpt4.%d.et");
  int code = -1;
  const std::string converted = RunTool(
      absl::StrCat(ET_CONVERT_BIN, " ", Data("ddp_gpt_4r_et_r%d.json.gz"), " ",
                   gpt, " --ranks 4 --quiet --kineto ",
                   Data("ddp_gpt_4r_kineto_r%d.json.gz")),
      &code);
  ASSERT_EQ(code, 0) << converted;
  std::string ranks;
  for (int r = 0; r < 4; ++r) {
    ranks += " " + Tmp("gpt4." + std::to_string(r) + ".et");
  }
  const std::string dot = Tmp("gpt4.dot");
  const std::string four = RunTool(
      absl::StrCat(ET_VIZ_BIN, ranks, " --step 1 --repeats fold -o ", dot),
      &code);
  EXPECT_EQ(code, 0) << four;
  EXPECT_TRUE(absl::StrContains(four, "812 nodes")) << four;
  std::remove(dot.c_str());
}

}  // namespace
