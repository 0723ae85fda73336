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
#include "simulator/comm/nccl_cost_model.h"
#include "simulator/platform/platform.h"

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

// JSON rows of `et-sim ARGS --json` (stdout only).
nlohmann::json JsonOf(const std::string& args) {
  int code = -1;
  const std::string out = RunSim(args + " --json 2>/dev/null", &code);
  EXPECT_EQ(code, 0) << args << ": " << out;
  return nlohmann::json::parse(out, nullptr, false);
}

// nccl-tests under mpirun -N 1 on ten nodes of 8 H100s: the world does not fill
// a node, and the error says how to give the shape; --nodes/--gpus-per-node run
// it on one GPU's share of a node's NICs, and the table names the shape.
TEST(ClusterCliTest, TenNodesOfOneGpuInNcclTests) {
  int code = -1;
  const std::string out =
      RunSim("--nccl-tests all_reduce --world 10 --topology HGX-H100", &code);
  EXPECT_EQ(code, et::kUsageExitCode) << out;
  EXPECT_NE(out.find("--nodes 10 --gpus-per-node 1"), std::string::npos) << out;
  EXPECT_NE(out.find("--nodes 2 --gpus-per-node 5"), std::string::npos) << out;

  const nlohmann::json j = JsonOf(
      "--nccl-tests all_reduce --nodes 10 --gpus-per-node 1 --topology "
      "HGX-H100 --min-bytes 1M --max-bytes 1G");
  EXPECT_EQ(j["world"], 10);
  EXPECT_NE(j["cluster"].get<std::string>().find("10 nodes x 1 GPU"),
            std::string::npos)
      << j["cluster"];
  const Platform one_gpu = PlatformForGroup(*FindPlatformPreset("HGX-H100"), 1);
  ASSERT_EQ(j["rows"].size(), 11u);
  for (const nlohmann::json& r : j["rows"]) {
    EXPECT_DOUBLE_EQ(r["time_us"].get<double>(),
                     NcclCollective(one_gpu, NcclOp::kAllReduce, 10,
                                    r["bytes"].get<double>())
                         .time_us);
  }
  // One GPU's NIC (50 GB/s line): far below the 8-GPU node's 400.
  EXPECT_LT(j["rows"].back()["busbw_gbps"].get<double>(), 50);
  // --nodes alone takes the platform's node: 2 x 8 = 16 ranks.
  EXPECT_EQ(JsonOf("--nccl-tests all_gather --nodes 2 --max-bytes 1M")["world"],
            16);
}

// --comm-from fits the log on its own shape (2 x 8 H100 here), whatever
// shape the run asks for: the same figures for a 10 x 1 run as for 2 x 8.
TEST(ClusterCliTest, CommFromFitsTheLogOnItsOwnShape) {
  const std::string log =
      " --topology HGX-H100 --max-bytes 8 --comm-from " +
      std::string(ET_TEST_DATA) +
      "/nccl-tests/logs/03_xe9680-h100-2x8-ib_allreduce.txt";
  auto fit_line = [&](const std::string& shape) {
    int code = -1;
    const std::string out =
        RunSim("--nccl-tests all_reduce " + shape + log, &code);
    EXPECT_EQ(code, 0) << out;
    const size_t at = out.find("et-sim: note: fitted");
    return at == std::string::npos ? out
                                   : out.substr(at, out.find('\n', at) - at);
  };
  const std::string same = fit_line("--nodes 2 --gpus-per-node 8");
  EXPECT_NE(same.find("net_efficiency 0.94 -> "), std::string::npos) << same;
  EXPECT_EQ(same, fit_line("--nodes 10 --gpus-per-node 1"));
}

// NCCL_ALGO / NCCL_PROTO in NCCL's syntax pick what the tuner may choose.
TEST(ClusterCliTest, NcclAlgoAndProtoInNcclTests) {
  const std::string base =
      "--nccl-tests all_reduce --world 8 --topology HGX-H100 --min-bytes 8 "
      "--max-bytes 1G";
  const nlohmann::json free = JsonOf(base);
  const nlohmann::json ring = JsonOf(base + " --nccl-algo ring");
  const nlohmann::json ring_too = JsonOf(base + " --nccl-algo '^NVLS,Tree'");
  Platform h100 = *FindPlatformPreset("HGX-H100");
  h100.nccl.algorithms = kNcclRing;
  ASSERT_EQ(ring["rows"].size(), free["rows"].size());
  for (size_t i = 0; i < ring["rows"].size(); ++i) {
    const nlohmann::json& r = ring["rows"][i];
    EXPECT_EQ(r["algorithm"], "ring");
    EXPECT_DOUBLE_EQ(
        r["time_us"].get<double>(),
        NcclCollective(h100, NcclOp::kAllReduce, 8, r["bytes"].get<double>())
            .time_us);
    EXPECT_DOUBLE_EQ(r["time_us"].get<double>(),
                     ring_too["rows"][i]["time_us"].get<double>());
  }
  // At 1 GiB the free tuner takes NVLS, faster than the ring.
  EXPECT_EQ(free["rows"].back()["algorithm"], "nvls");
  EXPECT_LT(free["rows"].back()["time_us"].get<double>(),
            0.8 * ring["rows"].back()["time_us"].get<double>());
  EXPECT_NE(ring["cluster"].get<std::string>().find("NCCL_ALGO=ring"),
            std::string::npos);
  // Case-insensitive protocols, lists and exclusions.
  for (const char* proto : {"simple", "SIMPLE", "^LL,LL128"}) {
    const nlohmann::json j =
        JsonOf(base + " --nccl-algo Ring --nccl-proto '" + proto + "'");
    for (const nlohmann::json& r : j["rows"]) {
      EXPECT_EQ(r["protocol"], "Simple") << proto;
    }
  }
  // Fewer channels carry their share: 4 of NCCL's 32 on one H100 node.
  const nlohmann::json four =
      JsonOf(base + " --nccl-algo ring --nccl-max-channels 4");
  EXPECT_NEAR(four["rows"].back()["busbw_gbps"].get<double>() /
                  ring["rows"].back()["busbw_gbps"].get<double>(),
              4.0 / 32, 0.01);
  // One process driving 8 GPUs (nccl-tests -g 8): 7 more launches.
  const nlohmann::json g8 = JsonOf(base + " --gpus-per-process 8");
  EXPECT_NEAR(g8["rows"][0]["time_us"].get<double>() -
                  free["rows"][0]["time_us"].get<double>(),
              7 * h100.launch_per_gpu_us, 1e-9);
}

