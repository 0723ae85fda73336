// Tests of et-viz's node selection, op nesting and cross-rank joins, on small
// graphs built here and on the reference .et files in tests/data.
#include "visualizer/graph_filter.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/rank_files.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "visualizer/op_hierarchy.h"
#include "visualizer/rank_traces.h"
#include "visualizer/viz_graph.h"

namespace et::viz {
namespace {

using ChakraProtoMsg::Node;

Node MakeNode(uint64_t id, const std::string& name,
              ChakraProtoMsg::NodeType type, int64_t parent = -1) {
  Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(type);
  if (parent >= 0) SetUint64(n.mutable_attr(), attr::kParentId, parent);
  SetInt64(n.mutable_attr(), attr::kTid, 1);
  SetBool(n.mutable_attr(), attr::kIsCpuOp, true);
  return n;
}

// Two profiler steps: step 1 = linear(addmm(kernel), relu); step 2 =
// linear(addmm), all_reduce. Data deps: addmm -> relu, relu -> linear#6,
// addmm#7 -> all_reduce.
std::vector<RankTrace> TwoStepTrace() {
  std::vector<Node> nodes = {
      MakeNode(1, "ProfilerStep#1", ChakraProtoMsg::COMP_NODE),
      MakeNode(2, "aten::linear", ChakraProtoMsg::COMP_NODE, 1),
      MakeNode(3, "aten::addmm", ChakraProtoMsg::COMP_NODE, 2),
      MakeNode(4, "aten::relu", ChakraProtoMsg::COMP_NODE, 1),
      MakeNode(5, "ProfilerStep#2", ChakraProtoMsg::COMP_NODE),
      MakeNode(6, "aten::linear", ChakraProtoMsg::COMP_NODE, 5),
      MakeNode(7, "aten::addmm", ChakraProtoMsg::COMP_NODE, 6),
      MakeNode(8, "all_reduce", ChakraProtoMsg::COMM_COLL_NODE, 5),
      MakeNode(9, "gemm_kernel", ChakraProtoMsg::COMP_NODE, 3),
  };
  nodes[3].add_data_deps(3);
  nodes[5].add_data_deps(4);
  nodes[7].add_data_deps(7);
  SetBool(nodes[8].mutable_attr(), attr::kIsGpuOp, true);
  SetBool(nodes[8].mutable_attr(), attr::kIsCpuOp, false);
  SetInt64(nodes[8].mutable_attr(), attr::kStream, 7);
  std::vector<RankTrace> traces;
  traces.push_back(
      MakeRankTrace(NodeModel::FromGraph(Graph::Build({}, std::move(nodes))), 0,
                    "two_step.et"));
  return traces;
}

std::set<uint64_t> ShownIds(const std::vector<RankTrace>& traces,
                            const std::vector<RankSelection>& sel) {
  std::set<uint64_t> ids;
  for (size_t t = 0; t < traces.size(); ++t) {
    for (NodeIndex i = 0; i < traces[t].model.size(); ++i) {
      if (sel[t].shown[i]) ids.insert(traces[t].model.id(i));
    }
  }
  return ids;
}

std::set<uint64_t> Select(const std::vector<RankTrace>& traces,
                          const NodeFilter& f) {
  auto sel = SelectNodes(traces, f);
  EXPECT_TRUE(sel.ok()) << sel.status();
  return sel.ok() ? ShownIds(traces, *sel) : std::set<uint64_t>{};
}

TEST(OpHierarchyTest, ParentIdGivesDepthsAndChildren) {
  auto traces = TwoStepTrace();
  const OpHierarchy& h = traces[0].hierarchy;
  EXPECT_EQ(h.source(), OpHierarchy::Source::kParentIdAttr);
  const NodeModel& g = traces[0].model;
  EXPECT_EQ(h.depth(*g.Find(1)), 0);
  EXPECT_EQ(h.depth(*g.Find(3)), 2);
  EXPECT_EQ(h.depth(*g.Find(9)), 3);
  ASSERT_EQ(h.children(*g.Find(1)).size(), 2u);
  EXPECT_TRUE(h.IsWithin(*g.Find(9), *g.Find(1)));
  EXPECT_FALSE(h.IsWithin(*g.Find(9), *g.Find(5)));
}

TEST(OpHierarchyTest, CtrlCyclesAreCutNotFollowedForever) {
  // Without parent_id the first ctrl dep is the parent; 1 -> 2 -> 3 -> 1 is a
  // cycle.
  std::vector<Node> nodes;
  for (uint64_t id = 1; id <= 4; ++id) {
    Node n;
    n.set_id(id);
    n.set_type(ChakraProtoMsg::COMP_NODE);
    nodes.push_back(n);
  }
  nodes[0].add_ctrl_deps(3);
  nodes[1].add_ctrl_deps(1);
  nodes[2].add_ctrl_deps(2);
  nodes[3].add_ctrl_deps(2);
  OpHierarchy h =
      OpHierarchy::Build(NodeModel::FromGraph(Graph::Build({}, nodes)));
  EXPECT_EQ(h.source(), OpHierarchy::Source::kCtrlDeps);
  EXPECT_EQ(h.cut_cycles(), 1);
  // Node 1 (index 0) is the first cycle member met: its link is cut.
  EXPECT_EQ(h.parent(0), OpHierarchy::kNoParent);
  EXPECT_EQ(h.depth(0), 0);
  EXPECT_EQ(h.depth(1), 1);
  EXPECT_EQ(h.depth(2), 2);
  EXPECT_EQ(h.depth(3), 2);
}

TEST(OpHierarchyTest, FeederTraceWithCtrlCyclesLoads) {
  auto traces = LoadRankTraces(
      {std::string(ET_TEST_DATA) + "/chakra/feeder_tests_chakra.0.et"});
  ASSERT_TRUE(traces.ok()) << traces.status();
  const RankTrace& t = (*traces)[0];
  EXPECT_EQ(t.model.size(), 3664u);
  EXPECT_GE(t.hierarchy.cut_cycles(), 1);  // the README documents ctrl cycles
  for (NodeIndex i = 0; i < t.model.size(); ++i) {
    const NodeIndex root = t.hierarchy.AncestorAtDepth(i, 0);
    ASSERT_EQ(t.hierarchy.parent(root), OpHierarchy::kNoParent);
  }
}

TEST(GraphFilterTest, EachFilterSelectsWhatItSays) {
  auto traces = TwoStepTrace();
  NodeFilter f;
  f.step = 1;
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{1, 2, 3, 4, 9}));
  f = {};
  f.max_depth = 0;
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{1, 5}));
  f = {};
  f.name_pattern = "add(mm)$";
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{3, 7}));
  f = {};
  ASSERT_TRUE(ParseNodeTypes("collective", &f).ok());
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{8}));
  f = {};
  ASSERT_TRUE(ParseNodeTypes("gpu", &f).ok());
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{9}));
  f = {};
  ASSERT_TRUE(ParseIdRange("2:4", &f).ok());
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{2, 3, 4}));
  f = {};
  ASSERT_TRUE(ParseIdRange("7:", &f).ok());
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{7, 8, 9}));
  // Filters combine with AND.
  f = {};
  f.step = 2;
  f.name_pattern = "linear";
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{6}));
}

