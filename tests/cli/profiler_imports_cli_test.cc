// The tools on graphs made from profiler traces alone (issue 20): et-convert
// recognizes an Nsight Systems export from its content and writes a graph per
// GPU and process without --ranks; et-sim pairs the 2xH100 capture's
// collectives across its 2 ranks; et-replay (CPU backend) and et-viz read
// nsys and Kineto-only graphs as any other.
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "run_tool.h"

namespace {

using et::testing::RunTool;

std::string Data(const std::string& rel) {
  return std::string(ET_TEST_DATA) + "/" + rel;
}
std::string Temp(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

TEST(ProfilerImportsCliTest, EtSimRunsTheTwoGpuCaptureOnTwoRanks) {
  const std::string pattern = Temp("nsys2.%d.et");
  int code = -1;
  std::string out =
      RunTool(absl::StrCat(ET_CONVERT_BIN, " ",
                           Data("nsys/nsysai_mfu_2gpu_before.sqlite.gz"), " '",
                           pattern, "' --quiet"),
              &code);
  ASSERT_EQ(code, 0) << out;
  out = RunTool(absl::StrCat(ET_SIM_BIN, " '", pattern, "' --ranks 2 --json"),
                &code);
  ASSERT_EQ(code, 0) << out;
  const auto report = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(report["world_size"], 2);
  // 32 all-to-alls per rank were captured with their launches; a simulator
  // that could not pair them across the ranks would have stopped.
  int64_t all_to_all = 0;
  for (const auto& c : report["collectives"]) {
    if (c["type"] == "ALL_TO_ALL") all_to_all += c["calls"].get<int64_t>();
  }
  EXPECT_EQ(all_to_all, 32) << out;
  // The 0.3 s window holds over 250 ms of recorded GPU work on each rank.
  EXPECT_GT(report["step_ns"].get<double>(), 250e6) << out;
}

// et-replay --device cpu and et-viz --report on an nsys graph (the MPI+CUDA
// saxpy rank, schema 2.9.1) and a Kineto-only one (AlexNet): et-replay runs
// every GPU op the conversion wrote, et-viz reads every node.
TEST(ProfilerImportsCliTest, ReplayAndVizReadNsysAndKinetoOnlyGraphs) {
  const std::string inputs[] = {
      Data("nsys/pipit_saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz"),
      Data("kineto-only/hta_alexnet_trace.json.gz")};
  int k = 0;
  for (const std::string& input : inputs) {
    SCOPED_TRACE(input);
    const std::string graph = Temp(absl::StrCat("import", k, ".et"));
    const std::string summary = Temp(absl::StrCat("import", k++, ".json"));
    int code = -1;
    std::string out =
        RunTool(absl::StrCat(ET_CONVERT_BIN, " ", input, " ", graph,
                             " --quiet --json-summary ", summary),
                &code);
    ASSERT_EQ(code, 0) << out;
    std::ifstream in(summary);
    nlohmann::json s = nlohmann::json::parse(in);
    if (s.contains("ranks")) s = s["ranks"][0];  // the nsys form: per graph
    const int64_t gpu_ops = s["gpu_ops"];
    const int64_t nodes = s["written_nodes"];
    ASSERT_GT(gpu_ops, 0);
    out = RunTool(absl::StrCat(ET_REPLAY_BIN, " ", graph, " --device cpu"),
                  &code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_TRUE(absl::StrContains(out, absl::StrCat(" kernel=", gpu_ops)))
        << out;
    out = RunTool(absl::StrCat(ET_VIZ_BIN, " --report ", graph), &code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_TRUE(absl::StrContains(out, absl::StrCat("\n", nodes, " nodes")))
        << out;
  }
}

}  // namespace
