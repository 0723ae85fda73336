// et-convert on a Kineto (torch.profiler) trace alone: the graph's GPU nodes,
// collectives and steps against what the trace itself holds, the multi-rank
// form, and broken inputs. The step fidelity of such graphs is in
// tests/fidelity/kineto_only_fidelity_test.cc.
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/gzip_input.h"
#include "converter/converter.h"
#include "converter/multi_rank.h"
#include "gtest/gtest.h"
#include "model/graph_validation.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

constexpr char kMi300[] =
    "kineto-only/tracelens_mi300_resnet_act_checkpoint.json.gz";
constexpr char kAlexnet[] = "kineto-only/hta_alexnet_trace.json.gz";

nlohmann::json ReadJson(const std::string& rel) {
  std::string text;
  EXPECT_TRUE(ReadFileMaybeGzip(DataPath(rel), &text).ok());
  return nlohmann::json::parse(text);
}

// Kernels, memcpys and memsets of the trace, counted from its JSON.
int64_t GpuEventsOf(const nlohmann::json& trace) {
  int64_t n = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") == "X" &&
        (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset"))
      ++n;
  }
  return n;
}

int64_t GpuNodesOf(const Graph& g) {
  int64_t n = 0;
  for (NodeIndex i = 0; i < g.size(); ++i)
    n += GetBool(g.node(i), attr::kIsGpuOp).value_or(false) ? 1 : 0;
  return n;
}

TEST(KinetoOnlyTest, Mi300EveryGpuOpIsANodeAndCollectivesHaveTypeSizeGroup) {
  auto c = ConvertAndLoad(kMi300);
  ASSERT_TRUE(c.ok()) << c.status();
  const nlohmann::json trace = ReadJson(kMi300);
  EXPECT_EQ(GpuNodesOf(c->graph), GpuEventsOf(trace));
  EXPECT_EQ(c->summary.gpu_ops, GpuEventsOf(trace));
  EXPECT_TRUE(ValidateGraph(c->graph).ok());

  // The trace's record_param_comms: (collective, bytes) -> count.
  std::map<std::pair<std::string, int64_t>, int> expected;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") != "record_param_comms") continue;
    const auto& a = e["args"];
    const std::string name = a["Collective name"];
    if (name == "wait") continue;
    const int64_t elem = a["dtype"] == "BFloat16" ? 2 : 8;  // Long
    const std::string type = name == "allreduce" ? "ALL_REDUCE" : "BROADCAST";
    ++expected[{type, a["In msg nelems"].get<int64_t>() * elem}];
    EXPECT_EQ(a["Group size"], 8);
  }
  std::map<std::pair<std::string, int64_t>, int> found;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    const Node& n = c->graph.node(i);
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    const auto type = static_cast<ChakraProtoMsg::CollectiveCommType>(
        GetInt(n, attr::kCommType).value_or(-1));
    ++found[{ChakraProtoMsg::CollectiveCommType_Name(type),
             GetInt(n, attr::kCommSize).value_or(-1)}];
    EXPECT_EQ(GetString(n, attr::kPgName).value_or(""), "0") << n.name();
  }
  EXPECT_EQ(found, expected);
  ASSERT_EQ(expected.size(), 4u);  // two all-reduce and two broadcast sizes

  const auto& meta = c->graph.metadata().attr();
  EXPECT_EQ(GetInt(meta, attr::kRank), 0);
  EXPECT_EQ(GetInt(meta, attr::kWorldSize), 8);
  EXPECT_EQ(GetIntList(meta, std::string(attr::kPgRanksPrefix) + "0"),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(GetStringList(meta, attr::kStepNames),
            (std::vector<std::string>{"ProfilerStep#15", "ProfilerStep#16",
                                      "ProfilerStep#17"}));
  bool said_no_data_deps = false;
  for (const std::string& n : c->summary.notes)
    said_no_data_deps |= n.find("no data dependencies") != std::string::npos;
  EXPECT_TRUE(said_no_data_deps);
  EXPECT_EQ(c->summary.input_path, DataPath(kMi300));
}

