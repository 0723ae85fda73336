// Communication ops that the bundled real traces do not contain: point-to-point
// with peer ranks and every collective type, in the flat (1.0.1, c10d calls)
// and nested (1.1.0, record_param_comms with attributes) layouts PyTorch writes
// them in.
#include <fstream>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

// A 1.0.1 node calling `name` with a tensor list argument and `extra`
// positional values.
std::string FlatCall(int id, const std::string& name, int tensor, int64_t numel,
                     const std::string& extra_values,
                     const std::string& extra_types) {
  return "{\"name\": \"" + name + "\", \"id\": " + std::to_string(id) +
         ", \"rf_id\": " + std::to_string(id) +
         ", \"parent\": 2, \"fw_parent\": 0, \"seq_id\": -1, \"scope\": 0, "
         "\"tid\": 1, "
         "\"fw_tid\": 0, \"op_schema\": \"\", \"inputs\": [[[" +
         std::to_string(tensor) + ", " + std::to_string(tensor + 1) + ", 0, " +
         std::to_string(numel) + ", 4, \"cuda:0\"]], \"<Object>\"" +
         extra_values + "], \"input_shapes\": [[[" + std::to_string(numel) +
         "]], []], \"input_types\": [\"GenericList[Tensor(float)]\", "
         "\"Object\"" +
         extra_types +
         "], \"outputs\": [], \"output_shapes\": [], \"output_types\": []}";
}

std::string FlatTrace(const std::vector<std::string>& calls) {
  std::string t =
      "{\"schema\": \"1.0.1\", \"pid\": 1, \"nodes\": [{\"name\": "
      "\"[pytorch|profiler|execution_graph|thread]\", \"id\": 2, \"parent\": "
      "0, \"tid\": 1}";
  for (const auto& c : calls) t += ", " + c;
  return t + "]}";
}

absl::StatusOr<Converted> ConvertText(const std::string& name,
                                      const std::string& text) {
  const std::string path = TempOut(name);
  std::ofstream(path) << text;
  auto summary = ConvertFile(path, path + ".et", {});
  if (!summary.ok()) return summary.status();
  auto graph = LoadGraph(path + ".et");
  if (!graph.ok()) return graph.status();
  return Converted{*summary, std::move(*graph)};
}

const Node& ById(const Graph& g, uint64_t id) { return g.node(*g.Find(id)); }

TEST(CommOpsTest, SendAndRecvCarryTheirPeerRankAndTag) {
  auto c = ConvertText(
      "p2p.json",
      FlatTrace({
          FlatCall(10, "c10d::send", 100, 256, ", 3, 7", ", \"Int\", \"Int\""),
          FlatCall(20, "c10d::recv_", 200, 128, ", 5, 9", ", \"Int\", \"Int\""),
      }));
  ASSERT_TRUE(c.ok()) << c.status();
  const Node& send = ById(c->graph, 10);
  EXPECT_EQ(send.type(), ChakraProtoMsg::COMM_SEND_NODE);
  EXPECT_EQ(GetInt(send, attr::kCommDst), 3);
  EXPECT_EQ(GetInt(send, attr::kCommTag), 7);
  EXPECT_EQ(GetInt(send, attr::kCommSize), 1024);
  const Node& recv = ById(c->graph, 20);
  EXPECT_EQ(recv.type(), ChakraProtoMsg::COMM_RECV_NODE);
  EXPECT_EQ(GetInt(recv, attr::kCommSrc), 5);
  EXPECT_EQ(GetInt(recv, attr::kCommTag), 9);
  EXPECT_EQ(GetInt(recv, attr::kCommSize), 512);
}

