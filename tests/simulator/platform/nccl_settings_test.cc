// NCCL's knobs: NCCL_ALGO / NCCL_PROTO in NCCL's list syntax, the checks on
// channel bounds and GPUs per process, and the same knobs in a platform file.
#include "simulator/platform/nccl_settings.h"

#include "gtest/gtest.h"
#include "simulator/comm/nccl_cost_model.h"
#include "simulator/platform/platform.h"

namespace et::sim {
namespace {

TEST(NcclSettingsTest, AlgoAndProtoListsAsNcclReadsThem) {
  EXPECT_EQ(*ParseNcclAlgo("ring"), kNcclRing);
  EXPECT_EQ(*ParseNcclAlgo("RING"), kNcclRing);
  EXPECT_EQ(*ParseNcclAlgo("Tree,Ring"), kNcclRing | kNcclTree);
  EXPECT_EQ(*ParseNcclAlgo(" nvls , nvlstree "), kNcclNvls | kNcclNvlsTree);
  EXPECT_EQ(*ParseNcclAlgo("^NVLS,NVLSTree"),
            kNcclAllAlgorithms & ~(kNcclNvls | kNcclNvlsTree));
  EXPECT_EQ(*ParseNcclAlgo("collnet"), kNcclCollNetDirect | kNcclCollNetChain);
  EXPECT_EQ(*ParseNcclProto("^LL128"), kNcclLl | kNcclSimple);
  EXPECT_EQ(*ParseNcclProto("ll,simple"), kNcclLl | kNcclSimple);
  for (const char* bad : {"rings", "", "ring,",
                          "^Ring,Tree,NVLS,NVLSTree,"
                          "CollNetDirect,CollNetChain,PAT"}) {
    const auto parsed = ParseNcclAlgo(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
  }
  EXPECT_NE(std::string(ParseNcclAlgo("rings").status().message())
                .find("Ring, Tree, NVLS"),
            std::string::npos);
  EXPECT_FALSE(ParseNcclProto("^LL,LL128,Simple").ok());
  EXPECT_FALSE(ParseNcclProto("LL256").ok());
}

TEST(NcclSettingsTest, BoundsAndDescription) {
  NcclSettings s;
  EXPECT_EQ(DescribeNcclSettings(s), "");
  NcclFlags flags{"ring", "^LL128", 0, 4, 8};
  ASSERT_TRUE(ApplyNcclFlags(flags, &s).ok());
  EXPECT_EQ(DescribeNcclSettings(s),
            "NCCL_ALGO=ring NCCL_PROTO=^LL128 NCCL_MAX_NCHANNELS=4 -g 8");
  EXPECT_FALSE(ApplyNcclFlags({"", "", 8, 4, 0}, &s).ok());
  NcclSettings t;
  EXPECT_FALSE(ApplyNcclFlags({"", "", 0, 65, 0}, &t).ok());
  EXPECT_FALSE(ApplyNcclFlags({"", "", 0, 0, 65}, &t).ok());
}

// A platform file carries the knobs, is strict about its keys, and the model
// applies them: a ring-only file prices as the library's ring.
TEST(NcclSettingsTest, PlatformFileKeys) {
  auto p = ParsePlatform(
      "{gpu: H100, nccl_algo: 'Ring', nccl_proto: '^LL', nccl_max_channels: "
      "8, gpus_per_process: 8, launch_per_gpu_us: 3, intra_hop_us: 0.5}",
      "knobs.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->nccl.algorithms, kNcclRing);
  EXPECT_EQ(p->nccl.protocols, kNcclLl128 | kNcclSimple);
  EXPECT_EQ(p->nccl.max_channels, 8);
  EXPECT_EQ(p->nccl.gpus_per_process, 8);
  const NcclEstimate e = NcclCollective(*p, NcclOp::kAllReduce, 8, 1 << 30);
  EXPECT_EQ(e.algorithm, "ring");
  EXPECT_NE(e.protocol, "LL");
  for (const char* bad :
       {"{gpu: H100, nccl_algo: rign}", "{gpu: H100, nccl_max_channels: 0.5}",
        "{gpu: H100, gpus_per_process: 0}", "{gpu: H100, nic_gbit: 400}",
        "{gpu: H100, nccl_proto: [LL]}"}) {
    const auto parsed = ParsePlatform(bad, "bad.yaml");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("bad.yaml"), std::string::npos);
  }
  EXPECT_NE(ParsePlatform("{gpu: H100, nic_gbit: 400}", "bad.yaml")
                .status()
                .message()
                .find("unknown key 'nic_gbit'"),
            std::string::npos);
}

}  // namespace
}  // namespace et::sim