// The same shape and knobs in trace simulation: one rank's all-reduce of
// 1 MiB (ASTRA-sim's microbenchmark) run on ten nodes of one GPU.
TEST(ClusterCliTest, TenNodesOfOneGpuAndRingInTraceSimulation) {
  const std::string trace =
      std::string(ET_TEST_DATA) +
      "/astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce.0.et";
  const std::string args =
      trace + " --topology HGX-H100 --nodes 10 --gpus-per-node 1";
  const nlohmann::json free = JsonOf(args);
  EXPECT_EQ(free["world_size"], 10);
  EXPECT_NE(free["cluster"].get<std::string>().find("10 nodes x 1 GPU"),
            std::string::npos)
      << free["cluster"];
  ASSERT_EQ(free["collectives"].size(), 1u);
  const nlohmann::json& c = free["collectives"][0];
  EXPECT_EQ(c["group_size"], 10);
  Platform one_gpu = PlatformForGroup(*FindPlatformPreset("HGX-H100"), 1);
  const double bytes = c["bytes"].get<double>();
  const double calls = c["calls"].get<double>();
  EXPECT_NEAR(
      c["total_ns"].get<double>() / calls,
      NcclCollective(one_gpu, NcclOp::kAllReduce, 10, bytes).time_us * 1e3,
      1.0);
  // --nccl-algo ring and --nccl-proto LL: the collective costs what the
  // library gives for that choice.
  const nlohmann::json ll = JsonOf(args + " --nccl-algo ring --nccl-proto LL");
  one_gpu.nccl.algorithms = kNcclRing;
  one_gpu.nccl.protocols = kNcclLl;
  const double ll_ns =
      NcclCollective(one_gpu, NcclOp::kAllReduce, 10, bytes).time_us * 1e3;
  EXPECT_NEAR(ll["collectives"][0]["total_ns"].get<double>() / calls, ll_ns,
              1.0);
  EXPECT_GT(ll_ns, 1.1 * c["total_ns"].get<double>() / calls);
  EXPECT_NE(ll["cluster"].get<std::string>().find("NCCL_PROTO=LL"),
            std::string::npos);
  // A world the node does not divide says how to give the shape.
  int code = -1;
  const std::string out =
      RunSim(trace + " --topology HGX-H100 --world 10", &code);
  EXPECT_NE(code, 0);
  EXPECT_NE(out.find("--nodes 10 --gpus-per-node 1"), std::string::npos) << out;
}

TEST(NcclTestsCliTest, BadArgumentsAreOneLineErrors) {
  for (const char* args :
       {"--nccl-tests allreduce", "--nccl-tests all_reduce --world 1",
        "--nccl-tests all_reduce --min-bytes 8X",
        "--nccl-tests all_reduce --min-bytes 1G --max-bytes 1M",
        "--nccl-tests all_reduce --topology DGX-Z9000",
        "--nccl-tests all_reduce some.et",
        "--nccl-tests all_reduce --nccl-algo rings",
        "--nccl-tests all_reduce --nccl-proto '^LL,LL128,Simple'",
        "--nccl-tests all_reduce --nccl-max-channels 100",
        "--nccl-tests all_reduce --nccl-min-channels 8 --nccl-max-channels 4",
        "--nccl-tests all_reduce --gpus-per-process 0",
        "--nccl-tests all_reduce --nodes 0",
        "--nccl-tests all_reduce --nodes 3 --gpus-per-node 2 --world 8",
        "--nccl-tests all_reduce --nodes 2 --gpus-per-node 16",
        "--nccl-tests all_reduce --world 12"}) {
    int code = -1;
    const std::string out = RunSim(args, &code);
    EXPECT_EQ(code, et::kUsageExitCode) << args;  // bad arguments: usage errors
    EXPECT_EQ(out.rfind("et-sim: error: ", 0), 0u) << args << ": " << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

}  // namespace
}  // namespace et::sim
