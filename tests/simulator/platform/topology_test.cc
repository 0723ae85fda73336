// Topology presets, files (ours and ASTRA-sim's) and the errors bad configs
// must give.
#include "simulator/platform/topology.h"

#include "gtest/gtest.h"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

TEST(TopologyTest, PresetsFitTheWorld) {
  for (const char* name : {"DGX-A100", "hgx-h100", "DGX-V100"}) {
    auto t = LoadTopology(name);
    ASSERT_TRUE(t.ok()) << name;
    auto fit = FitTopology(*t, 64);
    ASSERT_TRUE(fit.ok()) << fit.status();
    EXPECT_EQ(fit->dims[0].npus, 8);
    EXPECT_EQ(fit->dims[1].npus, 8);
  }
}

TEST(TopologyTest, ReadsAstraNetworkYaml) {
  auto t =
      LoadTopology(std::string(ET_TEST_DATA) +
                   "/astra-sim/configs/"
                   "examples__network__analytical__HGX-H100-validated.yml");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->dims.size(), 1u);
  EXPECT_EQ(t->dims[0].kind, LinkKind::kSwitch);
  EXPECT_EQ(t->dims[0].npus, 8);
  EXPECT_DOUBLE_EQ(t->dims[0].latency_ns, 936.25);
  EXPECT_TRUE(t->astra_units);
  EXPECT_DOUBLE_EQ(t->BytesPerNs(0), 400.0 * (1 << 30) / 1e9);
}

TEST(TopologyTest, UnknownTopologyIsAClearError) {
  auto t = LoadTopology("DGX-Z9000");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message()).find("unknown topology"),
            std::string::npos);
  auto kind = ParseTopology(
      "dims: [{kind: Torus, bandwidth_gbps: 1, latency_ns: 1}]", "t.yml");
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(std::string(kind.status().message())
                .find("unknown topology kind 'Torus'"),
            std::string::npos);
}

TEST(TopologyTest, ZeroBandwidthIsAClearError) {
  auto t = ParseTopology(
      "dims: [{kind: Switch, npus: 8, bandwidth_gbps: 0, latency_ns: 5}]",
      "zero.yml");
  ASSERT_TRUE(t.ok());
  auto fit = FitTopology(*t, 8);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(
      std::string(fit.status().message()).find("bandwidth must be positive"),
      std::string::npos);
  // ASTRA-sim's own template with 'tbd' placeholders.
  auto tbd =
      LoadTopology(std::string(ET_TEST_DATA) +
                   "/astra-sim/configs/inputs__network__dgx_v100_8gpu.yml");
  ASSERT_FALSE(tbd.ok());
  EXPECT_NE(std::string(tbd.status().message())
                .find("bandwidth must be a number, got 'tbd'"),
            std::string::npos);
}

// Numbers that would be undefined to cast (1e30 npus), products that would
// overflow, and nesting deep enough to exhaust yaml-cpp's recursion: each a
// clear error naming the file.
TEST(TopologyTest, HostileNumbersAndNestingAreClearErrors) {
  auto huge = ParseTopology(
      "dims: [{kind: Switch, npus: 1e30, bandwidth_gbps: 1, latency_ns: 5}]",
      "huge.yml");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("huge.yml: npus must be a whole"),
            std::string::npos)
      << huge.status();
  auto product = ParseTopology(
      "dims: [{npus: 1048576, bandwidth_gbps: 1, latency_ns: 1},"
      " {npus: 1048576, bandwidth_gbps: 1, latency_ns: 1},"
      " {npus: 1048576, bandwidth_gbps: 1, latency_ns: 1},"
      " {npus: 1048576, bandwidth_gbps: 1, latency_ns: 1}]",
      "product.yml");
  ASSERT_TRUE(product.ok()) << product.status();
  auto fit = FitTopology(*product, 8);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.status().message().find("more than"), std::string::npos)
      << fit.status();
  auto deep = ParseTopology(std::string(100000, '[') + std::string(100000, ']'),
                            "deep.yml");
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.status().message().find("deep.yml: nested deeper"),
            std::string::npos)
      << deep.status();
  auto nan = ParseTopology(
      "dims: [{npus: 8, bandwidth_gbps: .inf, latency_ns: .nan}]", "nan.yml");
  ASSERT_TRUE(nan.ok()) << nan.status();
  EXPECT_FALSE(FitTopology(*nan, 8).ok());
}

TEST(TopologyTest, WorldNotDivisibleByNodeSize) {
  auto fit = FitTopology(*LoadTopology("HGX-H100"), 12);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(std::string(fit.status().message())
                .find("world size 12 is not divisible by the node size 8"),
            std::string::npos);
  // Smaller than a node is fine: one partial node.
  EXPECT_TRUE(FitTopology(*LoadTopology("HGX-H100"), 4).ok());
}

TEST(TopologyTest, SimulationReportsBadTopology) {
  SimInput input{std::string(ET_TEST_DATA) + "/chakra/mlp_mp.0.et", 0};
  SimOptions options;
  options.world_size = 24;
  options.topology = "DGX-V100";
  EXPECT_TRUE(Simulation::Run(input, options).ok());
  options.world_size = 20;
  auto bad = Simulation::Run(input, options);
  ASSERT_FALSE(bad.ok());
  // The error names the node and the way out, in nccl-tests' terms.
  const std::string message(bad.status().message());
  EXPECT_NE(message.find("not divisible by its node of 8 GPUs"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--nodes 20 --gpus-per-node 1"), std::string::npos)
      << message;
}

}  // namespace
}  // namespace et::sim
