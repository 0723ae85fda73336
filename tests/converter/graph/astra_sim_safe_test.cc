// Our .et must run in ASTRA-sim as it is, current (feeder v3) and older
// (feeders v1/v2). ASTRA-sim cannot be built here (docs/astra-sim.md says
// why), so this checks, on every ET in tests/data converted by et-convert,
// what those feeders assert or need to finish:
//  - node types: Statistics.cc asserts on anything outside COMP, COMM_COLL,
//    COMM_SEND, COMM_RECV, MEM_LOAD, MEM_STORE (we used to write METADATA);
//  - Workload::issue_comm throws "Comm node should not be on CPU" for a COMM
//    node with is_cpu_op true (host-side collectives, e.g. gloo);
//  - a send without comm_dst (recv without comm_src) is never matched: a hang;
//  - a collective in a group of one rank never finishes (Sys makes no
//    collective phase for it: "Hardware Resource ... has unreleased nodes",
//    as on a Megatron TP8 trace's data-parallel group of one): only pg "0"
//    (every NPU) or a group of two or more ranks;
//  - v1/v2 follow data_deps only: every ctrl dep (issue order) must be a data
//    dep too, and data_deps alone must reach every node.
#include <fstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "base/gzip_input.h"
#include "converter/converter.h"
#include "converter/graph/node_emitter.h"
#include "gtest/gtest.h"
#include "model/process_group.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

bool IsComm(const Node& n) {
  return n.type() == ChakraProtoMsg::COMM_COLL_NODE ||
         n.type() == ChakraProtoMsg::COMM_SEND_NODE ||
         n.type() == ChakraProtoMsg::COMM_RECV_NODE;
}