TEST(GraphFilterTest, CollapseFoldsSubtreesAndLiftsEdges) {
  auto traces = TwoStepTrace();
  NodeFilter f;
  f.max_depth = 1;
  f.collapse = true;
  auto sel = SelectNodes(traces, f);
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ((*sel)[0].folded_count, 3);  // addmm#3, kernel#9, addmm#7
  VizGraph g = BuildVizGraph(traces, *sel);
  ASSERT_EQ(g.nodes.size(), 6u);  // 1, 2, 4, 5, 6, 8
  auto index_of = [&](uint64_t id) {
    for (uint32_t k = 0; k < g.nodes.size(); ++k) {
      if (g.nodes[k].id == id) return k;
    }
    return UINT32_MAX;
  };
  EXPECT_EQ(g.nodes[index_of(2)].folded, 2);
  EXPECT_EQ(g.nodes[index_of(6)].folded, 1);
  // addmm#3 -> relu#4 becomes linear#2 -> relu#4; addmm#7 -> all_reduce becomes
  // linear#6 -> all_reduce; relu#4 -> linear#6 stays.
  std::set<std::pair<uint64_t, uint64_t>> data_edges;
  for (const VizEdge& e : g.edges) {
    if (e.kind == EdgeKind::kData) {
      data_edges.insert({g.nodes[e.from].id, g.nodes[e.to].id});
    }
  }
  EXPECT_EQ(data_edges,
            (std::set<std::pair<uint64_t, uint64_t>>{{2, 4}, {4, 6}, {6, 8}}));
}

