// Tests of the ASTRA-sim 1.0 text workload converter: parsing (every
// parallelism line, errors with file:line) and the dependency structure of the
// graphs it builds. The workloads below are written in the published format
// (formats.md section 4: tab- or space-separated, 12 columns per layer) with
// numbers chosen for these tests.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>

#include "converter/astra_text/astra_text_converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/graph_validation.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

std::string TempDir() {
  // Under the build tree's test-tmp (TEST_TMPDIR), one folder per process.
  std::string dir =
      ::testing::TempDir() + "astra_text_test." + std::to_string(getpid());
  std::string cmd = "mkdir -p '" + dir + "'";
  EXPECT_EQ(system(cmd.c_str()), 0);
  return dir;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  static const std::string dir = TempDir();
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Node lookup by name and the names of a node's data deps.
class GraphView {
 public:
  explicit GraphView(std::vector<Node> nodes) : nodes_(std::move(nodes)) {
    for (const Node& n : nodes_) by_name_[n.name()] = &n;
  }
  const Node* Find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  std::vector<std::string> DepNames(const std::string& name) const {
    std::vector<std::string> names;
    const Node* n = Find(name);
    if (n == nullptr) return {"<no node " + name + ">"};
    for (uint64_t d : n->data_deps()) names.push_back(nodes_[d].name());
    std::sort(names.begin(), names.end());
    return names;
  }
  int Count(ChakraProtoMsg::NodeType type) const {
    return static_cast<int>(
        std::count_if(nodes_.begin(), nodes_.end(),
                      [&](const Node& n) { return n.type() == type; }));
  }
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  std::vector<Node> nodes_;
  std::map<std::string, const Node*> by_name_;
};

GraphView Build(const std::string& text, int passes = 1,
                double cycle_ns = 1.0) {
  absl::StatusOr<AstraWorkload> w = ParseAstraText(text, "w.txt");
  EXPECT_TRUE(w.ok()) << w.status();
  AstraTextOptions options;
  options.num_passes = passes;
  options.cycle_ns = cycle_ns;
  absl::StatusOr<AstraRankGraph> g = BuildAstraRankGraph(*w, 0, 4, options);
  EXPECT_TRUE(g.ok()) << g.status();
  // Ids are dense and every dep points backwards: a valid topological order.
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    EXPECT_EQ(g->nodes[i].id(), i);
    for (uint64_t d : g->nodes[i].data_deps()) EXPECT_LT(d, i);
  }
  return GraphView(std::move(g->nodes));
}

using Names = std::vector<std::string>;

constexpr char kDataParallel[] =
    "DATA\n"
    "3\n"
    "conv1\t-1\t2000\tNONE\t0\t1500\tNONE\t0\t3000\tALLREDUCE\t37632\t100\n"
    "conv2\t-1\t4000\tNONE\t0\t3500\tNONE\t0\t5000\tALLREDUCE\t65536\t0\n"
    "fc\t-1\t1000\tNONE\t0\t900\tNONE\t0\t800\tALLREDUCE\t8192000\t0\n";

TEST(AstraTextTest, DataParallelChainsAndPasses) {
  GraphView g = Build(kDataParallel, /*passes=*/2);
  // Per pass: 3 fwd + 3 wg + 2 ig computes, 3 all-reduces, 1 update (conv1's
  // 100 cycles).
  EXPECT_EQ(g.Count(ChakraProtoMsg::COMP_NODE), 2 * (3 + 3 + 2 + 1));
  EXPECT_EQ(g.Count(ChakraProtoMsg::COMM_COLL_NODE), 2 * 3);
  EXPECT_EQ(g.Find("p0:conv1:ig"),
            nullptr);  // no input gradient for the first layer
  EXPECT_EQ(g.DepNames("p0:conv2:fwd"), Names{"p0:conv1:fwd"});
  // Backward from the last layer: wg, then ig, then the previous layer's wg.
  EXPECT_EQ(g.DepNames("p0:fc:wg"), Names{"p0:fc:fwd"});
  EXPECT_EQ(g.DepNames("p0:fc:ig"), Names{"p0:fc:wg"});
  EXPECT_EQ(g.DepNames("p0:conv2:wg"), Names{"p0:fc:ig"});
  EXPECT_EQ(g.DepNames("p0:fc:wg_comm.ALL_REDUCE"), Names{"p0:fc:wg"});
  // The next pass's forward of a layer waits for that layer's gradient
  // all-reduce (and conv1's 100-cycle update after it).
  EXPECT_EQ(g.DepNames("p1:conv1:fwd"),
            (Names{"p0:conv1:wg", "p0:conv1:wg_comm.update"}));
  EXPECT_EQ(g.DepNames("p1:fc:fwd"),
            (Names{"p0:fc:wg_comm.ALL_REDUCE", "p1:conv2:fwd"}));
  const Node* ar = g.Find("p0:fc:wg_comm.ALL_REDUCE");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(GetInt(ar->attr(), attr::kCommType), ChakraProtoMsg::ALL_REDUCE);
  EXPECT_EQ(GetInt(ar->attr(), attr::kCommSize), 8192000);
  const Node* fwd = g.Find("p0:conv2:fwd");
  EXPECT_EQ(fwd->duration_micros(), 4u);  // 4000 cycles at 1 GHz
  EXPECT_EQ(GetInt(fwd->attr(), attr::kDurationNs), 4000);
  EXPECT_EQ(GetBool(fwd->attr(), attr::kIsCpuOp), false);
}

