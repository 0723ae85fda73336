// et-convert on the real traces in tests/data: every schema converts,
// collectives are found once each with their sizes and groups, and the graphs
// are valid.
#include "converter/converter.h"

#include <map>
#include <string>
#include <vector>

#include "base/gzip_input.h"
#include "gtest/gtest.h"
#include "model/graph_validation.h"
#include "model/process_group.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/graph_json.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

std::vector<const Node*> NodesOfType(const Graph& g,
                                     ChakraProtoMsg::NodeType type) {
  std::vector<const Node*> out;
  for (const Node& n : g.nodes()) {
    if (n.type() == type) out.push_back(&n);
  }
  return out;
}

// Collectives of one type as (comm_size bytes) in id order.
std::vector<int64_t> CollectiveSizes(const Graph& g,
                                     ChakraProtoMsg::CollectiveCommType t) {
  std::vector<int64_t> sizes;
  for (const Node* n : NodesOfType(g, ChakraProtoMsg::COMM_COLL_NODE)) {
    if (GetInt(*n, attr::kCommType) == t)
      sizes.push_back(GetInt(*n, attr::kCommSize).value());
  }
  return sizes;
}

const std::vector<std::string> kEveryEt = {
    "pytorch-1.13-cpu/nn_demo_et.json.gz",
    "pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz",
    "pytorch-1.13-cpu/ddp_mlp_et_r1.json.gz",
    "pytorch-1.13-cpu/ddp_mlp_et_r2.json.gz",
    "pytorch-1.13-cpu/ddp_mlp_et_r3.json.gz",
    "pytorch-1.13-cpu/tfm_small_et.json.gz",
    "param/resnet_1gpu_et.1.0.3.json.gz",
    "param/resnet_1gpu_et.1.1.1.json.gz",
    "param/resnet_2gpu_et.1.1.0.json.gz",
    "param/pt2_et.1.1.1.json.gz",
    "param/linear_et.json.gz",
    "param/resnet_et.1.0.1.json.gz",
    "hta/simple_add_et.json.gz",
    "chakra/allgather_2rank_et.1.0.2.json.gz",
};

TEST(ConvertTest, EveryTraceConvertsToAValidGraphInBothGranularities) {
  for (Granularity g : {Granularity::kSimulation, Granularity::kAll}) {
    for (const std::string& rel : kEveryEt) {
      ConvertOptions options;
      options.granularity = g;
      auto c = ConvertAndLoad(rel, options);
      ASSERT_TRUE(c.ok()) << rel << ": " << c.status();
      EXPECT_EQ(c->summary.written_nodes, static_cast<int64_t>(c->graph.size()))
          << rel;
      ValidationReport r = ValidateGraph(c->graph);
      EXPECT_TRUE(r.ok()) << rel << ": " << r.ToString();
      EXPECT_TRUE(c->graph.TopologicalOrder().ok()) << rel;
      if (g == Granularity::kAll) {
        // --keep all keeps every ET node.
        EXPECT_EQ(c->summary.written_nodes, c->summary.et_nodes) << rel;
      } else {
        int64_t skipped = 0;
        for (const auto& [reason, count] : c->summary.skipped_by_reason)
          skipped += count;
        // Every ET node is either a node or counted with a reason.
        EXPECT_EQ(c->summary.written_nodes + skipped, c->summary.et_nodes)
            << rel;
      }
    }
  }
}

TEST(ConvertTest, DdpMlpEveryRankHasThreeAllReducesAndTwoBroadcastsOnceEach) {
  for (int rank = 0; rank < 4; ++rank) {
    auto c = ConvertAndLoad("pytorch-1.13-cpu/ddp_mlp_et_r" +
                            std::to_string(rank) + ".json.gz");
    ASSERT_TRUE(c.ok()) << c.status();
    // 82,689 floats: the gradient bucket of the 64-256-256-1 MLP.
    EXPECT_EQ(CollectiveSizes(c->graph, ChakraProtoMsg::ALL_REDUCE),
              (std::vector<int64_t>{330756, 330756, 330756}))
        << "rank " << rank;
    // DDP's start-up broadcasts: 7 ints then 1 int.
    EXPECT_EQ(CollectiveSizes(c->graph, ChakraProtoMsg::BROADCAST),
              (std::vector<int64_t>{28, 4}))
        << "rank " << rank;
    EXPECT_EQ(NodesOfType(c->graph, ChakraProtoMsg::COMM_COLL_NODE).size(), 5u);
    // The gloo work records were folded, not made collectives, nested or not.
    for (const Node* n :
         NodesOfType(c->graph, ChakraProtoMsg::COMM_COLL_NODE)) {
      EXPECT_EQ(n->name().rfind("c10d::", 0), 0u) << n->name();
      EXPECT_EQ(GetString(*n, attr::kDtype).value_or(""),
                GetInt(*n, attr::kCommType) == ChakraProtoMsg::ALL_REDUCE
                    ? "float32"
                    : "int32");
    }
  }
}

