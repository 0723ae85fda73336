// Unit tests of DepGraph (model/dep_graph.h): CSR rows from id lists, dangling
// deps counted, and cycle finding (FindCycles, TopologicalOrder's error) on
// small hand-made graphs, one rule per test.
#include "model/dep_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace et {
namespace {

using Ids = std::vector<uint64_t>;

// One node of a hand-made graph: its id and its deps (by id).
struct N {
  uint64_t id;
  Ids data;
  Ids ctrl = {};
};

DepGraph Make(const std::vector<N>& nodes) {
  Ids ids;
  CsrRows<uint64_t> data, ctrl;
  for (const N& n : nodes) {
    ids.push_back(n.id);
    data.targets.insert(data.targets.end(), n.data.begin(), n.data.end());
    data.EndRow();
    ctrl.targets.insert(ctrl.targets.end(), n.ctrl.begin(), n.ctrl.end());
    ctrl.EndRow();
  }
  return DepGraph::Build(std::move(ids), data, ctrl);
}

// A cycle rotated to start at its smallest id, so tests need not depend on
// where the walk entered it.
Ids Rotated(Ids cycle) {
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()),
              cycle.end());
  return cycle;
}

TEST(DepGraphTest, RowsAndUsersFollowTheIds) {
  DepGraph g = Make({{10, {}}, {20, {10}}, {30, {10}, {20}}});
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.Find(20), 1u);
  EXPECT_FALSE(g.Find(25).has_value());
  ASSERT_EQ(g.data_deps(2).size(), 1u);
  EXPECT_EQ(g.data_deps(2)[0], 0u);
  ASSERT_EQ(g.ctrl_deps(2).size(), 1u);
  EXPECT_EQ(g.ctrl_deps(2)[0], 1u);
  ASSERT_EQ(g.data_users(0).size(), 2u);
  EXPECT_EQ(g.data_users(0)[0], 1u);
  EXPECT_EQ(g.data_users(0)[1], 2u);
  EXPECT_EQ(g.ctrl_users(1).size(), 1u);
}

TEST(DepGraphTest, DepsOnAbsentIdsAreCountedAndLeftOut) {
  DepGraph g = Make({{1, {99}}, {2, {1}, {98, 97}}});
  EXPECT_EQ(g.missing_data_deps(), 1);
  EXPECT_EQ(g.missing_ctrl_deps(), 2);
  EXPECT_EQ(g.missing_dep_count(), 3);
  EXPECT_TRUE(g.data_deps(0).empty());
  EXPECT_TRUE(g.ctrl_deps(1).empty());
}

TEST(DepGraphTest, AcyclicGraphHasNoCycles) {
  // A diamond: 1 -> {2, 3} -> 4, across data and ctrl deps.
  DepGraph g = Make({{1, {}}, {2, {1}}, {3, {}, {1}}, {4, {2}, {3}}});
  EXPECT_TRUE(g.FindCycles(DepSelection::kAll, 10).empty());
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(*order, (std::vector<NodeIndex>{0, 1, 2, 3}));
}

TEST(DepGraphTest, KeyedOrderTakesTheEarliestReadyKeyAndKeepsDeps) {
  // 1 -> 2 -> 3 on one chain, 4 and 5 free. Keys put 5 first and 4 between 2
  // and 3; 3 still follows 2 whatever its key.
  DepGraph g = Make({{1, {}}, {2, {1}}, {3, {2}}, {4, {}}, {5, {}}});
  const std::vector<int64_t> key = {10, 20, 0, 25, 5};
  auto order = g.TopologicalOrder(DepSelection::kAll, key);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(*order, (std::vector<NodeIndex>{4, 0, 1, 2, 3}));
  // Equal keys fall back to ascending id.
  auto ties = g.TopologicalOrder(DepSelection::kAll, {0, 0, 0, 0, 0});
  ASSERT_TRUE(ties.ok());
  EXPECT_EQ(*ties, (std::vector<NodeIndex>{0, 1, 2, 3, 4}));
}