TEST(AstraTextTest, CycleTimeScalesDurations) {
  GraphView g = Build(kDataParallel, 1, /*cycle_ns=*/0.5);
  EXPECT_EQ(GetInt(g.Find("p0:conv2:fwd")->attr(), attr::kDurationNs), 2000);
  EXPECT_EQ(g.Find("p0:conv2:fwd")->duration_micros(), 2u);
  EXPECT_EQ(g.Find("p0:fc:ig")->duration_micros(),
            1u);  // 450 ns: at least 1 us
}

constexpr char kModelParallel[] =
    "MODEL\n"
    "2\n"
    "mlp0 -1 32291 ALLGATHER 37632 32291 ALLREDUCE 37632 12864 NONE 0 3229\n"
    "mlp1 -1 7488 ALLGATHER 65536 7488 ALLREDUCE 65536 3648 NONE 0 0\n";

TEST(AstraTextTest, ModelParallelBlocksOnActivations) {
  GraphView g = Build(kModelParallel);
  // The forward all-gather (plus its update delay) blocks the next layer.
  EXPECT_EQ(g.DepNames("p0:mlp0:fwd_comm.ALL_GATHER"), Names{"p0:mlp0:fwd"});
  EXPECT_EQ(g.DepNames("p0:mlp1:fwd"), Names{"p0:mlp0:fwd_comm.update"});
  // Backward: input gradient first; its all-reduce gates the previous layer.
  EXPECT_EQ(g.DepNames("p0:mlp1:ig"), Names{"p0:mlp1:fwd_comm.ALL_GATHER"});
  EXPECT_EQ(g.DepNames("p0:mlp1:wg"), Names{"p0:mlp1:ig"});
  EXPECT_EQ(g.DepNames("p0:mlp0:ig"),
            (Names{"p0:mlp1:ig_comm.ALL_REDUCE", "p0:mlp1:wg"}));
  EXPECT_NE(g.Find("p0:mlp0:ig"), nullptr);
  EXPECT_EQ(g.Find("p0:mlp0:ig_comm.ALL_REDUCE"),
            nullptr);  // nothing below layer 0
  EXPECT_EQ(g.Find("p0:mlp0:wg_comm.NONE"), nullptr);
  EXPECT_EQ(g.Count(ChakraProtoMsg::COMM_COLL_NODE),
            3);  // 2 all-gathers, 1 all-reduce
}

TEST(AstraTextTest, HybridDataModelIssuesAllThree) {
  GraphView g = Build(
      "HYBRID_DATA_MODEL\n2\n"
      "l0\t-"
      "1\t100\tALLGATHER\t1024\t100\tREDUCESCATTER\t1024\t100\tALLREDUCE\t4096"
      "\t0\n"
      "l1\t-"
      "1\t100\tALLGATHER\t2048\t100\tREDUCESCATTER\t2048\t100\tALLREDUCE\t8192"
      "\t0\n",
      2);
  EXPECT_EQ(g.Count(ChakraProtoMsg::COMM_COLL_NODE), 2 * (2 + 1 + 2));
  EXPECT_EQ(g.DepNames("p0:l1:wg_comm.ALL_REDUCE"), Names{"p0:l1:wg"});
  EXPECT_EQ(g.DepNames("p1:l0:fwd"),
            (Names{"p0:l0:wg", "p0:l0:wg_comm.ALL_REDUCE"}));
  EXPECT_EQ(
      GetInt(g.Find("p0:l1:ig_comm.REDUCE_SCATTER")->attr(), attr::kCommType),
      ChakraProtoMsg::REDUCE_SCATTER);
}

