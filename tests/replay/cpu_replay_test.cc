// Tests of a whole replay on one rank with the CPU backend (host timers, MPI
// singleton): on the real 2-NPU model-parallel MLP .et, on graphs built here,
// and the errors for a missing device, too few ranks and a process group the
// launch cannot form.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/process_group.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_writer.h"
#include "replay/host_timer.h"
#include "replay/mpi_world.h"
#include "replay/replay_session.h"
#include "replay_test_graphs.h"
#include "test_world.h"

namespace et::replay {
namespace {

const std::string kData = ET_TEST_DATA;

using testing::World;

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

TEST(HostTimerTest, NeverReturnsEarly) {
  HostTimer timer = HostTimer::Calibrate(HostWaitMode::kHybrid);
  for (int64_t ns : {50000, 2000000}) {
    const int64_t start = NowNs();
    timer.WaitUntil(start, ns);
    EXPECT_GE(NowNs() - start, ns);
  }
}

TEST(CpuReplayTest, ModelParallelMlpRunsEveryOpForAtLeastItsRecordedTime) {
  ASSERT_NE(World(), nullptr);
  ReplayOptions options;
  options.trace = kData + "/chakra/mlp_mp.0.et";
  options.warmup_iterations = 0;
  options.timed_iterations = 1;
  options.json_path = testing::TempEtPath("mlp_mp.report.json");
  options.trace_path = testing::TempEtPath("mlp_mp.trace.json");
  options.calibration_path = testing::TempEtPath("mlp_mp.calibration.json");
  std::string text;
  auto report = RunReplaySession(options, World(), &text);
  ASSERT_TRUE(report.ok()) << report.status();
  auto graph = LoadGraph(options.trace);
  ASSERT_TRUE(graph.ok());
  int64_t colls = 0, recorded_sum_ns = 0;
  for (const auto& node : graph->nodes()) {
    colls += node.type() == ChakraProtoMsg::COMM_COLL_NODE;
    recorded_sum_ns += node.duration_micros() * 1000;
  }
  EXPECT_EQ(report->ops_by_kind["collective"], colls);
  EXPECT_EQ(report->comm_calls_per_iteration,
            colls);  // every one really called MPI
  // Its compute ops share one queue (no stream recorded), which runs them one
  // at a time: an iteration lasts at least their recorded sum.
  ASSERT_EQ(report->iteration_us.size(), 1u);
  EXPECT_GE(report->iteration_us[0] * 1e3, recorded_sum_ns);

  nlohmann::json json = ReadJson(options.json_path);
  for (const auto& op : json["ops"]) {
    if (op["kind"] == "kernel") {
      EXPECT_GE(op["mean_us"].get<double>(), op["recorded_us"].get<double>());
    }
  }
  // The Chrome trace has one complete event per replayed op.
  nlohmann::json trace = ReadJson(options.trace_path);
  const auto events =
      std::count_if(trace["traceEvents"].begin(), trace["traceEvents"].end(),
                    [](const nlohmann::json& e) { return e["ph"] == "X"; });
  EXPECT_EQ(events, static_cast<long>(graph->size()));
  // The calibration file groups by op name and shapes; mlp0's forward ran 32291
  // us.
  nlohmann::json calibration = ReadJson(options.calibration_path);
  EXPECT_EQ(calibration["format"],
            "et-calibration");  // docs/calibration-format.md
  EXPECT_EQ(calibration["version"], 1);
  bool found = false;
  for (const auto& entry : calibration["entries"]) {
    if (entry["name"] != "COMP_NODE_layer_64_1_mlp0_FWD") continue;
    found = true;
    EXPECT_EQ(entry["count"], 1);  // one op, one timed iteration
    EXPECT_TRUE(entry["input_shapes"].is_array());
    EXPECT_GE(entry["mean_us"].get<double>(), 32291.0);
  }
  EXPECT_TRUE(found);
}

std::string WriteGraph(const std::string& name,
                       const ChakraProtoMsg::GlobalMetadata& meta,
                       const std::vector<ChakraProtoMsg::Node>& nodes) {
  const std::string path = testing::TempEtPath(name);
  EXPECT_TRUE(WriteEtFile(path, meta, nodes).ok());
  return path;
}

double ReplayedIterationUs(const std::string& name,
                           const std::vector<ChakraProtoMsg::Node>& nodes,
                           bool host_gaps = true) {
  ReplayOptions options;
  options.trace = WriteGraph(name, testing::Metadata(), nodes);
  options.warmup_iterations = 0;
  options.timed_iterations = 1;
  options.host_gaps = host_gaps;
  options.host_time = HostTimeMode::kRecorded;  // the timeline's mechanics
  auto report = RunReplaySession(options, World(), nullptr);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? report->iteration_us.at(0) : 0;
}

ChakraProtoMsg::Node StartingAt(ChakraProtoMsg::Node node, uint64_t start_us) {
  node.set_start_time_micros(start_us);
  return node;
}

// Each recorded stream is a worker: two independent 50 ms kernels on two
// streams overlap; a dependency between them serialises them. Timers never
// return early, so the serial bound is exact; the overlap bound leaves 30 ms
// to a busy machine.
TEST(CpuReplayTest, StreamsOverlapUnlessTheyDependOnEachOther) {
  ASSERT_NE(World(), nullptr);
  using testing::CompNode;
  const double parallel_us = ReplayedIterationUs(
      "two_streams.et", {CompNode(1, "k1", 50000, {}, false, 7),
                         CompNode(2, "k2", 50000, {}, false, 13)});
  EXPECT_GE(parallel_us, 50000);
  EXPECT_LT(parallel_us, 80000);
  const double serial_us = ReplayedIterationUs(
      "two_streams_dep.et", {CompNode(1, "k1", 50000, {}, false, 7),
                             CompNode(2, "k2", 50000, {1}, false, 13)});
  EXPECT_GE(serial_us, 100000);
}

// A kernel recorded 10 ms into the 40 ms host op that launched it starts 10 ms
// into the replayed host op, not after it: 50 ms in all, not 80.
TEST(CpuReplayTest, KernelStartsAsFarIntoItsHostOpAsRecorded) {
  ASSERT_NE(World(), nullptr);
  using testing::CompNode;
  ChakraProtoMsg::Node host =
      StartingAt(CompNode(1, "aten::to", 40000, {}, true, 1), 1000);
  ChakraProtoMsg::Node copy =
      StartingAt(CompNode(2, "Memcpy HtoD", 40000, {}, false, 7), 11000);
  copy.add_ctrl_deps(1);
  const double us = ReplayedIterationUs("launch_lag.et", {host, copy});
  EXPECT_GE(us, 50000);
  EXPECT_LT(us, 70000);
}

// Time between a thread's ops (Python, the dispatcher) is held as recorded:
// 5 ms + 15 ms gap + 5 ms; --host-gaps off runs the ops back to back.
TEST(CpuReplayTest, RecordedGapsBetweenHostOpsAreHeld) {
  ASSERT_NE(World(), nullptr);
  using testing::CompNode;
  const std::vector<ChakraProtoMsg::Node> nodes = {
      StartingAt(CompNode(1, "aten::add", 5000, {}, true, 1), 1000),
      StartingAt(CompNode(2, "aten::mul", 5000, {}, true, 1), 21000)};
  EXPECT_GE(ReplayedIterationUs("host_gaps.et", nodes), 25000);
  EXPECT_LT(ReplayedIterationUs("host_gaps_off.et", nodes, false), 20000);
}

TEST(CpuReplayTest, TraceNeedingMoreRanksThanLaunchedIsAClearError) {
  ASSERT_NE(World(), nullptr);
  ChakraProtoMsg::GlobalMetadata meta;
  SetInt64(meta.mutable_attr(), attr::kWorldSize, 4);
  ReplayOptions options;
  options.trace =
      WriteGraph("four_ranks.et", meta,
                 {testing::CollNode(1, ChakraProtoMsg::ALL_REDUCE, 1024, {})});
  auto report = RunReplaySession(options, World(), nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(
      report.status().message().find("needs 4 ranks but the launch has 1"),
      std::string::npos)
      << report.status();
}

TEST(CpuReplayTest, ProcessGroupLargerThanTheLaunchIsAClearError) {
  ASSERT_NE(World(), nullptr);
  ChakraProtoMsg::GlobalMetadata meta;
  ProcessGroup pg;
  pg.name = "0";
  pg.desc = "default_pg";
  pg.size = 8;
  EncodeProcessGroups({pg}, meta.mutable_attr());
  ReplayOptions options;
  options.trace = WriteGraph(
      "pg8.et", meta,
      {testing::CollNode(1, ChakraProtoMsg::ALL_REDUCE, 1024, {}, "0")});
  auto report = RunReplaySession(options, World(), nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find(
                "process group '0' (default_pg) has 8 members"),
            std::string::npos)
      << report.status();
}

TEST(CpuReplayTest, MissingCudaDeviceIsAClearError) {
  ASSERT_NE(World(), nullptr);
  ReplayOptions options;
  options.trace = kData + "/chakra/mlp_mp.0.et";
  options.device = "cuda";
  auto report = RunReplaySession(options, World(), nullptr);
  if (report.ok()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_NE(report.status().message().find("no CUDA device"), std::string::npos)
      << report.status();
}

TEST(CpuReplayTest, UnknownDeviceIsRejected) {
  ASSERT_NE(World(), nullptr);
  ReplayOptions options;
  options.trace = kData + "/chakra/mlp_mp.0.et";
  options.device = "tpu";
  auto report = RunReplaySession(options, World(), nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("unknown device 'tpu'"),
            std::string::npos);
}

}  // namespace
}  // namespace et::replay
