// Tests of the trace report and the timeline: self time, grouping, busy time,
// and totals on the reference .et with recorded durations.
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"
#include "visualizer/timeline_writer.h"
#include "visualizer/trace_report.h"

namespace et::viz {
namespace {

using ChakraProtoMsg::Node;

Node Timed(uint64_t id, const std::string& name, int64_t start_us,
           int64_t dur_us, int64_t parent, bool gpu = false) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_start_time_micros(start_us);
  n.set_duration_micros(dur_us);
  if (parent >= 0) SetUint64(n.mutable_attr(), attr::kParentId, parent);
  if (gpu) {
    SetBool(n.mutable_attr(), attr::kIsGpuOp, true);
    SetInt64(n.mutable_attr(), attr::kStream, 7);
  } else {
    SetBool(n.mutable_attr(), attr::kIsCpuOp, true);
    SetInt64(n.mutable_attr(), attr::kTid, 1);
  }
  return n;
}

// linear [100, 200) encloses t [110, 140) and addmm [150, 190); addmm launched
// a kernel that ran on stream 7 [160, 260), after the CPU op ended.
std::vector<RankTrace> LinearTrace() {
  std::vector<Node> nodes = {
      Timed(1, "aten::linear", 100, 100, -1), Timed(2, "aten::t", 110, 30, 1),
      Timed(3, "aten::addmm", 150, 40, 1), Timed(4, "sgemm", 160, 100, 3, true),
      Timed(5, "aten::linear", 300, 10, -1)};
  std::vector<RankTrace> traces;
  traces.push_back(MakeRankTrace(NodeModel::FromGraph(Graph::Build({}, nodes)),
                                 0, "linear.et"));
  return traces;
}

const OpGroupStats* FindOp(const TraceReport& r, const std::string& name) {
  for (const auto& op : r.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

TEST(TraceReportTest, SelfTimeSubtractsSameDeviceChildrenOnly) {
  auto traces = LinearTrace();
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  TraceReport r = BuildReport(traces, *sel, {});
  const OpGroupStats* linear = FindOp(r, "aten::linear");
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ(linear->calls, 2);
  EXPECT_EQ(linear->total_ns, 110000);
  EXPECT_EQ(linear->self_ns, 30000 + 10000);  // 100 - 30 - 40, plus 10
  // The GPU kernel is not subtracted from its CPU launcher.
  EXPECT_EQ(FindOp(r, "aten::addmm")->self_ns, 40000);
  EXPECT_EQ(FindOp(r, "sgemm")->self_ns, 100000);
  EXPECT_EQ(r.total_duration_ns, (100 + 30 + 40 + 100 + 10) * 1000);
  EXPECT_EQ(r.ops.front().name, "sgemm");  // sorted by self time
  // Busy time: thread 1 = [100, 200) + [300, 310); stream 7 = [160, 260).
  ASSERT_EQ(r.tracks.size(), 2u);
  EXPECT_EQ(r.tracks[0].track, "thread 1");
  EXPECT_EQ(r.tracks[0].busy_ns, 110000);
  EXPECT_EQ(r.tracks[0].last_end_ns - r.tracks[0].first_start_ns, 210000);
  EXPECT_EQ(r.tracks[1].track, "stream 7");
  EXPECT_EQ(r.tracks[1].busy_ns, 100000);
}

TEST(TraceReportTest, InclusiveDurationAttrIsTheTotal) {
  // Our converter's --keep all writes exclusive durations plus
  // inclusive_dur_ns.
  std::vector<Node> nodes = {Timed(1, "parent", 0, 20, -1),
                             Timed(2, "child", 5, 80, 1)};
  SetInt64(nodes[0].mutable_attr(), attr::kInclusiveDurNs, 100000);
  std::vector<RankTrace> traces;
  traces.push_back(
      MakeRankTrace(NodeModel::FromGraph(Graph::Build({}, nodes)), 0, "x.et"));
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  TraceReport r = BuildReport(traces, *sel, {});
  EXPECT_EQ(FindOp(r, "parent")->total_ns, 100000);
  EXPECT_EQ(FindOp(r, "parent")->self_ns, 20000);
  EXPECT_EQ(r.self_clamped_nodes, 0);
  EXPECT_EQ(r.total_duration_ns, 100000);  // 20 + 80 recorded
}

TEST(TraceReportTest, ChildrenLongerThanParentClampSelfToZero) {
  std::vector<Node> nodes = {Timed(1, "parent", 0, 10, -1),
                             Timed(2, "child", 0, 30, 1)};
  std::vector<RankTrace> traces;
  traces.push_back(
      MakeRankTrace(NodeModel::FromGraph(Graph::Build({}, nodes)), 0, "x.et"));
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  TraceReport r = BuildReport(traces, *sel, {});
  EXPECT_EQ(FindOp(r, "parent")->self_ns, 0);
  EXPECT_EQ(r.self_clamped_nodes, 1);
}

TEST(TraceReportTest, FeederTraceTotalsEqualTheRecordedDurations) {
  const std::string path =
      std::string(ET_TEST_DATA) + "/chakra/feeder_tests_chakra.0.et";
  auto traces = LoadRankTraces({path});
  ASSERT_TRUE(traces.ok());
  // The expected figures come from the protobuf nodes, read independently of
  // the node model et-viz uses.
  auto graph = LoadGraph(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  int64_t sum_ns = 0;
  int64_t collectives = 0;
  int64_t collective_bytes = 0;
  for (const Node& n : graph->nodes()) {
    sum_ns += static_cast<int64_t>(n.duration_micros()) * 1000;
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
      ++collectives;
      collective_bytes += GetInt(n, attr::kCommSize).value_or(0);
    }
  }
  ASSERT_GT(sum_ns, 0);
  auto sel = SelectNodes(*traces, {});
  ASSERT_TRUE(sel.ok());
  TraceReport r = BuildReport(*traces, *sel, {});
  EXPECT_EQ(r.nodes, 3664);
  EXPECT_EQ(r.total_duration_ns, sum_ns);
  int64_t group_total = 0;
  int64_t group_self = 0;
  int64_t calls = 0;
  for (const auto& op : r.ops) {
    group_total += op.total_ns;
    group_self += op.self_ns;
    calls += op.calls;
    EXPECT_LE(op.self_ns, op.total_ns) << op.name;
  }
  EXPECT_EQ(group_total, sum_ns);  // no inclusive_dur_ns: total = recorded
  EXPECT_EQ(group_self, r.total_self_ns);
  EXPECT_EQ(calls, 3664);
  int64_t comm_calls = 0;
  int64_t comm_bytes = 0;
  for (const auto& c : r.collectives) {
    if (c.comm_type == "SEND" || c.comm_type == "RECV") continue;
    comm_calls += c.calls;
    comm_bytes += c.bytes;
  }
  EXPECT_EQ(comm_calls, collectives);
  EXPECT_EQ(comm_bytes, collective_bytes);

  // The JSON form carries the same numbers.
  auto json = nlohmann::json::parse(r.ToJson());
  EXPECT_EQ(json["total_duration_ns"].get<int64_t>(), sum_ns);
  EXPECT_EQ(json["ops"].size(), r.ops.size());
}

TEST(TimelineTest, OneEventPerTimedNodeOnNamedTracks) {
  auto traces = LinearTrace();
  auto sel = SelectNodes(traces, {});
  ASSERT_TRUE(sel.ok());
  TimelineStats summary;
  auto json = nlohmann::json::parse(WriteTimelineJson(traces, *sel, &summary));
  EXPECT_EQ(summary.events, 5);
  EXPECT_EQ(summary.tracks, 2);
  std::map<int, std::string> track_names;
  int complete = 0;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      track_names[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
    if (e["ph"] == "X") {
      ++complete;
      if (e["name"] == "sgemm") {
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 160.0);
        EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 100.0);
        EXPECT_EQ(track_names[e["tid"].get<int>()], "stream 7");
      }
    }
  }
  EXPECT_EQ(complete, 5);
}

TEST(TimelineTest, UntimedTraceIsAnError) {
  auto traces =
      LoadRankTraces({std::string(ET_TEST_DATA) + "/chakra/mlp_mp.0.et"});
  ASSERT_TRUE(traces.ok());
  auto sel = SelectNodes(*traces, {});
  ASSERT_TRUE(sel.ok());
  auto s = WriteTimelineFile(*traces, *sel, ::testing::TempDir() + "/tl.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("has a recorded start time"),
            std::string::npos)
      << s.status();
}

}  // namespace
}  // namespace et::viz