TEST(ConvertTest, KeepAllMakesNoExtraCollectivesFromWorkRecords) {
  ConvertOptions options;
  options.granularity = Granularity::kAll;
  auto c = ConvertAndLoad("pytorch-1.13-cpu/ddp_mlp_et_r1.json.gz", options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(NodesOfType(c->graph, ChakraProtoMsg::COMM_COLL_NODE).size(), 5u);
  int gloo_records = 0;
  for (const Node& n : c->graph.nodes()) {
    if (n.name().rfind("gloo:", 0) == 0) {
      ++gloo_records;
      EXPECT_EQ(n.type(), ChakraProtoMsg::COMP_NODE);
      auto owner = GetInt(n, "collective_id");
      ASSERT_TRUE(owner.has_value()) << n.id();
      auto idx = c->graph.Find(static_cast<uint64_t>(*owner));
      ASSERT_TRUE(idx.has_value());
      EXPECT_EQ(c->graph.node(*idx).type(), ChakraProtoMsg::COMM_COLL_NODE);
    }
  }
  EXPECT_EQ(gloo_records, 5);
}

TEST(ConvertTest,
     Resnet2GpuCollectivesInProcessGroupZeroAndWaitsOrderAfterThem) {
  auto c = ConvertAndLoad("param/resnet_2gpu_et.1.1.0.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(CollectiveSizes(c->graph, ChakraProtoMsg::ALL_REDUCE).size(), 15u);
  EXPECT_EQ(CollectiveSizes(c->graph, ChakraProtoMsg::BROADCAST).size(), 6u);
  for (const Node* n : NodesOfType(c->graph, ChakraProtoMsg::COMM_COLL_NODE)) {
    EXPECT_EQ(GetString(*n, attr::kPgName).value_or("?"), "0") << n->id();
  }
  std::vector<ProcessGroup> groups =
      DecodeProcessGroups(c->graph.metadata().attr());
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].name, "0");
  EXPECT_EQ(groups[0].desc, "default_pg");
  EXPECT_EQ(groups[0].MemberCount(0), 2);
  EXPECT_EQ(GetInt(c->graph.metadata().attr(), attr::kWorldSize), 2);
  // The table's node is a zero-cost COMP node now (ASTRA-sim rejects
  // METADATA_NODE); it still carries the table.
  EXPECT_TRUE(NodesOfType(c->graph, ChakraProtoMsg::METADATA_NODE).empty());
  int tables = 0;
  for (const Node* n : NodesOfType(c->graph, ChakraProtoMsg::COMP_NODE)) {
    if (n->name() != "## process_group:init ##") continue;
    ++tables;
    EXPECT_EQ(DecodeProcessGroups(n->attr()).size(), 1u);
    EXPECT_EQ(GetInt(*n, attr::kDurationNs), 0);
    EXPECT_EQ(GetInt(*n, attr::kNumOps), 0);
  }
  EXPECT_EQ(tables, 1);
  // Six waits: plain compute nodes that depend on the collective with their
  // sequence number.
  int waits = 0;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    const Node& n = c->graph.node(i);
    auto seq = GetInt(n, attr::kWaitSeq);
    if (!seq.has_value()) continue;
    ++waits;
    EXPECT_EQ(n.type(), ChakraProtoMsg::COMP_NODE);
    bool waits_on_collective = false;
    for (NodeIndex d : c->graph.ctrl_deps(i)) {
      const Node& dep = c->graph.node(d);
      if (dep.type() == ChakraProtoMsg::COMM_COLL_NODE &&
          GetInt(dep, attr::kCommSeq) == seq) {
        waits_on_collective = true;
      }
    }
    EXPECT_TRUE(waits_on_collective) << "wait " << n.id() << " seq " << *seq;
  }
  EXPECT_EQ(waits, 6);
}

TEST(ConvertTest, AllGatherTwoRankHasTenAllGathersOnce) {
  auto c = ConvertAndLoad("chakra/allgather_2rank_et.1.0.2.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(CollectiveSizes(c->graph, ChakraProtoMsg::ALL_GATHER),
            std::vector<int64_t>(10, 4));  // one float per rank
  for (const Node* n : NodesOfType(c->graph, ChakraProtoMsg::COMM_COLL_NODE)) {
    // 1.0.2 names the group by backend id; it resolves through the group table.
    EXPECT_EQ(GetString(*n, attr::kPgName).value_or("?"), "0");
  }
}

