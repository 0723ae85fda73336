// The synthesized DDP sync against real DDP runs
// (tests/data/dp-sync/README.md): a model recorded on one rank without DDP,
// made into a dp=N job, must issue the all-reduces that the same model under
// DistributedDataParallel issued.
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/ddp_buckets.h"
#include "scaleout/dp_sync.h"
#include "scaleout/gradients.h"

namespace et::scaleout {
namespace {

using BytesByStep = std::map<int64_t, std::vector<int64_t>>;

Graph Converted(const std::string& rel, const std::string& tag) {
  convert::ConvertOptions options;
  options.rank = 0;
  const std::string out =
      ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + tag + ".et";
  auto report =
      convert::ConvertFile(std::string(ET_TEST_DATA) + "/" + rel, out, options);
  EXPECT_TRUE(report.ok()) << report.status();
  auto graph = LoadGraph(out);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? *std::move(graph) : Graph::Build({}, {});
}

// The all-reduces of a graph, in id order, by step; synthesized ones or
// recorded ones.
BytesByStep AllReduces(const Graph& graph, bool synthesized) {
  const NodeModel m = NodeModel::FromGraph(graph);
  BytesByStep by_step;
  for (NodeIndex i = 0; i < m.size(); ++i) {
    if (m.kind(i) != NodeKind::kCollective || m.synthesized(i) != synthesized ||
        m.comm(i)->type != ChakraProtoMsg::ALL_REDUCE)
      continue;
    by_step[m.step(i)].push_back(m.comm(i)->bytes);
  }
  return by_step;
}

DpSyncOptions Ddp(int64_t dp) {
  DpSyncOptions o;
  o.mode = DpSyncMode::kDdp;
  o.dp_size = dp;
  return o;
}

TEST(DpSyncRecordedTest, MlpTwinIssuesTheAllReduceOfTheSharedDdpRun) {
  const Graph real =
      Converted("pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz", "ddp_mlp_r0");
  const BytesByStep truth = AllReduces(real, false);
  ASSERT_EQ(truth.size(), 3u);
  for (const auto& [step, bytes] : truth)
    EXPECT_EQ(bytes, (std::vector<int64_t>{330756})) << "step " << step;

  auto sync =
      AddDpSync(Converted("dp-sync/mlp_1r_et.json.gz", "mlp_1r"), Ddp(4));
  ASSERT_TRUE(sync.ok()) << sync.status();
  ASSERT_TRUE(sync->graph.has_value()) << sync->note;
  EXPECT_EQ(sync->gradients, 6);
  EXPECT_EQ(sync->gradient_bytes, 330756);
  EXPECT_EQ(AllReduces(*sync->graph, true), truth);
  EXPECT_TRUE(AllReduces(*sync->graph, false).empty());
}

TEST(DpSyncRecordedTest, ARealDdpTraceKeepsItsOwnAllReduces) {
  auto sync = AddDpSync(
      Converted("pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz", "ddp_mlp_keep"),
      Ddp(8));
  ASSERT_TRUE(sync.ok()) << sync.status();
  EXPECT_TRUE(sync->recorded) << sync->note;
  EXPECT_FALSE(sync->graph.has_value());
}

TEST(DpSyncRecordedTest, WideModelBucketsMatchTheRealDdpRun) {
  // Under DDP (2 ranks, gloo) the first iteration all-reduces one bucket of
  // everything; from the second on, the rebuilt buckets.
  const BytesByStep truth = AllReduces(
      Converted("dp-sync/wide_ddp2_et_r0.json.gz", "wide_ddp2_r0"), false);
  ASSERT_EQ(truth.size(), 3u);
  const std::vector<int64_t> rebuilt = {4202500, 29388800, 266240};
  EXPECT_EQ(truth.at(0), (std::vector<int64_t>{33857540}));
  EXPECT_EQ(truth.at(1), rebuilt);
  EXPECT_EQ(truth.at(2), rebuilt);

  const Graph one_rank = Converted("dp-sync/wide_1r_et.json.gz", "wide_1r");
  auto sync = AddDpSync(one_rank, Ddp(2));
  ASSERT_TRUE(sync.ok()) << sync.status();
  ASSERT_TRUE(sync->graph.has_value()) << sync->note;
  std::vector<int64_t> sizes;
  for (const Bucket& b : sync->buckets) sizes.push_back(b.bytes);
  EXPECT_EQ(sizes, rebuilt);
  const BytesByStep synthesized = AllReduces(*sync->graph, true);
  ASSERT_EQ(synthesized.size(), 3u);
  EXPECT_EQ(synthesized.at(1), truth.at(1));
  EXPECT_EQ(synthesized.at(2), truth.at(2));

  // The first iteration's single bucket is InitialBuckets over the
  // registration order the optimizer revealed.
  auto grads = FindGradients(one_rank);
  ASSERT_TRUE(grads.ok()) << grads.status();
  const Iteration& it = grads->iterations.front();
  std::vector<BucketInput> registered;
  for (int k : it.registration_order)
    registered.push_back({k, it.gradients[k].bytes, it.gradients[k].dtype});
  const std::vector<Bucket> initial = InitialBuckets(
      registered, kDefaultBucketCapBytes, kDefaultFirstBucketBytes, false);
  ASSERT_EQ(initial.size(), 1u);
  EXPECT_EQ(initial[0].bytes, truth.at(0)[0]);
  // Registration order is the reverse of ready order for this sequential
  // model: the optimizer reads the first layer's weight first, whose gradient
  // was the last one ready.
  ASSERT_EQ(it.registration_order.size(), it.gradients.size());
  EXPECT_EQ(it.registration_order.front(),
            static_cast<int>(it.gradients.size()) - 1);
  EXPECT_EQ(it.registration_order.back(), 0);
}

}  // namespace
}  // namespace et::scaleout
