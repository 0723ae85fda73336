// Platform presets, the preset that follows a trace's GPU, platform files, and
// how one --topology value resolves into both the NCCL platform and the
// alpha-beta topology (simulator/platform/network.h).
#include "simulator/platform/platform.h"

#include <string>

#include "gtest/gtest.h"
#include "simulator/comm/nccl_cost_model.h"
#include "simulator/platform/network.h"

namespace et::sim {
namespace {

TEST(PlatformTest, DeviceNamesPickTheirReferenceMachine) {
  EXPECT_EQ(PlatformForDevice("NVIDIA A100-SXM4-80GB")->name, "DGX-A100");
  EXPECT_EQ(PlatformForDevice("NVIDIA H100 80GB HBM3")->name, "HGX-H100");
  EXPECT_EQ(PlatformForDevice("NVIDIA H200")->name, "HGX-H200");
  EXPECT_EQ(PlatformForDevice("NVIDIA H800")->name, "HGX-H800");
  EXPECT_EQ(PlatformForDevice("Tesla V100-SXM2-16GB")->name, "DGX-V100");
  EXPECT_EQ(PlatformForDevice("NVIDIA L40S")->name, "L40S-PCIE");
  EXPECT_FALSE(PlatformForDevice("AMD Instinct MI300X").has_value());
  EXPECT_FALSE(PlatformForDevice("").has_value());
}

TEST(PlatformTest, PresetsAreCaseInsensitive) {
  ASSERT_TRUE(FindPlatformPreset("aws-p4d").has_value());
  EXPECT_EQ(FindPlatformPreset("aws-p4d")->nics_per_node, 4);
  EXPECT_FALSE(FindPlatformPreset("DGX-Z9000").has_value());
}

TEST(PlatformTest, FileStartsFromItsGpuPreset) {
  auto p = ParsePlatform("{name: mine, gpu: A100, nics_per_node: 2}", "f.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "mine");
  EXPECT_EQ(p->nics_per_node, 2);
  EXPECT_DOUBLE_EQ(p->intra_gbps, 300);  // DGX-A100's NVLink3
  EXPECT_EQ(p->arch, GpuArch::kAmpere);
}

TEST(PlatformTest, BadFileValuesAreOneLineErrors) {
  for (const char* text :
       {"{gpu: H100, gpus_per_node: 2.5}", "{gpu: H100, nic_gbits: -1}",
        "{gpu: H100, net_efficiency: 1.5}", "{gpu: H100, intra_gbps: x}"}) {
    auto p = ParsePlatform(text, "bad.yaml");
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_EQ(std::string(p.status().message()).rfind("bad.yaml: ", 0), 0u)
        << p.status();
  }
  EXPECT_FALSE(ParsePlatform(std::string(1000, '[') + std::string(1000, ']'),
                             "deep.yaml")
                   .ok());
}

TEST(PlatformTest, TyposAndOutOfRangeFiguresNameTheirKey) {
  auto typo = ParsePlatform("{gpu: H100, gpus_per_nod: 2}", "t.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(std::string(typo.status().message())
                .find("t.yaml: unknown key 'gpus_per_nod'"),
            std::string::npos);
  auto tiny = ParsePlatform("{gpu: H100, nic_gbits: 1e-308}", "n.yaml");
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(std::string(tiny.status().message()),
            "n.yaml: nic_gbits must be a number in [0.001, 1e+06], got "
            "'1e-308'");
  // One rule per message: the key that broke it, not every rule.
  auto eff = ParsePlatform("{gpu: H100, net_efficiency: 1.5}", "e.yaml");
  ASSERT_FALSE(eff.ok());
  EXPECT_EQ(std::string(eff.status().message()),
            "e.yaml: net_efficiency must be a number in (0, 1], got '1.5'");
  EXPECT_FALSE(ParsePlatform("{gpu: H100, nvls: maybe}", "v.yaml").ok());
}

TEST(PlatformTest, PlatformTextIsToldFromTopologyText) {
  EXPECT_TRUE(IsPlatformText("{gpu: H100, gpus_per_node: 8}"));
  EXPECT_FALSE(
      IsPlatformText("{dims: [{npus: 8, bandwidth_gbps: 1, "
                     "latency_ns: 1}], gpus_per_node: 8}"));
  EXPECT_FALSE(IsPlatformText("{name: x}"));
  EXPECT_FALSE(IsPlatformText(std::string(1000, '{')));
}

TEST(NetworkTest, NoFlagFollowsTheTracesGpu) {
  auto n = ResolveNetwork("", "NVIDIA A100-SXM4-80GB", true, 8);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->name, "DGX-A100");
  EXPECT_EQ(n->reason, "the trace's GPU, NVIDIA A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(n->topology.dims[0].bandwidth_gbps, 300);
  // Unknown GPU, or an astra mode: the previous default.
  EXPECT_EQ(ResolveNetwork("", "MI300X", true, 8)->name, "HGX-H100");
  EXPECT_EQ(ResolveNetwork("", "NVIDIA A100", false, 8)->name, "HGX-H100");
  EXPECT_EQ(ResolveNetwork("", "NVIDIA A100", false, 8)->reason, "default");
}

TEST(NetworkTest, HostCollectivesDefaultToTheHostPreset) {
  auto n = ResolveNetwork("", "", true, 4, /*comm_on_host=*/true);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->name, "HOST-GLOO");
  EXPECT_EQ(n->reason, "the trace's collectives run on the host (gloo)");
  EXPECT_TRUE(n->platform.host_backend);
  // gloo's ring on the measured figures, not NCCL's: 64 MiB over 4 ranks.
  const NcclEstimate e =
      NcclCollective(n->platform, NcclOp::kAllReduce, 4, 64 << 20);
  EXPECT_EQ(e.algorithm, "gloo");
  EXPECT_NEAR(e.time_us, 6 * 200 + (64 << 20) * 1.5 / 700, 1);
  // --topology still wins; so does an astra mode's previous default.
  EXPECT_EQ(ResolveNetwork("HGX-H100", "", true, 4, true)->name, "HGX-H100");
  EXPECT_EQ(ResolveNetwork("", "", false, 4, true)->name, "HGX-H100");
}

TEST(NetworkTest, PlatformOnlyPresetGetsATopology) {
  auto n = ResolveNetwork("hgx-h800", "", true, 16);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->name, "HGX-H800");
  ASSERT_EQ(n->topology.dims.size(), 2u);
  EXPECT_EQ(n->topology.dims[0].npus, 8);
  EXPECT_EQ(n->topology.dims[1].npus, 2);
  EXPECT_DOUBLE_EQ(n->topology.dims[0].bandwidth_gbps, 200);
  EXPECT_DOUBLE_EQ(n->topology.dims[1].bandwidth_gbps, 50);  // 8 x 400 Gb / 8
}

TEST(NetworkTest, TopologyFileGetsAPlatformFromItsLinks) {
  const std::string astra =
      std::string(ET_TEST_DATA) +
      "/astra-sim/configs/"
      "examples__network__analytical__HGX-H100-validated.yml";
  auto n = ResolveNetwork(astra, "", true, 8);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->reason, "--topology");
  EXPECT_EQ(n->platform.gpus_per_node, 8);
  // ASTRA-sim's GB are 2^30 bytes: 400 GiB/s.
  EXPECT_NEAR(n->platform.intra_gbps, 400.0 * (1 << 30) / 1e9, 1e-9);
  EXPECT_FALSE(n->platform.nvswitch_sharp);
}

TEST(NetworkTest, UnknownNameListsThePresets) {
  auto n = ResolveNetwork("DGX-Z9000", "", true, 8);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(std::string(n.status().message()).find("HGX-H200"),
            std::string::npos);
}

}  // namespace
}  // namespace et::sim
