// Chakra's own linked format ("ET plus", the output of chakra_trace_link): ids
// renumbered out of start order, GPU nodes with their stream at the top level
// or in a Kineto `args` object, null fields, pretty-printed JSON. Uses
// tests/data/generated/et_plus_small.json (make_et_plus.py says how it was
// made).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "converter/kineto/linked_order.h"
#include "model/graph_validation.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

constexpr char kEtPlus[] = "generated/et_plus_small.json";

bool IsGpu(const Node& n) { return GetBool(n, attr::kIsGpuOp).value_or(false); }

absl::StatusOr<Converted> ConvertEtPlus(Granularity granularity) {
  ConvertOptions options;
  options.granularity = granularity;
  return ConvertAndLoad(kEtPlus, options);
}

TEST(EtPlusTest, ConvertsWithoutAFalseCycleAndDepsFollowStartTimes) {
  for (Granularity g : {Granularity::kAll, Granularity::kSimulation}) {
    auto c = ConvertEtPlus(g);
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_TRUE(ValidateGraph(c->graph).ok());
    // Ids are start order again: no dependency reaches forward in time.
    for (NodeIndex i = 0; i < c->graph.size(); ++i) {
      const Node& n = c->graph.node(i);
      for (const auto deps : {c->graph.ctrl_deps(i), c->graph.data_deps(i)}) {
        for (NodeIndex d : deps) {
          EXPECT_LE(c->graph.node(d).start_time_micros(), n.start_time_micros())
              << c->graph.node(d).name() << " -> " << n.name();
          EXPECT_LT(c->graph.node(d).id(), n.id());
        }
      }
    }
  }
}

TEST(EtPlusTest, KeepsEveryNodeWithItsOldIdAndParent) {
  auto c = ConvertEtPlus(Granularity::kAll);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->graph.size(), 21u);
  std::map<int64_t, NodeIndex> by_source;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    auto source = GetInt(c->graph.node(i), "source_id");
    ASSERT_TRUE(source.has_value()) << c->graph.node(i).name();
    by_source[*source] = i;
  }
  EXPECT_EQ(by_source.size(), 21u);
  // In the file aten::t is node 0 and its parent aten::linear node 3.
  const Node& t = c->graph.node(by_source.at(0));
  const Node& linear = c->graph.node(by_source.at(3));
  ASSERT_EQ(t.name(), "aten::t");
  ASSERT_EQ(linear.name(), "aten::linear");
  EXPECT_EQ(GetInt(t, attr::kParentId), static_cast<int64_t>(linear.id()));
  EXPECT_LT(linear.id(), t.id());
}

TEST(EtPlusTest, GpuNodesHaveTheirStreamAndTypedKinetoArgs) {
  auto c = ConvertEtPlus(Granularity::kAll);
  ASSERT_TRUE(c.ok()) << c.status();
  int gpu = 0, with_args = 0;
  std::vector<NodeIndex> stream7;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    const Node& n = c->graph.node(i);
    for (const auto& a : n.attr()) EXPECT_NE(a.name(), "args") << n.name();
    if (!IsGpu(n)) continue;
    ++gpu;
    EXPECT_EQ(GetInt(n, attr::kStream), 7) << n.name();
    stream7.push_back(i);
    if (GetInt(n, "correlation").has_value()) {  // the `args` half
      ++with_args;
      EXPECT_EQ(GetInt(n, attr::kDevice), 0) << n.name();
      EXPECT_EQ(GetIntList(n.attr(), attr::kGrid),
                (std::vector<int64_t>{132, 1, 1}));
    }
  }
  EXPECT_EQ(gpu, 6);
  EXPECT_EQ(with_args, 3);
  // One stream runs its ops in order: each depends on the one before it.
  for (size_t k = 1; k < stream7.size(); ++k) {
    const auto deps = c->graph.ctrl_deps(stream7[k]);
    EXPECT_NE(std::find(deps.begin(), deps.end(), stream7[k - 1]), deps.end())
        << c->graph.node(stream7[k]).name();
  }
}

TEST(EtPlusTest, SyncDepOnTheKernelSurvivesAndIoInfoIsOneLine) {
  auto c = ConvertEtPlus(Granularity::kAll);
  ASSERT_TRUE(c.ok()) << c.status();
  bool waits = false;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    const Node& n = c->graph.node(i);
    for (const std::string* text :
         {&n.inputs().values(), &n.inputs().shapes(), &n.inputs().types(),
          &n.outputs().values(), &n.outputs().shapes(), &n.outputs().types()}) {
      EXPECT_EQ(text->find('\n'), std::string::npos)
          << n.name() << ": " << *text;
    }
    if (n.name() != "aten::_local_scalar_dense") continue;
    EXPECT_EQ(n.inputs().values(), "[[32,32,0,1,4,\"cuda:0\"]]");
    for (NodeIndex d : c->graph.ctrl_deps(i)) {
      waits |= c->graph.node(d).name() == "reduce_kernel<mean>";
    }
  }
  EXPECT_TRUE(waits);
}

TEST(LinkedOrderTest, DepsOnLaterOrAbsentOpsAreDroppedAndCounted) {
  // Old ids 5, 3, 9 start at 10, 20, 30 us: 3 is the second op, not the
  // first. Op 9 waits for 3 (earlier: kept); op 5 "waits" for 9, which starts
  // later (a linker's mix-up: dropped), and for 42, which is not there.
  StringPool pool;
  std::vector<HostOp> ops(3);
  ops[0].id = 5;
  ops[0].ts_us = 10;
  ops[0].sync_deps = {9, 42};
  ops[1].id = 3;
  ops[1].ts_us = 20;
  ops[2].id = 9;
  ops[2].ts_us = 30;
  ops[2].inter_thread_deps = {3};
  const LinkedOrderStats stats = OrderLinkedTraceByStart(&ops, &pool);
  EXPECT_EQ(stats.deps_against_time, 1);
  EXPECT_EQ(stats.deps_to_absent, 1);
  EXPECT_EQ(stats.moved, 2);
  EXPECT_EQ(ops[0].id, 1u);
  EXPECT_EQ(ops[1].id, 2u);
  EXPECT_EQ(ops[2].id, 3u);
  EXPECT_TRUE(ops[0].sync_deps.empty());
  EXPECT_EQ(ops[2].inter_thread_deps, (std::vector<uint64_t>{2}));
  // A host trace without `ts` keeps its ids.
  std::vector<HostOp> plain(2);
  plain[0].id = 7;
  plain[1].id = 4;
  EXPECT_EQ(OrderLinkedTraceByStart(&plain, &pool).moved, 0);
  EXPECT_EQ(plain[0].id, 7u);
}

}  // namespace
}  // namespace et::convert