TEST(AstraTextTest, MicroIssuesCollectivesWithoutDeps) {
  GraphView g =
      Build("MICRO\n1\nconv1 -1 5 NONE 0 5 NONE 0 5  ALLREDUCE 1048576 5\n", 3);
  // Each pass: the all-reduce and its 5-cycle update; no compute, no chain
  // between passes.
  EXPECT_EQ(g.Count(ChakraProtoMsg::COMM_COLL_NODE), 3);
  EXPECT_EQ(g.Count(ChakraProtoMsg::COMP_NODE), 3);
  EXPECT_TRUE(g.DepNames("p2:conv1:wg_comm.ALL_REDUCE").empty());
}

constexpr char kDlrm[] =
    "HYBRID_DLRM\t2\n"
    "4\n"
    "Embedding\t-"
    "1\t300\tALLTOALL\t98304\t300\tALLTOALL\t98304\t300\tNONE\t0\t0\n"
    "Bottom_0\t-1\t1280\tNONE\t0\t794\tNONE\t0\t896\tALLREDUCE\t13312\t0\n"
    "Bottom_1\t-1\t2560\tNONE\t0\t2560\tNONE\t0\t1792\tALLREDUCE\t524288\t0\n"
    "Top_0\t-1\t2560\tNONE\t0\t2560\tNONE\t0\t1792\tALLREDUCE\t524288\t0\n";

TEST(AstraTextTest, DlrmEmbeddingAllToAllOverlapsBottomMlp) {
  GraphView g = Build(kDlrm, 2);
  // The embedding all-to-all runs beside the bottom MLP; the first top layer
  // waits.
  EXPECT_EQ(g.DepNames("p0:Bottom_0:fwd"), Names{"p0:Embedding:fwd"});
  EXPECT_EQ(g.DepNames("p0:Top_0:fwd"),
            (Names{"p0:Bottom_1:fwd", "p0:Embedding:fwd_comm.ALL_TO_ALL"}));
  // Its gradient all-to-all is issued after the first top layer's input
  // gradient, and (HYBRID_DLRM, not _ENHANCED) ends the pass.
  EXPECT_EQ(g.DepNames("p0:Embedding:ig_comm.ALL_TO_ALL"),
            Names{"p0:Top_0:ig"});
  EXPECT_EQ(g.DepNames("p1:Embedding:fwd"),
            (Names{"p0:Embedding:ig_comm.ALL_TO_ALL", "p0:Embedding:wg"}));
}

TEST(AstraTextTest, HeaderOptionsAreRecorded) {
  absl::StatusOr<AstraWorkload> t = ParseAstraText(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD\tmodel_parallel_NPU_group: 4 "
      "checkpoints: 2 0 1 "
      "checkpoint_initiates: 1 1\n2\n"
      "Q1\t-"
      "1\t3145728\tNONE\t0\t2162688\tALLREDUCE\t8388608\t2228224\tALLREDUCE\t33"
      "554432\t10\n"
      "K1\t-"
      "1\t3145728\tNONE\t0\t2162688\tNONE\t0\t2228224\tALLREDUCE\t33554432\t10"
      "\n",
      "t.txt");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->parallelism, AstraParallelism::kHybridTransformerFwdInBckwd);
  EXPECT_EQ(t->model_parallel_npu_group, 4);
  EXPECT_EQ(t->checkpoint_layers, (std::vector<int>{0, 1}));
  EXPECT_EQ(t->checkpoint_initiating_layers, (std::vector<int>{1}));
  absl::StatusOr<AstraRankGraph> g = BuildAstraRankGraph(*t, 3, 8, {});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(GetString(g->metadata.attr(), kAstraParallelismAttr),
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  EXPECT_EQ(GetInt(g->metadata.attr(), kAstraMpGroupAttr), 4);
  EXPECT_EQ(GetInt(g->metadata.attr(), attr::kRank), 3);
  EXPECT_EQ(GetInt(g->metadata.attr(), attr::kWorldSize), 8);

  absl::StatusOr<AstraWorkload> custom = ParseAstraText(
      "HYBRID_CUSTOMIZED\n2\n"
      "a -1 10 ALLGATHER 64 10 REDUCESCATTER 64 10 ALLREDUCE 64 1 "
      "HYBRID_DATA_MODEL\n"
      "b -1 10 ALLGATHER 64 10 REDUCESCATTER 64 10 ALLREDUCE 64 1 DATA\n",
      "c.txt");
  ASSERT_TRUE(custom.ok()) << custom.status();
  EXPECT_EQ(custom->layers[1].own_parallelism, AstraParallelism::kData);
  absl::StatusOr<AstraRankGraph> cg = BuildAstraRankGraph(*custom, 0, 2, {});
  ASSERT_TRUE(cg.ok());
  GraphView view(cg->nodes);
  EXPECT_NE(view.Find("p0:a:fwd_comm.ALL_GATHER"), nullptr);
  EXPECT_EQ(view.Find("p0:b:fwd_comm.ALL_GATHER"),
            nullptr);  // DATA layer: weights only
  EXPECT_NE(view.Find("p0:b:wg_comm.ALL_REDUCE"), nullptr);

  for (const char* p :
       {"DATA", "MODEL", "HYBRID_MODEL_DATA", "HYBRID_TRANSFORMER",
        "HYBRID_DLRM_ENHANCED", "DISTRIBUTED_INFERENCE"}) {
    EXPECT_EQ(AstraParallelismName(*ParseAstraParallelism(p)), p);
  }
}