TEST(DepGraphTest, CycleIsFoundAndNamedInDependencyOrder) {
  // 2 depends on 4, 3 on 2, 4 on 3: the cycle 2 -> 3 -> 4 (each depends on the
  // one before it). 1 and 5 are outside it; 5 depends on the cycle.
  DepGraph g = Make({{1, {}}, {2, {1, 4}}, {3, {2}}, {4, {3}}, {5, {4}}});
  auto cycles = g.FindCycles(DepSelection::kAll, 10);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(Rotated(cycles[0]), (Ids{2, 3, 4}));
  // Node 5 only waits on the cycle: it is not part of the named cycle.
  EXPECT_EQ(std::count(cycles[0].begin(), cycles[0].end(), 5u), 0);
}

TEST(DepGraphTest, TopologicalOrderNamesTheCycle) {
  DepGraph g = Make({{1, {}}, {2, {1, 4}}, {3, {2}}, {4, {3}}});
  auto order = g.TopologicalOrder();
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(order.status().message());
  EXPECT_NE(message.find("dependency cycle through nodes"), std::string::npos)
      << message;
  EXPECT_NE(message.find("3 nodes not orderable"), std::string::npos)
      << message;
  for (const char* id : {"2", "3", "4"}) {
    EXPECT_NE(message.find(id), std::string::npos) << message;
  }
}

TEST(DepGraphTest, SelfLoopIsACycleOfOne) {
  DepGraph g = Make({{1, {}}, {7, {1, 7}}});
  auto cycles = g.FindCycles(DepSelection::kAll, 10);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(cycles[0], (Ids{7}));
  EXPECT_FALSE(g.TopologicalOrder().ok());
}

TEST(DepGraphTest, SelectionDecidesWhichDepsCloseACycle) {
  // 1 -> 2 by data, 2 -> 1 by ctrl: cyclic only when both kinds are followed.
  DepGraph g = Make({{1, {}, {2}}, {2, {1}}});
  EXPECT_EQ(g.FindCycles(DepSelection::kAll, 10).size(), 1u);
  EXPECT_TRUE(g.FindCycles(DepSelection::kDataOnly, 10).empty());
  EXPECT_TRUE(g.FindCycles(DepSelection::kCtrlOnly, 10).empty());
  EXPECT_TRUE(g.TopologicalOrder(DepSelection::kDataOnly).ok());
  EXPECT_FALSE(g.TopologicalOrder(DepSelection::kAll).ok());
}

TEST(DepGraphTest, DistinctCyclesUpToTheLimit) {
  // Two disjoint two-node cycles {1, 2} and {3, 4}, and a self-loop on 5.
  DepGraph g = Make({{1, {2}}, {2, {1}}, {3, {4}}, {4, {3}}, {5, {5}}});
  auto all = g.FindCycles(DepSelection::kAll, 10);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(Rotated(all[0]), (Ids{1, 2}));
  EXPECT_EQ(Rotated(all[1]), (Ids{3, 4}));
  EXPECT_EQ(all[2], (Ids{5}));
  EXPECT_EQ(g.FindCycles(DepSelection::kAll, 2).size(), 2u);
  EXPECT_EQ(g.FindCycles(DepSelection::kAll, 0).size(), 0u);
}

TEST(DepGraphTest, WalkIntoAnEarlierCycleNamesNoNewOne) {
  // 1 <-> 2 is a cycle; 3 depends on 1, so Kahn's algorithm cannot order it
  // either, but walking from 3 reaches a cycle already named.
  DepGraph g = Make({{1, {2}}, {2, {1}}, {3, {1}}});
  auto cycles = g.FindCycles(DepSelection::kAll, 10);
  ASSERT_EQ(cycles.size(), 1u);
  EXPECT_EQ(Rotated(cycles[0]), (Ids{1, 2}));
}

}  // namespace
}  // namespace et
