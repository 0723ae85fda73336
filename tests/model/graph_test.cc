// Tests of the in-memory graph and its validation, on built graphs and on every
// .et file in tests/data (Chakra's converters of 2023 and today, its text
// converter, ASTRA-sim).
#include "model/graph.h"

#include <dirent.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "model/graph_validation.h"
#include "proto/et_reader.h"
#include "proto/et_writer.h"

namespace et {
namespace {

ChakraProtoMsg::Node MakeNode(uint64_t id, std::vector<uint64_t> data,
                              std::vector<uint64_t> ctrl = {}) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  for (uint64_t d : data) n.add_data_deps(d);
  for (uint64_t c : ctrl) n.add_ctrl_deps(c);
  return n;
}

TEST(GraphTest, TopologicalOrderOfAMillionNodeChainDoesNotRecurse) {
  std::vector<ChakraProtoMsg::Node> nodes;
  const uint64_t n = 1'000'000;
  nodes.reserve(n);
  for (uint64_t i = n; i >= 1; --i) {  // reverse order: Build must sort
    nodes.push_back(i > 1 ? MakeNode(i, {i - 1}) : MakeNode(i, {}));
  }
  Graph g = Graph::Build({}, std::move(nodes));
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status();
  ASSERT_EQ(order->size(), n);
  EXPECT_EQ(g.node(order->front()).id(), 1u);
  EXPECT_EQ(g.node(order->back()).id(), n);
}

TEST(GraphTest, ValidationReportsDuplicatesMissingDepsAndCycles) {
  std::vector<ChakraProtoMsg::Node> nodes = {
      MakeNode(1, {}),      MakeNode(2, {1, 99}),  // 99 is missing
      MakeNode(3, {5}),     MakeNode(4, {3}),
      MakeNode(5, {4}),                            // 3 -> 4 -> 5 -> 3
      MakeNode(6, {}, {7}), MakeNode(7, {}, {6}),  // a ctrl-only cycle
      MakeNode(2, {}),                             // duplicate id
  };
  Graph g = Graph::Build({}, nodes);
  ValidationReport r = ValidateGraph(g);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.duplicate_ids, std::vector<uint64_t>{2});
  EXPECT_EQ(r.missing_data_deps, 1);
  ASSERT_EQ(r.missing_deps.size(), 1u);
  EXPECT_EQ(r.missing_deps[0].node_id, 2u);
  EXPECT_EQ(r.missing_deps[0].dep_id, 99u);
  ASSERT_EQ(r.data_cycles.size(), 1u);
  std::vector<uint64_t> cycle = r.data_cycles[0];
  std::sort(cycle.begin(), cycle.end());
  EXPECT_EQ(cycle, (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_EQ(r.all_dep_cycles.size(), 2u);
  auto order = g.TopologicalOrder();
  ASSERT_FALSE(order.ok());
  EXPECT_TRUE(absl::StrContains(order.status().message(), "cycle"));
  EXPECT_TRUE(g.TopologicalOrder(DepSelection::kCtrlOnly)
                  .status()
                  .message()
                  .find("6") != std::string::npos);
}

std::vector<std::string> EtFilesUnder(const std::string& dir) {
  std::vector<std::string> out, stack = {dir};
  while (!stack.empty()) {
    std::string d = stack.back();
    stack.pop_back();
    DIR* h = opendir(d.c_str());
    if (h == nullptr) continue;
    while (dirent* e = readdir(h)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = d + "/" + name;
      if (e->d_type == DT_DIR) {
        // tests/data/bad holds deliberately damaged files.
        if (name != "bad") stack.push_back(path);
      } else if (absl::EndsWith(name, ".et")) {
        out.push_back(path);
      }
    }
    closedir(h);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(GraphTest, LoadsEveryEtFileOfTheReferenceTools) {
  std::vector<std::string> files = EtFilesUnder(ET_TEST_DATA);
  ASSERT_GE(files.size(),
            40u);  // 36 ASTRA-sim microbenchmarks + 4 Chakra files
  for (const std::string& path : files) {
    auto g = LoadGraph(path);
    ASSERT_TRUE(g.ok()) << path << ": " << g.status();
    EXPECT_GT(g->size(), 0u) << path;
    ValidationReport r = ValidateGraph(*g);
    EXPECT_TRUE(r.duplicate_ids.empty()) << path;
    // Data deps are acyclic in every file (the 2023 feeder file's ctrl deps are
    // not).
    EXPECT_TRUE(r.data_cycles.empty()) << path;
    EXPECT_TRUE(g->TopologicalOrder(DepSelection::kDataOnly).ok()) << path;
  }
}

TEST(GraphTest, The2023FeederTraceHasDanglingDepsAndCtrlCyclesAndStillLoads) {
  auto g =
      LoadGraph(std::string(ET_TEST_DATA) + "/chakra/feeder_tests_chakra.0.et");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->size(), 3664u);
  ValidationReport r = ValidateGraph(*g);
  EXPECT_EQ(r.missing_data_deps + r.missing_ctrl_deps, 1277);
  EXPECT_FALSE(r.all_dep_cycles.empty());
  EXPECT_TRUE(r.data_cycles.empty());
  EXPECT_FALSE(g->TopologicalOrder().ok());
}

}  // namespace
}  // namespace et

namespace et {
namespace {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Our writer reproduces files of Chakra's converters byte for byte: same
// framing, same field order, nothing lost or added on the way through our
// reader.
TEST(GraphTest, ReferenceFilesRoundTripByteForByte) {
  for (const char* rel :
       {"chakra/reference_converter_output.allgather_2rank.et",
        "chakra/mlp_mp.0.et", "chakra/feeder_tests_chakra.0.et",
        "astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce.0.et"}) {
    const std::string in = std::string(ET_TEST_DATA) + "/" + rel;
    auto reader = EtReader::Open(in);
    ASSERT_TRUE(reader.ok()) << reader.status();
    std::vector<ChakraProtoMsg::Node> nodes;  // in file order, as written
    ChakraProtoMsg::Node node;
    while (true) {
      auto more = (*reader)->Next(&node);
      ASSERT_TRUE(more.ok()) << more.status();
      if (!*more) break;
      nodes.push_back(node);
    }
    // The framing is Chakra's, byte for byte, when no node count is
    // announced (WriteEtFile announces one: attr::kNodeCount).
    const std::string out = ::testing::TempDir() + "/roundtrip.et";
    {
      auto writer = EtWriter::Open(out);
      ASSERT_TRUE(writer.ok()) << writer.status();
      ASSERT_TRUE(
          (*writer)->WriteMetadata((*reader)->metadata(), std::nullopt).ok());
      for (const auto& n : nodes) ASSERT_TRUE((*writer)->WriteNode(n).ok());
      ASSERT_TRUE((*writer)->Close().ok());
    }
    EXPECT_EQ(ReadBytes(out), ReadBytes(in)) << rel;
  }
}

}  // namespace
}  // namespace et
