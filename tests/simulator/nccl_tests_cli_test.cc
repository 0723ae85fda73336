// et-sim --nccl-tests: nccl-tests' columns and size conventions, the JSON
// rows, agreement with the library's model, and one-line errors. Runs the
// built et-sim.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_split.h"
#include "cli/cli_args.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simulator/nccl_cost_model.h"

namespace et::sim {
namespace {

std::string RunSim(const std::string& args, int* exit_code) {
  std::string out;
  FILE* p =
      popen((std::string(ET_SIM_BIN) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), p)) out.append(buffer, n);
  const int status = pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(NcclTestsCliTest, TextHasNcclTestsColumnsAndDoublingSizes) {
  int code = -1;
  const std::string out = RunSim(
      "--nccl-tests all_reduce --world 8 --topology DGX-A100 --min-bytes 1M "
      "--max-bytes 16M",
      &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("no measurement"), std::string::npos) << out;
  EXPECT_NE(out.find("size         count      type   redop    root     time"),
            std::string::npos)
      << out;
  std::vector<std::string> rows;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (!line.empty() && line[0] != '#') rows.emplace_back(line);
  }
  ASSERT_EQ(rows.size(), 5u) << out;  // 1, 2, 4, 8, 16 MiB
  const std::vector<std::string> first =
      absl::StrSplit(rows[0], ' ', absl::SkipEmpty());
  ASSERT_EQ(first.size(), 8u) << rows[0];
  EXPECT_EQ(first[0], "1048576");
  EXPECT_EQ(first[1], "262144");  // 4-byte floats
  EXPECT_EQ(first[2], "float");
  EXPECT_EQ(first[3], "sum");
  EXPECT_EQ(first[4], "-1");
}

TEST(NcclTestsCliTest, JsonRowsMatchTheModel) {
  int code = -1;
  const std::string out = RunSim(
      "--nccl-tests all_gather --world 16 --topology HGX-H100 --min-bytes 100 "
      "--max-bytes 1G --json",
      &code);
  ASSERT_EQ(code, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["topology"], "HGX-H100");
  const nlohmann::json& rows = j["rows"];
  ASSERT_EQ(rows.size(), 24u);  // 100 B x 2^0..2^23 <= 1 GiB
  // nccl-tests keeps whole floats per rank: 100 B = 25 floats, 1 per rank.
  EXPECT_EQ(rows[0]["bytes"], 64);
  const Platform h100 = *FindPlatformPreset("HGX-H100");
  for (const nlohmann::json& r : rows) {
    const double bytes = r["bytes"].get<double>();
    const double time_us = r["time_us"].get<double>();
    EXPECT_DOUBLE_EQ(
        time_us, NcclCollective(h100, NcclOp::kAllGather, 16, bytes).time_us);
    EXPECT_NEAR(r["algbw_gbps"].get<double>(), bytes / time_us / 1e3, 1e-9);
    EXPECT_NEAR(r["busbw_gbps"].get<double>(),
                r["algbw_gbps"].get<double>() * 15 / 16, 1e-9);
  }
  // Two H100 nodes: 1 GiB is network-bound; a ring's busbw is the node's NIC
  // rate (8 x 400 Gb/s = 400 GB/s line, 0.9 of it reached), as in nccl-tests.
  EXPECT_LT(rows.back()["busbw_gbps"].get<double>(), 360);
  EXPECT_GT(rows.back()["busbw_gbps"].get<double>(), 300);
}

TEST(NcclTestsCliTest, CommFromReportsTheFitAndUsesTheLogsGpu) {
  int code = -1;
  const std::string out =
      RunSim("--nccl-tests all_reduce --world 8 --max-bytes 8 --comm-from " +
                 std::string(ET_TEST_DATA) +
                 "/nccl-tests/logs/10_a100sxm4-80gb-1x8_allreduce_mpirun.txt",
             &code);
  ASSERT_EQ(code, 0) << out;
  // No --topology: the log's A100 picks DGX-A100, which the fit starts from.
  EXPECT_NE(out.find("et-sim: note: fitted DGX-A100 to 30 measured rows"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("on DGX-A100"), std::string::npos) << out;
  EXPECT_NE(out.find("after"), std::string::npos) << out;
}

TEST(NcclTestsCliTest, BadArgumentsAreOneLineErrors) {
  for (const char* args :
       {"--nccl-tests allreduce", "--nccl-tests all_reduce --world 1",
        "--nccl-tests all_reduce --min-bytes 8X",
        "--nccl-tests all_reduce --min-bytes 1G --max-bytes 1M",
        "--nccl-tests all_reduce --topology DGX-Z9000",
        "--nccl-tests all_reduce some.et",
        "--nccl-tests all_reduce --comm-from /nonexistent.txt"}) {
    int code = -1;
    const std::string out = RunSim(args, &code);
    EXPECT_EQ(code, et::kUsageExitCode) << args;  // bad arguments: usage errors
    EXPECT_EQ(out.rfind("et-sim: error: ", 0), 0u) << args << ": " << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

}  // namespace
}  // namespace et::sim