TEST(ConvertTest, GemmCostsAreDerivedFromShapes) {
  auto c = ConvertAndLoad("pytorch-1.13-cpu/nn_demo_et.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  int gemms = 0;
  for (const Node& n : c->graph.nodes()) {
    if (n.name() != "aten::addmm" && n.name() != "aten::mm") continue;
    ++gemms;
    EXPECT_GT(GetInt(n, attr::kNumOps).value_or(0), 0) << n.id();
    EXPECT_EQ(GetString(n, attr::kOpKind).value_or(""), "gemm");
  }
  EXPECT_GT(gemms, 0);
  // FLOPs are counted once: no node is nested inside another node (aten::linear
  // is a GEMM node and its aten::addmm is folded into it, or the reverse, never
  // both).
  for (const Node& n : c->graph.nodes()) {
    auto parent = GetInt(n, attr::kParentId);
    if (parent.has_value()) {
      EXPECT_FALSE(c->graph.Find(*parent).has_value()) << n.id();
    }
  }
}

TEST(ConvertTest, ControlDepsFollowTheCallerNotJsonOrder) {
  // 1.0.1 lists children before their parents; --keep all must still link each
  // child to its caller.
  ConvertOptions options;
  options.granularity = Granularity::kAll;
  auto c = ConvertAndLoad("hta/simple_add_et.json.gz", options);
  ASSERT_TRUE(c.ok()) << c.status();
  int linked = 0;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    auto parent = GetInt(c->graph.node(i), attr::kParentId);
    auto pidx = parent ? c->graph.Find(*parent) : std::nullopt;
    if (!pidx.has_value() || *pidx == i)
      continue;  // the process root is its own parent
    auto deps = c->graph.ctrl_deps(i);
    EXPECT_NE(std::find(deps.begin(), deps.end(), *pidx), deps.end())
        << c->graph.node(i).id();
    ++linked;
  }
  EXPECT_GT(linked, 30);
}

TEST(ConvertTest, EtToJsonRoundTripKeepsEveryNodeAndDependency) {
  auto c = ConvertAndLoad("param/resnet_2gpu_et.1.1.0.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string json_path = TempOut("resnet.json");
  ASSERT_TRUE(EtToJsonFile(c->summary.output_path, json_path).ok());
  std::string text;
  ASSERT_TRUE(ReadFileMaybeGzip(json_path, &text).ok());
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  ASSERT_EQ(doc["nodes"].size(), c->graph.size());
  size_t deps = 0, colls = 0;
  for (const auto& n : doc["nodes"]) {
    if (n.contains("data_deps")) deps += n["data_deps"].size();
    if (n.contains("ctrl_deps")) deps += n["ctrl_deps"].size();
    if (n.value("type", "") == "COMM_COLL_NODE") ++colls;
  }
  EXPECT_EQ(deps,
            static_cast<size_t>(c->summary.data_deps + c->summary.ctrl_deps));
  EXPECT_EQ(colls, 21u);
  EXPECT_EQ(doc["metadata"]["version"], "0.0.4");
}

}  // namespace
}  // namespace et::convert

namespace et::convert {
namespace {

TEST(ConvertTest, EveryCollectiveKnowsItsProfilerStepAcrossThreads) {
  // resnet_1gpu 1.1.1 records ProfilerStep#6..8; DDP's all-reduces run on the
  // autograd thread, outside the main thread's step span, and still belong to
  // their step.
  auto c = ConvertAndLoad("param/resnet_1gpu_et.1.1.1.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  std::map<int64_t, std::map<int64_t, int>>
      per_step;  // step -> comm_type -> count
  for (const ChakraProtoMsg::Node& n : c->graph.nodes()) {
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    auto step = GetInt(n, attr::kStep);
    ASSERT_TRUE(step.has_value()) << n.id();
    ++per_step[*step][GetInt(n, attr::kCommType).value()];
  }
  ASSERT_EQ(per_step.size(), 3u);
  for (int64_t s : {6, 7, 8}) {
    EXPECT_EQ(per_step[s][ChakraProtoMsg::ALL_REDUCE], 5) << "step " << s;
    EXPECT_EQ(per_step[s][ChakraProtoMsg::BROADCAST], 2) << "step " << s;
  }
}

}  // namespace
}  // namespace et::convert
