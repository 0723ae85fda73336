// The synthesized DDP sync against real DDP runs
// (tests/data/dp-sync/README.md): a model recorded on one rank without DDP,
// made into a dp=N job, must issue the all-reduces that the same model under
// DistributedDataParallel issued.
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// What two models say about every node, their structure and their groups,
// one line each: equal texts are models no tool can tell apart.
std::vector<std::string> Describe(const NodeModel& m) {
  std::vector<std::string> out;
  for (NodeIndex i = 0; i < m.size(); ++i) {
    std::string line = absl::StrCat(
        m.id(i), " ", m.name(i), " ", NodeKindName(m.kind(i)), " q",
        static_cast<int>(m.queue(i).kind), ":", m.queue(i).number, " s",
        m.step(i), " h", m.on_host(i), " y", m.synthesized(i), " t",
        m.recorded_tensors(i, false).size(), "/",
        m.recorded_tensors(i, true).size(), " d");
    for (NodeIndex d : m.data_deps(i)) absl::StrAppend(&line, ",", m.id(d));
    absl::StrAppend(&line, " c");
    for (NodeIndex d : m.ctrl_deps(i)) absl::StrAppend(&line, ",", m.id(d));
    absl::StrAppend(&line, " u");
    for (NodeIndex u : m.deps().data_users(i))
      absl::StrAppend(&line, ",", m.id(u));
    if (const CommSpec* c = m.comm(i))
      absl::StrAppend(&line, " comm ", c->type, " ", c->bytes, " g", c->group,
                      " ", m.string(c->pg_name), " ", c->on_host);
    out.push_back(std::move(line));
  }
  std::string order = "order";
  for (NodeIndex i : m.order()) absl::StrAppend(&order, ",", m.id(i));
  out.push_back(order);
  for (const std::string& note : m.notes()) out.push_back(note);
  for (const ProcessGroup& g : m.groups())
    out.push_back(absl::StrCat("group ", g.name, " ", g.desc, " ", g.size, " ",
                               absl::StrJoin(g.ranks, ",")));
  out.push_back(m.metadata().SerializeAsString());
  return out;
}

// The sync put on a loaded model (et-sim --layout) is the model of the
// synced graph, in every mode, with or without the tensors the memory model
// reads; the form that takes the model's columns leaves it empty.
TEST(DpSyncRecordedTest, SyncOnTheModelIsTheSyncedGraphsModel) {
  for (const std::string trace : {"mlp_1r", "wide_1r"}) {
    const Graph graph =
        Converted("dp-sync/" + trace + "_et.json.gz", "model_" + trace);
    for (DpSyncMode mode :
         {DpSyncMode::kDdp, DpSyncMode::kZero, DpSyncMode::kFsdp}) {
      for (bool tensors : {false, true}) {
        SCOPED_TRACE(
            absl::StrCat(trace, " ", DpSyncModeName(mode), " ", tensors));
        ModelOptions options;
        options.keep_io = false;
        options.keep_tensors = tensors;
        DpSyncOptions sync = Ddp(131072);
        sync.mode = mode;
        for (int64_t r = 0; r < 8; ++r) sync.dp_ranks.push_back(r * 3);
        auto on_graph = AddDpSync(graph, sync);
        ASSERT_TRUE(on_graph.ok()) << on_graph.status();
        ASSERT_TRUE(on_graph->graph.has_value());
        const NodeModel loaded = NodeModel::FromGraph(graph, options);
        auto on_model = AddDpSync(loaded, sync, options);
        ASSERT_TRUE(on_model.ok()) << on_model.status();
        ASSERT_TRUE(on_model->model.has_value());
        EXPECT_EQ(on_model->note, on_graph->note);
        EXPECT_GT(on_model->collectives_added, 0);
        EXPECT_EQ(on_model->model->size(),
                  loaded.size() + on_model->collectives_added);
        const std::vector<std::string> want =
            Describe(NodeModel::FromGraph(*on_graph->graph, options));
        EXPECT_EQ(Describe(*on_model->model), want);
        NodeModel taken = loaded;
        auto moved = AddDpSync(&taken, sync, options);
        ASSERT_TRUE(moved.ok()) << moved.status();
        EXPECT_EQ(taken.size(), 0u);
        EXPECT_EQ(Describe(*moved->model), want);
      }
    }
  }
}

// A model whose nodes name the sync's group without its table having it
// (a synced graph under its recorded metadata) would decode them again
// against the new table: refused, the model untouched, and the caller syncs
// the graph instead.
TEST(DpSyncRecordedTest, AModelNamingTheSyncsGroupIsRefusedUntouched) {
  const Graph graph = Converted("dp-sync/mlp_1r_et.json.gz", "mlp_1r_names");
  auto synced = AddDpSync(graph, Ddp(4));
  ASSERT_TRUE(synced.ok()) << synced.status();
  NodeModel model = NodeModel::FromGraph(
      Graph::Build(graph.metadata(), synced->graph->nodes()));
  ASSERT_GT(model.counts().unknown_groups, 0);
  const size_t size = model.size();
  auto refused = NodeModel::WithAddedNodes(
      &model, DpSyncMetadata(model.metadata(), Ddp(4)), {}, {}, {});
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  EXPECT_EQ(model.size(), size);
  auto again = AddDpSync(&model, Ddp(4), ModelOptions());
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  EXPECT_EQ(model.size(), size);
}

}  // namespace
}  // namespace et::scaleout
