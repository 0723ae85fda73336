// et-sim's checks for silent mistakes (simulator/input_checks.h), on the
// 4-rank DDP traces converted by et-convert: too few --ranks, a --groups table
// that no collective names, a graph converted without Kineto durations. The
// last test runs the et-sim binary to see the checks are wired in.
#include "simulator/input_checks.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/process_group.h"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

const std::string kTraces = std::string(ET_TEST_DATA) + "/pytorch-1.13-cpu/";

// The 4 DDP ranks as DIR/ddp.%d.et (converted once per test binary).
const std::string& DdpDir() {
  static const std::string* dir = [] {
    auto* d = new std::string(std::string(ET_BINARY_DIR) + "/sim_checks_ddp");
    std::filesystem::create_directories(*d);
    for (int r = 0; r < 4; ++r) {
      convert::ConvertOptions o;
      o.rank = r;
      auto s = convert::ConvertFile(
          kTraces + "ddp_mlp_et_r" + std::to_string(r) + ".json.gz",
          *d + "/ddp." + std::to_string(r) + ".et", o);
      EXPECT_TRUE(s.ok()) << s.status();
    }
    return d;
  }();
  return *dir;
}

InputFacts Rank0() {
  auto f = ScanRankFile(DdpDir() + "/ddp.0.et");
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : InputFacts();
}

TEST(InputChecksTest, FewerRanksThanRecordedIsAnError) {
  const InputFacts f = Rank0();
  const std::string pattern = DdpDir() + "/ddp.%d.et";
  absl::Status s = CheckRankCount(pattern, 2, f, /*groups_given=*/false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("--ranks 4"), std::string::npos) << s;
  EXPECT_TRUE(CheckRankCount(pattern, 4, f, false).ok());
  EXPECT_TRUE(CheckRankCount(pattern, 2, f, /*groups_given=*/true).ok());
}

// A plain file or a folder names no other rank's file: the check returns
// (it once probed the same file for the next rank forever).
TEST(InputChecksTest, RankCountOfAPlainFileOrFolderReturns) {
  const InputFacts f = Rank0();
  EXPECT_TRUE(CheckRankCount(DdpDir() + "/ddp.0.et", 1, f, false).ok());
  EXPECT_TRUE(CheckRankCount(DdpDir(), 1, f, false).ok());
}

// The 1.13 DDP trace's gloo collectives name no group: a table cannot apply.
TEST(InputChecksTest, GroupsOnCollectivesWithoutPgNameIsAnError) {
  const InputFacts f = Rank0();
  ASSERT_TRUE(f.pg_names.empty());
  ProcessGroup g;
  g.name = "0";
  absl::Status s = CheckGroupsApply({g}, "groups.json", f);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("pg_name"), std::string::npos) << s;
  EXPECT_TRUE(CheckGroupsApply({}, "", f).ok());  // no --groups
}

// resnet_2gpu (rank 1 of 2): its 21 collectives name group "0".
TEST(InputChecksTest, GroupsNamedAsNoCollectiveIsAnError) {
  const std::string out = DdpDir() + "/resnet_2gpu.et";
  convert::ConvertOptions o;
  o.rank = 1;
  ASSERT_TRUE(convert::ConvertFile(std::string(ET_TEST_DATA) +
                                       "/param/resnet_2gpu_et.1.1.0.json.gz",
                                   out, o)
                  .ok());
  auto f = ScanRankFile(out);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->pg_names, std::set<std::string>{"0"});
  ProcessGroup stranger;
  stranger.name = "megatron_tp_7";
  stranger.ranks = {0, 1};
  absl::Status s = CheckGroupsApply({stranger}, "groups.json", *f);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("megatron_tp_7"), std::string::npos)
      << s;
  ProcessGroup known = stranger;
  known.name = "0";
  EXPECT_TRUE(CheckGroupsApply({stranger, known}, "groups.json", *f).ok());
}