void ExpectError(const std::string& text, const std::string& where,
                 const std::string& what) {
  absl::StatusOr<AstraWorkload> w = ParseAstraText(text, "bad.txt");
  ASSERT_FALSE(w.ok()) << text;
  std::string message(w.status().message());
  EXPECT_EQ(message.rfind(where, 0), 0u) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(AstraTextTest, BadFilesNameTheLine) {
  ExpectError("", "bad.txt:1:", "empty");
  ExpectError("PIPELINE\n1\n", "bad.txt:1:", "unknown parallelism 'PIPELINE'");
  ExpectError("DATA\nthree\n", "bad.txt:2:", "layer count");
  ExpectError("DATA\n2\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
              "bad.txt:4:", "expected 2 layer lines, found 1");
  ExpectError("DATA\n1\n\nl0 -1 1 NONE 0 1 NONE 0 1 BROADCAST 8 0\n",
              "bad.txt:4:", "weight-gradient comm type 'BROADCAST'");
  ExpectError("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8\n",
              "bad.txt:3:", "11 columns, expected 12");
  ExpectError("DATA\n1\nl0 -1 -5 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
              "bad.txt:3:", "forward compute time '-5'");
  ExpectError("HYBRID_DLRM\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
              "bad.txt:1:", "last bottom layer");
  ExpectError(
      "HYBRID_TRANSFORMER\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
      "bad.txt:1:", "model_parallel_NPU_group");
  ExpectError(
      "HYBRID_CUSTOMIZED\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0 PIPE\n",
      "bad.txt:3:", "per-layer parallelism 'PIPE'");
}

TEST(AstraTextTest, ConvertWritesOneValidEtPerRank) {
  std::string txt = WriteFile("dp.txt", kDataParallel);
  std::string pattern = WriteFile("dp.%d.et", "");
  AstraTextOptions options;
  options.num_passes = 2;
  absl::StatusOr<AstraTextReport> s =
      ConvertAstraText(txt, pattern, 4, options);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->parallelism, "DATA");
  ASSERT_EQ(s->output_paths.size(), 4u);
  EXPECT_EQ(s->collectives_by_type.at("ALL_REDUCE"), 6);
  EXPECT_EQ(s->collective_bytes_by_type.at("ALL_REDUCE"),
            2 * (37632 + 65536 + 8192000));
  EXPECT_EQ(s->compute_ns_per_rank,
            2 * (2000 + 4000 + 1000 + 3500 + 900 + 3000 + 5000 + 800 + 100));
  for (int rank = 0; rank < 4; ++rank) {
    absl::StatusOr<Graph> graph = LoadGraph(s->output_paths[rank]);
    ASSERT_TRUE(graph.ok()) << graph.status();
    EXPECT_EQ(static_cast<int64_t>(graph->size()), s->nodes_per_rank);
    EXPECT_TRUE(ValidateGraph(*graph).ok());
    EXPECT_EQ(GetInt(graph->metadata().attr(), attr::kRank), rank);
  }
}

TEST(AstraTextTest, ConvertRejectsBadArguments) {
  std::string txt = WriteFile("dp2.txt", kDataParallel);
  EXPECT_FALSE(
      ConvertAstraText(txt, WriteFile("single.et", ""), 2).ok());  // no %d
  EXPECT_FALSE(ConvertAstraText(txt, WriteFile("x.%d.et", ""), 0).ok());
  absl::StatusOr<AstraTextReport> missing =
      ConvertAstraText(txt + ".missing", WriteFile("y.%d.et", ""), 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("dp2.txt.missing"),
            std::string::npos);
  std::string dir = txt.substr(0, txt.rfind('/'));
  EXPECT_FALSE(ConvertAstraText(dir, WriteFile("z.%d.et", ""), 1).ok());
}

}  // namespace
}  // namespace et::convert