TEST(CommOpsTest, EveryCollectiveTypeOfC10dCalls) {
  auto c = ConvertText(
      "colls.json",
      FlatTrace({
          FlatCall(10, "c10d::allreduce_", 100, 10, ", \"<Object>\", -1",
                   ", \"Object\", \"Int\""),
          FlatCall(12, "c10d::reduce_", 110, 10, ", \"<Object>\", 2, 0, -1",
                   ", \"Object\", \"Int\", \"Int\", \"Int\""),
          FlatCall(14, "c10d::broadcast_", 120, 10, ", 1, 0, -1",
                   ", \"Int\", \"Int\", \"Int\""),
          FlatCall(16, "c10d::barrier", 130, 1, ", [], -1",
                   ", \"GenericList[]\", \"Int\""),
          FlatCall(18, "c10d::gather_", 140, 10, ", 0, -1",
                   ", \"Int\", \"Int\""),
          FlatCall(20, "c10d::scatter_", 150, 10, ", 0, false, -1",
                   ", \"Int\", \"Bool\", \"Int\""),
          FlatCall(22, "c10d::alltoall_base_", 160, 10, ", [], [], -1",
                   ", \"GenericList[]\", \"GenericList[]\", \"Int\""),
          FlatCall(24, "c10d::_reduce_scatter_base_", 170, 10,
                   ", \"<Object>\", -1", ", \"Object\", \"Int\""),
          FlatCall(26, "c10d::_allgather_base_", 180, 10, ", -1", ", \"Int\""),
      }));
  ASSERT_TRUE(c.ok()) << c.status();
  const std::vector<std::pair<uint64_t, ChakraProtoMsg::CollectiveCommType>>
      expected = {
          {10, ChakraProtoMsg::ALL_REDUCE},
          {12, ChakraProtoMsg::REDUCE},
          {14, ChakraProtoMsg::BROADCAST},
          {16, ChakraProtoMsg::BARRIER},
          {18, ChakraProtoMsg::GATHER},
          {20, ChakraProtoMsg::SCATTER},
          {22, ChakraProtoMsg::ALL_TO_ALL},
          {24, ChakraProtoMsg::REDUCE_SCATTER},
          {26, ChakraProtoMsg::ALL_GATHER},
      };
  for (const auto& [id, type] : expected) {
    const Node& n = ById(c->graph, id);
    EXPECT_EQ(n.type(), ChakraProtoMsg::COMM_COLL_NODE) << n.name();
    EXPECT_EQ(GetInt(n, attr::kCommType), type) << n.name();
  }
  EXPECT_EQ(GetInt(ById(c->graph, 14), attr::kCommRoot),
            1);  // broadcast_ root_rank
  EXPECT_EQ(GetInt(ById(c->graph, 12), attr::kCommRoot),
            2);  // reduce_ root_rank
  EXPECT_EQ(c->summary.collectives_by_type.size(), 9u);
}

TEST(CommOpsTest, RecordParamCommsAttributesGiveSizeDtypeAndGroup) {
  // 1.1.0 layout: a standalone record_param_comms (no c10d call around it),
  // bf16.
  const std::string trace =
      R"({"schema": "1.1.0-chakra.0.0.4", "pid": 1, "nodes": [
    {"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1,
     "inputs": {"values": [], "shapes": [], "types": []},
     "outputs": {"values": [], "shapes": [], "types": []}, "attrs": []},
    {"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 0,
     "inputs": {"values": [], "shapes": [], "types": []},
     "outputs": {"values": [], "shapes": [], "types": []}, "attrs": []},
    {"id": 3, "name": "record_param_comms", "ctrl_deps": 2,
     "inputs": {"values": [[[10, 11, 0, 4096, 2, "cuda:0"]], 7, ["3", "tp_group"], 0,
                           "reduce_scatter_tensor_coalesced", [], [], 0, 1, 4],
                "shapes": [[[4096]], [], [[], []], [], [], [], [], [], [], []],
                "types": ["GenericList[Tensor(c10::BFloat16)]", "Int", "Tuple[String,String]",
                          "Int", "String", "GenericList[]", "GenericList[]", "Int", "Int", "Int"]},
     "outputs": {"values": [], "shapes": [], "types": []},
     "attrs": [{"name": "tid", "type": "uint64", "value": 1},
               {"name": "collective_name", "type": "string", "value": "reduce_scatter_tensor_coalesced"},
               {"name": "dtype", "type": "string", "value": "BFloat16"},
               {"name": "in_msg_nelems", "type": "uint64", "value": 4096},
               {"name": "pg_name", "type": "string", "value": "3"}]}]})";
  auto c = ConvertText("rpc.json", trace);
  ASSERT_TRUE(c.ok()) << c.status();
  const Node& n = ById(c->graph, 3);
  EXPECT_EQ(n.type(), ChakraProtoMsg::COMM_COLL_NODE);
  EXPECT_EQ(GetInt(n, attr::kCommType), ChakraProtoMsg::REDUCE_SCATTER);
  EXPECT_EQ(GetInt(n, attr::kCommSize), 8192);
  EXPECT_EQ(GetString(n, attr::kDtype), "bfloat16");
  EXPECT_EQ(GetString(n, attr::kPgName), "3");
  EXPECT_EQ(GetInt(n, attr::kCommSeq), 7);
}

}  // namespace
}  // namespace et::convert
