// Tests of repeat folding (visualizer/repeat_folding.h) on small built chains:
// which runs are found, that the count and ids are right, where edges go, that
// a run stops where the dependency shape changes, and what the drawing says.
#include "visualizer/repeat_folding.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "visualizer/dot_writer.h"
#include "visualizer/graph_export.h"
#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"
#include "visualizer/viz_graph.h"

namespace et::viz {
namespace {

using ChakraProtoMsg::Node;

// CPU ops named `names`, ids 0.., each depending on the one before, plus the
// data edges `extra` (from, to).
VizGraph Ops(const std::vector<std::string>& names,
             const std::vector<std::pair<int, int>>& extra = {}) {
  std::vector<Node> nodes(names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    nodes[k].set_id(k);
    nodes[k].set_name(names[k]);
    nodes[k].set_type(ChakraProtoMsg::COMP_NODE);
    SetBool(nodes[k].mutable_attr(), attr::kIsCpuOp, true);
    if (k > 0) nodes[k].add_data_deps(k - 1);
  }
  for (const auto& [from, to] : extra) nodes[to].add_data_deps(from);
  std::vector<RankTrace> traces;
  traces.push_back(MakeRankTrace(NodeModel::FromGraph(Graph::Build({}, nodes)),
                                 0, "ops.et"));
  auto sel = SelectNodes(traces, {});
  EXPECT_TRUE(sel.ok());
  return BuildVizGraph(traces, *sel);
}

// embed, then `blocks` x (ln, linear, gelu), then loss.
std::vector<std::string> Blocks(int blocks) {
  std::vector<std::string> names = {"embed"};
  for (int b = 0; b < blocks; ++b) {
    for (const char* op : {"ln", "linear", "gelu"}) names.push_back(op);
  }
  names.push_back("loss");
  return names;
}

bool HasEdge(const VizGraph& g, uint64_t from_id, uint64_t to_id) {
  for (const VizEdge& e : g.edges) {
    if (g.nodes[e.from].id == from_id && g.nodes[e.to].id == to_id) return true;
  }
  return false;
}

TEST(RepeatFoldingTest, FourBlocksAreDrawnOnceWithTheirCountAndIds) {
  const VizGraph g = Ops(Blocks(4));  // 14 nodes
  const VizGraph folded = FoldRepeats(g);
  ASSERT_EQ(folded.repeats.size(), 1u);
  const RepeatRun& run = folded.repeats[0];
  EXPECT_EQ(run.count, 4);
  EXPECT_EQ(run.period, 3);
  EXPECT_EQ(run.first_id, 1u);
  EXPECT_EQ(run.last_id, 12u);
  EXPECT_EQ(RepeatLabel(run), "x 4 (ids 1..12)");
  // Nothing silently dropped: drawn + folded = all.
  EXPECT_EQ(folded.nodes.size(), 5u);
  EXPECT_EQ(folded.repeat_folded_nodes, 9);
  EXPECT_EQ(folded.nodes.size() + folded.repeat_folded_nodes, g.nodes.size());
  EXPECT_EQ(folded.input_nodes, g.input_nodes);
  // The drawn instance is the first; the last instance's edge to `loss`
  // leaves from it; the chain from one instance to the next is gone (it
  // would be a cycle).
  EXPECT_EQ(folded.nodes[1].id, 1u);
  EXPECT_EQ(folded.nodes[1].repeat, 0);
  EXPECT_EQ(folded.nodes[0].repeat, -1);
  EXPECT_TRUE(HasEdge(folded, 0, 1));
  EXPECT_TRUE(HasEdge(folded, 3, 13));
  EXPECT_FALSE(HasEdge(folded, 3, 1));
  EXPECT_EQ(folded.edges.size(), 4u);  // 0->1->2->3->13
}

TEST(RepeatFoldingTest, ARunStopsWhereTheDependencyShapeChanges) {
  // Block 3 (ids 7..9) has a residual edge ln -> gelu that the others lack:
  // same names, another shape; the run is blocks 1 and 2 only.
  const VizGraph folded = FoldRepeats(Ops(Blocks(4), {{7, 9}}));
  ASSERT_FALSE(folded.repeats.empty());
  EXPECT_EQ(folded.repeats[0].count, 2);
  EXPECT_EQ(folded.repeats[0].first_id, 1u);
  EXPECT_EQ(folded.repeats[0].last_id, 6u);
  for (const VizNode& n : folded.nodes) {
    if (n.id >= 7 && n.id <= 9) {
      EXPECT_EQ(n.repeat, -1) << n.id;
    }
  }
}

TEST(RepeatFoldingTest, ShortRepeatsAreLeftAlone) {
  // view x 2 and (a, b) x 2 cover fewer than kMinRepeatNodes nodes.
  const VizGraph g = Ops({"x", "view", "view", "a", "b", "a", "b", "y"});
  const VizGraph folded = FoldRepeats(g);
  EXPECT_TRUE(folded.repeats.empty());
  EXPECT_EQ(folded.nodes.size(), g.nodes.size());
  EXPECT_EQ(folded.edges.size(), g.edges.size());
}

TEST(RepeatFoldingTest, TheDrawingSaysWhatWasFolded) {
  const std::string dot = WriteDot(FoldRepeats(Ops(Blocks(4))), {"blocks"});
  EXPECT_NE(dot.find("label=\"x 4 (ids 1..12): 3 more folded (9 nodes)\""),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("9 more nodes in 1 repeated runs folded"),
            std::string::npos);
}

TEST(RepeatFoldingTest, AutoFoldsOnlyPageDrawingsThatDoNotFitAsTheyAre) {
  const VizGraph tall = Ops(Blocks(20));  // 62 layers: folded into columns
  EXPECT_TRUE(ShouldFoldRepeats(tall, GraphFormat::kPdf, RepeatMode::kAuto,
                                kDefaultMaxDrawnNodes));
  EXPECT_TRUE(ShouldFoldRepeats(tall, GraphFormat::kSvg, RepeatMode::kAuto,
                                kDefaultMaxDrawnNodes));
  EXPECT_FALSE(ShouldFoldRepeats(tall, GraphFormat::kDot, RepeatMode::kAuto,
                                 kDefaultMaxDrawnNodes));
  EXPECT_FALSE(ShouldFoldRepeats(tall, GraphFormat::kGraphMl, RepeatMode::kAuto,
                                 kDefaultMaxDrawnNodes));
  EXPECT_FALSE(ShouldFoldRepeats(tall, GraphFormat::kPdf, RepeatMode::kKeep,
                                 kDefaultMaxDrawnNodes));
  EXPECT_TRUE(ShouldFoldRepeats(tall, GraphFormat::kJson, RepeatMode::kFold,
                                kDefaultMaxDrawnNodes));
  const VizGraph short_graph = Ops(Blocks(3));  // 11 layers fit a page
  EXPECT_FALSE(ShouldFoldRepeats(short_graph, GraphFormat::kPdf,
                                 RepeatMode::kAuto, kDefaultMaxDrawnNodes));
  EXPECT_FALSE(ParseRepeatMode("sometimes").ok());
  EXPECT_EQ(*ParseRepeatMode("keep"), RepeatMode::kKeep);
}

}  // namespace
}  // namespace et::viz