// record_shapes=True traces: every host op's `Input Dims`/`Input type` become
// its input shapes and types (dtype names as "Tensor(...)"), so shape-costed
// ops get FLOPs as from an ET.
TEST(KinetoOnlyTest, Mi300RecordedShapesBecomeInputShapesAndFlops) {
  auto c = ConvertAndLoad(kMi300);
  ASSERT_TRUE(c.ok()) << c.status();
  const nlohmann::json trace = ReadJson(kMi300);
  // op name -> the Input Dims its events carry.
  std::map<std::string, std::set<std::string>> dims_of;
  int64_t with_shapes = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") != "X" ||
        (cat != "cpu_op" && cat != "user_annotation") || !e.contains("args") ||
        !e["args"].contains("Input Dims") ||
        !e["args"].contains("Input type")) {
      continue;
    }
    ++with_shapes;
    dims_of[e["name"]].insert(e["args"]["Input Dims"].dump());
  }
  ASSERT_GT(with_shapes, 7000);
  bool said = false;
  for (const std::string& n : c->summary.notes) {
    said |= n.find(absl::StrCat(with_shapes, " with recorded shapes")) !=
            std::string::npos;
  }
  EXPECT_TRUE(said);
  // GEMMs (the DDP model's linear layers) and batch norms, forward and
  // backward: shapes as recorded, FLOPs from them.
  int costed = 0;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    const Node& n = c->graph.node(i);
    if (n.name() != "aten::mm" && n.name() != "aten::linear" &&
        n.name() != "aten::batch_norm") {
      continue;
    }
    ++costed;
    const nlohmann::json shapes = nlohmann::json::parse(n.inputs().shapes());
    EXPECT_EQ(dims_of[n.name()].count(shapes.dump()), 1u) << shapes.dump();
    EXPECT_EQ(nlohmann::json::parse(n.inputs().types())[0],
              "Tensor(c10::BFloat16)");
    EXPECT_GT(GetInt(n, attr::kNumOps).value_or(0), 0) << n.id();
    if (n.name() != "aten::batch_norm") {
      EXPECT_EQ(GetString(n, attr::kOpKind).value_or(""), "gemm") << n.id();
    }
  }
  EXPECT_EQ(costed, 6 + 3 + 117);
}

// The collectives of a graph, in node order: their types.
std::vector<int64_t> CollectiveTypes(const Graph& g) {
  std::vector<int64_t> types;
  for (NodeIndex i = 0; i < g.size(); ++i) {
    if (g.node(i).type() == ChakraProtoMsg::COMM_COLL_NODE)
      types.push_back(GetInt(g.node(i), attr::kCommType).value_or(-1));
  }
  return types;
}

// The torch 1.13 gloo DDP traces (the legacy profiler's, no args): gloo runs
// each collective's work record on its own worker thread, not under the
// c10d call. Each is still one collective, of the same types in the same
// order as the ET + trace graph of the same rank finds; their sizes and group
// are nowhere in the trace, and the summary says so with the count.
TEST(KinetoOnlyTest, GlooTraceCollectivesCountOnceAndSizesAreSaidUnknown) {
  for (int rank = 0; rank < 4; ++rank) {
    const std::string r = std::to_string(rank);
    auto alone =
        ConvertAndLoad("pytorch-1.13-cpu/ddp_mlp_trace_r" + r + ".json.gz");
    ASSERT_TRUE(alone.ok()) << alone.status();
    ConvertOptions with_trace;
    with_trace.kineto_path =
        DataPath("pytorch-1.13-cpu/ddp_mlp_trace_r" + r + ".json.gz");
    auto paired = ConvertAndLoad(
        "pytorch-1.13-cpu/ddp_mlp_et_r" + r + ".json.gz", with_trace);
    ASSERT_TRUE(paired.ok()) << paired.status();
    const std::vector<int64_t> types = CollectiveTypes(alone->graph);
    EXPECT_EQ(types, CollectiveTypes(paired->graph)) << "rank " << r;
    EXPECT_EQ(types.size(), 5u);  // 3 all-reduces, 2 broadcasts
    for (NodeIndex i = 0; i < alone->graph.size(); ++i) {
      const Node& n = alone->graph.node(i);
      if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
        EXPECT_EQ(GetInt(n, attr::kCommSize).value_or(-1), 0) << n.name();
      }
    }
    const std::string expected = absl::StrCat(
        "Kineto only: ", types.size(),
        " collectives have no message size in the trace (no "
        "record_param_comms args): size unknown, written as comm_size 0; and "
        "no process group");
    bool warned = false;
    for (const std::string& w : alone->summary.warnings)
      warned |= w.find(expected) != std::string::npos;
    EXPECT_TRUE(warned) << expected;
    EXPECT_EQ(alone->summary.kineto_host_ops_matched,
              alone->summary.kineto_host_ops);
  }
}