TEST(GraphFilterTest, BadFiltersGetErrorsThatNameTheFlag) {
  auto traces = TwoStepTrace();
  NodeFilter f;
  f.name_pattern = "aten::(linear";
  auto sel = SelectNodes(traces, f);
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.status().message().find("--name"), std::string::npos);
  EXPECT_NE(sel.status().message().find("invalid regular expression"),
            std::string::npos);

  f = {};
  f.step = 7;
  sel = SelectNodes(traces, f);
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.status().message().find("the trace has steps 1, 2"),
            std::string::npos)
      << sel.status();

  f = {};
  f.ranks = {3};
  sel = SelectNodes(traces, f);
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.status().message().find("no input has rank 3"),
            std::string::npos);

  f = {};
  f.name_pattern = "no_such_op";
  sel = SelectNodes(traces, f);
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.status().message().find("select none of the 9 nodes"),
            std::string::npos);

  EXPECT_FALSE(ParseIdRange("9:2", &f).ok());
  EXPECT_FALSE(ParseIdRange("a:b", &f).ok());
  EXPECT_FALSE(ParseIdRange(":", &f).ok());
  EXPECT_FALSE(ParseNodeTypes("compute,kernels", &f).ok());
  EXPECT_FALSE(ParseRankList("1,x").ok());
  EXPECT_FALSE(ParseRankList("3-1").ok());
  auto ranks = ParseRankList("0,2-4");
  ASSERT_TRUE(ranks.ok());
  EXPECT_EQ(*ranks, (std::vector<int>{0, 2, 3, 4}));
}

// std::regex recursed once per character: '.*x' over a 30 KB name overflowed
// the stack. RE2 is linear; this must finish and find no match.
TEST(GraphFilterTest, PatternOverLongNameNeitherCrashesNorHangs) {
  std::vector<Node> nodes = {
      MakeNode(1, std::string(30000, 'a'), ChakraProtoMsg::COMP_NODE),
      MakeNode(2, "aten::mm", ChakraProtoMsg::COMP_NODE)};
  std::vector<RankTrace> traces;
  traces.push_back(MakeRankTrace(
      NodeModel::FromGraph(Graph::Build({}, std::move(nodes))), 0, "long.et"));
  NodeFilter f;
  f.name_pattern = ".*x";
  auto sel = SelectNodes(traces, f);
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.status().message().find("select none"), std::string::npos);
  f.name_pattern = "(a+)+$";  // catastrophic for a backtracking matcher
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{1}));
  f.name_pattern = ".*mm$";
  EXPECT_EQ(Select(traces, f), (std::set<uint64_t>{2}));
}

// A rank range is refused before it is expanded: '0-2000000000' asked for 8 GB.
TEST(GraphFilterTest, HugeRankRangeIsRefusedBeforeAllocating) {
  auto ranks = ParseRankList("0-2000000000");
  ASSERT_FALSE(ranks.ok());
  EXPECT_NE(ranks.status().message().find("limit"), std::string::npos);
  EXPECT_FALSE(ParseRankList("2147483647").ok());
  EXPECT_TRUE(ParseRankList("0-1023").ok());
}

TEST(RankTracesTest, RanksFromFileNames) {
  EXPECT_EQ(RankFromFileName("dir/all_reduce.3.et"), 3);
  EXPECT_EQ(RankFromFileName("trace.12.et.gz"), 12);
  EXPECT_EQ(RankFromFileName("resnet.et"), std::nullopt);
  EXPECT_EQ(RankFromFileName("a.b.et"), std::nullopt);
}