// Every violation of the invariants above, one line each (empty: safe).
std::vector<std::string> AstraSimViolations(const Graph& g) {
  std::vector<std::string> out;
  absl::flat_hash_map<std::string, int64_t> group_members;
  const int64_t world =
      GetInt(g.metadata().attr(), attr::kWorldSize).value_or(0);
  for (const ProcessGroup& pg : DecodeProcessGroups(g.metadata().attr()))
    group_members[pg.name] = pg.MemberCount(world);
  absl::flat_hash_map<uint64_t, size_t> index;
  for (size_t i = 0; i < g.size(); ++i) index.emplace(g.node(i).id(), i);
  std::vector<int> pending(g.size(), 0);
  std::vector<std::vector<size_t>> users(g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& n = g.node(i);
    const std::string where =
        "node " + std::to_string(n.id()) + " (" + n.name() + "): ";
    switch (n.type()) {
      case ChakraProtoMsg::COMP_NODE:
      case ChakraProtoMsg::COMM_COLL_NODE:
      case ChakraProtoMsg::COMM_SEND_NODE:
      case ChakraProtoMsg::COMM_RECV_NODE:
      case ChakraProtoMsg::MEM_LOAD_NODE:
      case ChakraProtoMsg::MEM_STORE_NODE:
        break;
      default:
        out.push_back(where + "type " +
                      ChakraProtoMsg::NodeType_Name(n.type()));
    }
    if (IsComm(n) && GetBool(n, attr::kIsCpuOp).value_or(false))
      out.push_back(where + "COMM node with is_cpu_op true");
    if (n.type() == ChakraProtoMsg::COMM_SEND_NODE &&
        !GetInt(n, attr::kCommDst).has_value())
      out.push_back(where + "send without comm_dst");
    if (n.type() == ChakraProtoMsg::COMM_RECV_NODE &&
        !GetInt(n, attr::kCommSrc).has_value())
      out.push_back(where + "recv without comm_src");
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
      const std::string pg = GetString(n, attr::kPgName).value_or("");
      auto it = group_members.find(pg);
      if (!pg.empty() && pg != "0" &&
          (it == group_members.end() || it->second < 2)) {
        out.push_back(where + "collective in group '" + pg +
                      "' of fewer than two ranks");
      }
    }
    std::vector<uint64_t> data(n.data_deps().begin(), n.data_deps().end());
    for (uint64_t c : n.ctrl_deps()) {
      if (std::find(data.begin(), data.end(), c) == data.end()) {
        out.push_back(where + "ctrl dep " + std::to_string(c) +
                      " not in data_deps");
      }
    }
    for (uint64_t d : data) {
      auto it = index.find(d);
      if (it == index.end()) {
        out.push_back(where + "data dep " + std::to_string(d) + " not a node");
        continue;
      }
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  // Kahn over data_deps alone, as a v1/v2 feeder issues nodes.
  std::vector<size_t> ready;
  for (size_t i = 0; i < g.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  size_t issued = 0;
  while (!ready.empty()) {
    const size_t i = ready.back();
    ready.pop_back();
    ++issued;
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push_back(u);
  }
  if (issued != g.size()) {
    out.push_back("data_deps alone issue " + std::to_string(issued) + " of " +
                  std::to_string(g.size()) + " nodes");
  }
  return out;
}

void ExpectSafe(const std::string& et, const std::string& kineto = "",
                int rank = -1) {
  ConvertOptions options;
  options.kineto_path = kineto.empty() ? "" : DataPath(kineto);
  options.rank = rank;
  auto c = ConvertAndLoad(et, options);
  ASSERT_TRUE(c.ok()) << et << ": " << c.status();
  ASSERT_GT(c->graph.size(), 0u);
  std::vector<std::string> v = AstraSimViolations(c->graph);
  EXPECT_TRUE(v.empty()) << et << ": " << v.size()
                         << " violations, first: " << v.front();
  EXPECT_EQ(c->summary.nodes_by_type.count("METADATA_NODE"), 0u) << et;
}

TEST(AstraSimSafeTest, EveryUnlinkedTraceInTestData) {
  for (const char* et :
       {"pytorch-1.13-cpu/nn_demo_et.json.gz",
        "pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz",
        "pytorch-1.13-cpu/ddp_mlp_et_r1.json.gz",
        "pytorch-1.13-cpu/ddp_mlp_et_r2.json.gz",
        "pytorch-1.13-cpu/ddp_mlp_et_r3.json.gz",
        "pytorch-1.13-cpu/tfm_small_et.json.gz", "param/pt2_et.1.1.1.json.gz",
        "param/resnet_1gpu_et.1.0.3.json.gz",
        "param/resnet_1gpu_et.1.1.1.json.gz",
        "param/resnet_2gpu_et.1.1.0.json.gz", "param/resnet_et.1.0.1.json.gz",
        "param/linear_et.json.gz", "hta/simple_add_et.json.gz",
        "chakra/allgather_2rank_et.1.0.2.json.gz",
        "recorded/mlp_steps_et.json.gz"}) {
    SCOPED_TRACE(et);
    ExpectSafe(et);
  }
}

TEST(AstraSimSafeTest, LinkedTraces) {
  ExpectSafe("hta/simple_add_et.json.gz", "hta/simple_add_kineto.json.gz");
  ExpectSafe("recorded/mlp_steps_et.json.gz",
             "recorded/mlp_steps_trace.json.gz");
  ExpectSafe("pytorch-1.13-cpu/ddp_mlp_et_r1.json.gz",
             "pytorch-1.13-cpu/ddp_mlp_trace_r1.json.gz", 1);
}

// The DDP trace's all-reduces run on the host (gloo): they stay COMM nodes,
// not on the CPU, and the issue order reaches v1/v2 through data_deps.
TEST(AstraSimSafeTest, HostSideCollectivesAreCommNodesOffTheCpu) {
  auto c = ConvertAndLoad("pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  int colls = 0;
  for (size_t i = 0; i < c->graph.size(); ++i) {
    const Node& n = c->graph.node(i);
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    ++colls;
    EXPECT_EQ(GetBool(n, attr::kIsCpuOp), false) << n.name();
    EXPECT_FALSE(n.data_deps().empty()) << n.name();
  }
  EXPECT_EQ(colls, 5);  // 3 all-reduces + 2 broadcasts
}

TEST(AstraSimSafeTest, SendWithoutPeerIsACountedCompNode) {
  const std::string path = TempOut("peerless_send.json");
  std::ofstream(path)
      << "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [{\"name\": "
         "\"[pytorch|profiler|execution_graph|thread]\", \"id\": 2, "
         "\"parent\": 0, \"tid\": 1}, {\"name\": \"c10d::send\", \"id\": 10, "
         "\"rf_id\": 10, \"parent\": 2, \"fw_parent\": 0, \"seq_id\": -1, "
         "\"scope\": 0, \"tid\": 1, \"fw_tid\": 0, \"op_schema\": \"\", "
         "\"inputs\": [[[100, 101, 0, 256, 4, \"cuda:0\"]], \"<Object>\"], "
         "\"input_shapes\": [[[256]], []], \"input_types\": "
         "[\"GenericList[Tensor(float)]\", \"Object\"], \"outputs\": [], "
         "\"output_shapes\": [], \"output_types\": []}]}";
  auto summary = ConvertFile(path, path + ".et", {});
  ASSERT_TRUE(summary.ok()) << summary.status();
  auto g = LoadGraph(path + ".et");
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& send = g->node(*g->Find(10));
  EXPECT_EQ(send.type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(summary->skipped_by_reason[kPeerlessP2pReason], 1);
  ASSERT_FALSE(summary->warnings.empty());
  EXPECT_NE(summary->warnings.back().find("no peer rank"), std::string::npos);
  EXPECT_TRUE(AstraSimViolations(*g).empty());
}

// A real 2-rank NCCL trace (param resnet_2gpu, rank 1) whose six broadcasts
// are moved to a group of one rank, as Megatron's data-parallel group is at
// dp=1: they have no communication and become COMP nodes that keep what they
// were; the all-reduces on the default group stay collectives.
TEST(AstraSimSafeTest, CollectiveInAOneRankGroupIsACountedCompNode) {
  std::string text;
  ASSERT_TRUE(
      ReadFileMaybeGzip(DataPath("param/resnet_2gpu_et.1.1.0.json.gz"), &text)
          .ok());
  nlohmann::json trace = nlohmann::json::parse(text);
  int moved = 0;
  for (nlohmann::json& node : trace["nodes"]) {
    if (node["name"] == "## process_group:init ##") {
      node["inputs"]["values"][0] =
          "[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", "
          "\"backend_config\": \"cuda:nccl\", \"ranks\": [], "
          "\"group_size\": 2, \"group_count\": 2}, {\"pg_name\": \"1\", "
          "\"pg_desc\": \"data_parallel\", \"backend_config\": "
          "\"cuda:nccl\", \"ranks\": [1], \"group_size\": 1, "
          "\"group_count\": 2}]";
    }
    if (node["name"] != "record_param_comms") continue;
    if (node["inputs"]["values"][4] != "broadcast") continue;
    ++moved;
    node["inputs"]["values"][2] = {"1", "data_parallel"};
    for (nlohmann::json& a : node["attrs"]) {
      if (a["name"] == "pg_name") a["value"] = "1";
      if (a["name"] == "pg_desc") a["value"] = "data_parallel";
      if (a["name"] == "pg_size") a["value"] = 1;
    }
  }
  ASSERT_EQ(moved, 6);
  const std::string in = TempOut("one_rank_group.json");
  std::ofstream(in) << trace.dump();
  ConvertOptions options;
  options.rank = 1;
  auto summary = ConvertFile(in, in + ".et", options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  auto g = LoadGraph(in + ".et");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(summary->skipped_by_reason[kOneRankGroupReason], 6);
  int comp = 0, colls = 0;
  for (size_t i = 0; i < g->size(); ++i) {
    const Node& n = g->node(i);
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE) {
      ++colls;
      EXPECT_EQ(GetString(n, attr::kPgName), "0");
    } else if (GetString(n, attr::kPgName) == "1") {
      ++comp;
      EXPECT_EQ(n.type(), ChakraProtoMsg::COMP_NODE);
      EXPECT_EQ(GetInt(n, attr::kCommType), ChakraProtoMsg::BROADCAST);
      EXPECT_GT(GetInt(n, attr::kCommSize).value_or(0), 0);
    }
  }
  EXPECT_EQ(colls, 15);
  EXPECT_EQ(comp, 6);
  std::vector<std::string> v = AstraSimViolations(*g);
  EXPECT_TRUE(v.empty()) << v.front();
}

}  // namespace
}  // namespace et::convert