// MI300's collectives all have record_param_comms sizes: no such warning.
TEST(KinetoOnlyTest, Mi300HasNoSizeUnknownWarning) {
  auto c = ConvertAndLoad(kMi300);
  ASSERT_TRUE(c.ok()) << c.status();
  for (const std::string& w : c->summary.warnings)
    EXPECT_EQ(w.find("no message size"), std::string::npos) << w;
}

TEST(KinetoOnlyTest, AlexnetKernelsLinkedAndCudaSyncBecomesDependencies) {
  auto c = ConvertAndLoad(kAlexnet);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(GpuNodesOf(c->graph), GpuEventsOf(ReadJson(kAlexnet)));
  EXPECT_EQ(c->summary.orphan_gpu_ops, 0);
  EXPECT_EQ(c->summary.kineto_host_ops_matched, c->summary.kineto_host_ops);
  // cudaStreamSynchronize/cuda_sync: host nodes wait for GPU nodes.
  int host_waits = 0;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    if (GetBool(c->graph.node(i), attr::kIsGpuOp).value_or(false)) continue;
    for (NodeIndex d : c->graph.ctrl_deps(i))
      host_waits += GetBool(c->graph.node(d), attr::kIsGpuOp).value_or(false);
  }
  EXPECT_GT(host_waits, 0);
  EXPECT_TRUE(ValidateGraph(c->graph).ok());
}

TEST(KinetoOnlyTest, RankPatternConvertsEveryRank) {
  auto jobs = JobsFromPattern(DataPath("hta/sampled_rank-%d_kineto.json.gz"),
                              TempOut("sampled.%d.et"), "", 2);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  std::vector<RankResult> results = ConvertRanks(*jobs, ConvertOptions(), 2);
  ASSERT_TRUE(PublishRankOutputs(&results).value_or(false));
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(results[r].summary.ok()) << results[r].summary.status();
    auto graph = LoadGraph(results[r].job.output);
    ASSERT_TRUE(graph.ok()) << graph.status();
    const nlohmann::json trace =
        ReadJson("hta/sampled_rank-" + std::to_string(r) + "_kineto.json.gz");
    EXPECT_EQ(GpuNodesOf(*graph), GpuEventsOf(trace)) << "rank " << r;
    EXPECT_EQ(results[r].summary->collectives_by_type.at("ALL_TO_ALL"), 4);
  }
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TempOut(name);
  std::ofstream(path) << text;
  return path;
}

void ExpectOneLineError(const absl::Status& s, const std::string& path,
                        const std::string& what) {
  ASSERT_FALSE(s.ok());
  const std::string m(s.message());
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find(path), std::string::npos) << m;
  EXPECT_NE(m.find(what), std::string::npos) << m;
}

TEST(KinetoOnlyTest, TruncatedTraceIsAOneLineErrorAndWritesNothing) {
  std::string text;
  ASSERT_TRUE(ReadFileMaybeGzip(DataPath(kAlexnet), &text).ok());
  const std::string in =
      WriteTemp("truncated_kineto.json", text.substr(0, text.size() / 2));
  const std::string out = TempOut("truncated.et");
  auto s = ConvertFile(in, out, ConvertOptions());
  ExpectOneLineError(s.status(), in, "truncated");
  EXPECT_FALSE(std::ifstream(out).good());
}

TEST(KinetoOnlyTest, KernelWithoutCorrelationIdIsAOneLineError) {
  nlohmann::json trace = ReadJson(kAlexnet);
  for (auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "kernel") {
      e["args"].erase("correlation");
      break;
    }
  }
  const std::string in = WriteTemp("nocorrelation_kineto.json", trace.dump());
  auto s = ConvertFile(in, TempOut("nocorrelation.et"), ConvertOptions());
  ExpectOneLineError(s.status(), in, "no 'correlation' id");
}

}  // namespace
}  // namespace et::convert