TEST(CrossRankTest, AstraAllReduceJoinsAllFourRanks) {
  std::vector<std::string> paths;
  for (int r = 3; r >= 0; --r) {  // any order: ranks come from the names
    paths.push_back(
        std::string(ET_TEST_DATA) +
        "/astra-sim/microbenchmarks/all_reduce/4npus_1MB/all_reduce." +
        std::to_string(r) + ".et");
  }
  auto traces = LoadRankTraces(paths);
  ASSERT_TRUE(traces.ok()) << traces.status();
  ASSERT_EQ(traces->size(), 4u);
  EXPECT_EQ((*traces)[0].rank, 0);
  EXPECT_EQ((*traces)[3].rank, 3);
  auto sel = SelectNodes(*traces, {});
  ASSERT_TRUE(sel.ok());
  VizGraph g = BuildVizGraph(*traces, *sel);
  ASSERT_EQ(g.nodes.size(), 4u);
  ASSERT_EQ(g.edges.size(), 3u);  // a chain rank 0 - 1 - 2 - 3
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(g.edges[k].kind, EdgeKind::kCollective);
    EXPECT_EQ(g.nodes[g.edges[k].from].rank, static_cast<int>(k));
    EXPECT_EQ(g.nodes[g.edges[k].to].rank, static_cast<int>(k) + 1);
  }
}

TEST(CrossRankTest, MlpModelParallelJoinsEachCollectiveWithItsTwin) {
  auto traces =
      LoadRankTraces({std::string(ET_TEST_DATA) + "/chakra/mlp_mp.0.et",
                      std::string(ET_TEST_DATA) + "/chakra/mlp_mp.1.et"});
  ASSERT_TRUE(traces.ok()) << traces.status();
  int64_t collectives_rank0 = 0;
  const NodeModel& rank0 = (*traces)[0].model;
  for (NodeIndex i = 0; i < rank0.size(); ++i) {
    collectives_rank0 += rank0.type(i) == ChakraProtoMsg::COMM_COLL_NODE;
  }
  ASSERT_GT(collectives_rank0, 0);
  auto sel = SelectNodes(*traces, {});
  ASSERT_TRUE(sel.ok());
  VizGraph g = BuildVizGraph(*traces, *sel);
  int64_t joins = 0;
  for (const VizEdge& e : g.edges) {
    if (e.kind != EdgeKind::kCollective) continue;
    ++joins;
    // Same layer name on both ranks: the text converter names nodes by layer.
    EXPECT_EQ(g.nodes[e.from].name, g.nodes[e.to].name);
    EXPECT_EQ(g.nodes[e.from].comm_type, g.nodes[e.to].comm_type);
  }
  EXPECT_EQ(joins, collectives_rank0);
  EXPECT_EQ(g.collective_type_mismatches, 0);
}

// New in et-viz: a directory stands for its per-rank files (the rule of
// base/rank_files.h, as in et-sim and et-convert).
TEST(RankTracesTest, ADirectoryStandsForItsPerRankFiles) {
  auto traces =
      LoadRankTraces({std::string(ET_TEST_DATA) +
                      "/astra-sim/microbenchmarks/all_reduce/4npus_1MB"});
  ASSERT_TRUE(traces.ok()) << traces.status();
  ASSERT_EQ(traces->size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ((*traces)[r].rank, r);
    EXPECT_NE((*traces)[r].path.find("all_reduce." + std::to_string(r) + ".et"),
              std::string::npos);
  }
}

TEST(RankTracesTest, DuplicateRanksAreRejected) {
  const std::string p = std::string(ET_TEST_DATA) + "/chakra/mlp_mp.0.et";
  auto traces = LoadRankTraces({p, p});
  ASSERT_FALSE(traces.ok());
  EXPECT_NE(traces.status().message().find("rank 0"), std::string::npos);
}

}  // namespace
}  // namespace et::viz
