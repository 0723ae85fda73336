// Hand-computed alpha-beta costs for each collective formula of the spec.
#include "simulator/comm/collective_cost_model.h"

#include "gtest/gtest.h"

namespace et::sim {
namespace {

using ChakraProtoMsg::ALL_GATHER;
using ChakraProtoMsg::ALL_REDUCE;
using ChakraProtoMsg::ALL_TO_ALL;
using ChakraProtoMsg::BROADCAST;
using ChakraProtoMsg::REDUCE_SCATTER;

// alpha = 1000 ns, 10 B/ns (beta = 0.1 ns/B), p = 8, S = 8000 B.
const LinkLevel kLink{1000, 10};

TEST(CollectiveCostModelTest, Ring) {
  const auto ring = CollectiveAlgorithm::kRing;
  // 2*7*1000 + 2*7/8*8000*0.1 = 14000 + 1400
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(ALL_REDUCE, ring, 8, 8000, kLink), 15400);
  // 7*1000 + 7/8*8000*0.1 = 7000 + 700
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(REDUCE_SCATTER, ring, 8, 8000, kLink),
                   7700);
  // all-gather of a 1000 B shard: full buffer 8000: 7000 + 7/8*8000*0.1
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(ALL_GATHER, ring, 8, 1000, kLink), 7700);
  // pairwise all-to-all: 7*(1000 + 8000*0.1/8) = 7700
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(ALL_TO_ALL, ring, 8, 8000, kLink), 7700);
}

TEST(CollectiveCostModelTest, TreeAndRecursive) {
  const auto tree = CollectiveAlgorithm::kTree;
  // Rabenseifner: 2*3*1000 + 2*7/8*8000*0.1 = 6000 + 1400
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(ALL_REDUCE, tree, 8, 8000, kLink), 7400);
  // recursive halving: 3000 + 700
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(REDUCE_SCATTER, tree, 8, 8000, kLink),
                   3700);
  // Bruck: 3*1000 + 8000/2*3*0.1 = 3000 + 1200
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(ALL_TO_ALL, tree, 8, 8000, kLink), 4200);
  // binomial broadcast: ceil(log2 8)*(1000 + 800) = 5400
  EXPECT_DOUBLE_EQ(FlatCollectiveNs(BROADCAST, tree, 8, 8000, kLink), 5400);
}

TEST(CollectiveCostModelTest,
     BroadcastPicksTheCheaperOfBinomialAndScatterAllgather) {
  // Large message: scatter+allgather (3+7)*1000 + 2*7/8*800000*0.1 = 10000 +
  // 140000 beats binomial 3*(1000 + 80000) = 243000.
  EXPECT_DOUBLE_EQ(
      FlatCollectiveNs(BROADCAST, CollectiveAlgorithm::kAuto, 8, 800000, kLink),
      150000);
}

TEST(CollectiveCostModelTest, HierarchicalAllReduce) {
  // p1 = 8 at (500 ns, 100 B/ns), p2 = 4 at (5000 ns, 10 B/ns), S = 3.2e6 B:
  // 2*7*(500 + 3.2e6/(8*100)) + 2*3*(5000 + 3.2e6/(32*10))
  // = 14*(500 + 4000) + 6*(5000 + 10000) = 63000 + 90000
  EXPECT_DOUBLE_EQ(
      HierarchicalCollectiveNs(ALL_REDUCE, 8, 4, 3.2e6, {500, 100}, {5000, 10}),
      153000);
}

TEST(CollectiveCostModelTest, TopologyDecomposesAcrossNodes) {
  Topology t;
  t.dims.push_back(
      {LinkKind::kFullyConnected, 8, 100, 500});  // 100 GB/s = 100 B/ns
  t.dims.push_back({LinkKind::kFullyConnected, 4, 10, 5000});
  // Inside a node: flat ring over 8 (hops 1): 2*7*500 + 2*7/8*3.2e6/100
  EXPECT_DOUBLE_EQ(CollectiveCostNs(ALL_REDUCE, 8, 3.2e6, t,
                                    CollectiveAlgorithm::kAuto, false),
                   7000 + 56000);
  // 32 ranks: the hierarchical formula above.
  EXPECT_DOUBLE_EQ(CollectiveCostNs(ALL_REDUCE, 32, 3.2e6, t,
                                    CollectiveAlgorithm::kAuto, false),
                   153000);
  EXPECT_DOUBLE_EQ(CollectiveCostNs(ALL_REDUCE, 1, 3.2e6, t,
                                    CollectiveAlgorithm::kAuto, false),
                   0);
}

TEST(CollectiveCostModelTest, NcclEfficiencyGrowsWithSize) {
  EXPECT_DOUBLE_EQ(NcclEfficiency(16.0 * 1024 * 1024), 0.45);
  EXPECT_DOUBLE_EQ(NcclEfficiency(4.0 * 1024 * 1024 * 1024), 0.8);
  EXPECT_LT(NcclEfficiency(1 << 20), NcclEfficiency(1 << 26));
  EXPECT_GT(NcclEfficiency(1 << 20), 0.2);
}

}  // namespace
}  // namespace et::sim