TEST(InputChecksTest, GroupsNoteCountsCollectivesWithoutAGroup) {
  InputFacts f;
  f.path = "x.0.et";
  f.pg_names = {"0"};
  f.comm_nodes = 5;
  f.comm_nodes_without_group = 2;
  ProcessGroup g;
  g.name = "0";
  const std::string note = GroupsNote({g}, f);
  EXPECT_NE(note.find("2 of 5 communication nodes"), std::string::npos) << note;
  EXPECT_EQ(GroupsNote({}, f), "");  // no --groups
  f.comm_nodes_without_group = 0;
  EXPECT_EQ(GroupsNote({g}, f), "");  // the table applies to all
}

TEST(InputChecksTest, NoDurationsSaysWhichModelStandsIn) {
  const InputFacts f = Rank0();  // converted without --kineto: ET 1.0.1
  EXPECT_GT(f.compute_nodes, 0);
  EXPECT_EQ(f.compute_nodes_timed, 0);
  SimOptions o;
  o.device = "A100";
  const std::string note = DurationsNote(f, o, "A100");
  EXPECT_NE(note.find("no recorded durations"), std::string::npos) << note;
  EXPECT_NE(note.find("roofline model on A100"), std::string::npos) << note;
  o.compute_model = ComputeModel::kRoofline;
  EXPECT_EQ(DurationsNote(f, o, "A100"), "");  // asked for: nothing to say
}

// An ET converted without its Kineto trace but with its truth (issue 49,
// item 3): every compute node is the roofline of a GPU, so the prediction is
// not of the CPU run that was measured and carries no error (it printed
// -99.5%).
TEST(InputChecksTest, NoDurationsMeansNoTruthForTheRoofline) {
  const std::string out = DdpDir() + "/rnn_no_kineto.et";
  convert::ConvertOptions o;
  o.measured_step_ms = 50.05;
  ASSERT_TRUE(convert::ConvertFile(std::string(ET_TEST_DATA) +
                                       "/two-truths/cpu_rnn_w512_et.json.gz",
                                   out, o)
                  .ok());
  auto sim = Simulation::Run({out, 0}, SimOptions());
  ASSERT_TRUE(sim.ok()) << sim.status();
  const StepReport& step = (*sim)->report().step;
  EXPECT_FALSE(step.error_pct.has_value());
  bool said = false;
  for (const std::string& n : step.notes)
    said |= n.find("the roofline model), not the CPU") != std::string::npos;
  EXPECT_TRUE(said);
  // The user's truth at simulation time is taken as that run's.
  SimOptions given;
  given.measured_step_us = 50050;
  auto with_truth = Simulation::Run({out, 0}, given);
  ASSERT_TRUE(with_truth.ok()) << with_truth.status();
  EXPECT_TRUE((*with_truth)->report().step.error_pct.has_value());
}

std::string RunSim(const std::string& args, int* exit_code) {
  const std::string err = DdpDir() + "/sim_stderr.txt";
  const int status = std::system(
      (std::string(ET_SIM_BIN) + " " + args + " >/dev/null 2>" + err).c_str());
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(InputChecksTest, EtSimCommandLine) {
  int code = 0;
  std::string err = RunSim("'" + DdpDir() + "/ddp.%d.et' --ranks 2", &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("the traces are of 4 ranks"), std::string::npos) << err;

  err = RunSim("'" + DdpDir() + "/ddp.%d.et' --ranks 4", &code);
  EXPECT_EQ(code, 0) << err;
  EXPECT_NE(err.find("et-sim: note:"), std::string::npos) << err;

  err = RunSim(kTraces + "ddp_mlp_et_r0.json.gz", &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("a PyTorch execution trace (JSON)"), std::string::npos)
      << err;
  EXPECT_NE(err.find("et-convert"), std::string::npos) << err;
}

}  // namespace
}  // namespace et::sim
