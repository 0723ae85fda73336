// Expert parallelism synthesized from a one-rank trace (scaleout/
// expert_parallel.h), against a real recording of the same model at ep=2
// (tests/data/ep-synth: record_trace.py's mixture of 8 experts, torch 1.13
// CPU, gloo all_to_all_single): each rank's collectives per step match
// exactly (type, bytes, group size, count), the memory peak matches the
// memory model on the real files and is held against the recorder's truth;
// the step against the real job's prediction; --sweep, ep x dp, the per-rank
// files, and a trace without experts refused with what it lacks.
#include <unistd.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/expert_parallel.h"
#include "scaleout/parallel_layout.h"
#include "scaleout/rank_job_writer.h"
#include "simulator/simulation.h"
#include "tests/simulator/layout_fixture.h"

namespace {

// The model: 8 experts of 64 -> 256 -> 64, top-2 routing of 8 x 16 tokens,
// float32. Each rank routes 256 token slots: 256 x 64 x 4 bytes.
constexpr int64_t kRoutedBytes = 256 * 64 * 4;

using et::testing::ConvertRecording;

std::string OneRank() { return ConvertRecording("ep-synth", "moe1"); }
std::string RealRank(int rank) {
  return ConvertRecording("ep-synth", "moe2", rank);
}

std::unique_ptr<et::sim::Simulation> Simulate(const std::string& path,
                                              const std::string& layout) {
  return et::testing::SimulateLayout(path, layout);
}

// (step, type, bytes, group size) -> calls, from a rank's graph.
using Key = std::tuple<int64_t, int, int64_t, int64_t>;
std::map<Key, int64_t> CollectivesOf(const et::Graph& graph) {
  et::ModelOptions options;
  const et::NodeModel model = et::NodeModel::FromGraph(graph, options);
  std::map<Key, int64_t> out;
  for (et::NodeIndex i = 0; i < model.size(); ++i) {
    const et::CommSpec* c = model.comm(i);
    if (c == nullptr || model.type(i) != ChakraProtoMsg::COMM_COLL_NODE)
      continue;
    const int64_t size =
        c->group < 0 ? -1 : model.groups()[static_cast<size_t>(c->group)].size;
    out[{model.step(i), static_cast<int>(c->type), c->bytes, size}] += 1;
  }
  return out;
}

TEST(EpSynthTest, EachRanksCollectivesMatchTheRecordedEp2Job) {
  auto one = et::LoadGraph(OneRank());
  ASSERT_TRUE(one.ok()) << one.status();
  for (int rank : {0, 1}) {
    SCOPED_TRACE(rank);
    et::scaleout::EpShardOptions options;
    options.ep = 2;
    options.ep_index = rank;
    options.ep_ranks = {0, 1};
    auto split = et::scaleout::ShardExpertParallel(*one, options);
    ASSERT_TRUE(split.ok()) << split.status();
    EXPECT_EQ(split->layers, 1);
    EXPECT_EQ(split->experts, 8);
    auto real = et::LoadGraph(RealRank(rank));
    ASSERT_TRUE(real.ok()) << real.status();
    const auto want = CollectivesOf(*real);
    // Per step: the counts, the dispatch, the combine, the combine's
    // gradient (all-to-alls) and the router's gradients (an all-reduce of
    // 8 x 64 + 8 float32); the experts' input needs no gradient here.
    ASSERT_EQ(want.size(), 8u);
    EXPECT_EQ(want.at({0, ChakraProtoMsg::ALL_TO_ALL, kRoutedBytes, 2}), 2);
    EXPECT_EQ(want.at({0, ChakraProtoMsg::ALL_TO_ALL, 8 * 8, 2}), 1);
    EXPECT_EQ(want.at({1, ChakraProtoMsg::ALL_REDUCE, 520 * 4, 2}), 1);
    EXPECT_EQ(CollectivesOf(split->graph), want);
  }
}

// A second recording of the one-rank model (moe1b, on a quiet host): the
// split follows tensors by their storage ids, which are addresses, and here
// a reused address joins another parameter's gradient to expert 6's (the
// split would drop the router's gradient all-reduce). The backward's
// partition check catches it: refused, naming the two ops, not a wrong job.
TEST(EpSynthTest, ASecondRecordingWhoseExpertsMeetIsRefusedByName) {
  auto one = et::LoadGraph(ConvertRecording("ep-synth", "moe1b"));
  ASSERT_TRUE(one.ok()) << one.status();
  et::scaleout::EpShardOptions options;
  options.ep = 2;
  options.ep_ranks = {0, 1};
  auto split = et::scaleout::ShardExpertParallel(*one, options);
  ASSERT_FALSE(split.ok());
  const std::string message(split.status().message());
  EXPECT_TRUE(absl::StrContains(message,
                                "expert 6's backward op node 4092 "
                                "(aten::add_)"))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "node 4089 (aten::as_strided)"))
      << message;
}

TEST(EpSynthTest, Ep2ReportAndMemoryAgainstTheRecordedJob) {
  auto synth = Simulate(OneRank(), "ep=2");
  ASSERT_TRUE(synth);
  EXPECT_TRUE(et::testing::HasNoteWith(
      synth->report(),
      {"synthesized ep=2", "1 mixture-of-experts layers of 8 experts",
       "8 all-to-alls added"}));
  for (const et::sim::CollectiveRow& c : synth->report().collectives) {
    EXPECT_TRUE(c.synthesized) << c.group;
    EXPECT_EQ(c.group_size, 2);
  }
  // The rank simulated holds the experts with the most tokens: ep index 0
  // (137 of the 256 routed slots a step, 119 on rank 1).
  auto real = et::testing::SimulateRecordedJob("ep-synth", "moe2", 2);
  ASSERT_TRUE(real);
  const et::sim::RankStats& rank0 = real->report().ranks[0];
  ASSERT_TRUE(rank0.memory.has_value() &&
              synth->report().ranks[0].memory.has_value());
  const int64_t predicted = synth->report().ranks[0].memory->peak_bytes;
  // Parameters, gradients and optimizer state are the real rank's to the
  // byte (4 of 8 experts and the router); the peak within 3% of the memory
  // model on the real rank-0 file (the real one also holds the all-to-all
  // buffers), and within 10% of the recorder's truth (-8.4%: the memory
  // model's own error on the real file is -6.2%, the all-to-all buffers the
  // recorder's Python locals hold; on the one-rank file -1.3%).
  EXPECT_NEAR(predicted, rank0.memory->peak_bytes,
              0.03 * rank0.memory->peak_bytes);
  ASSERT_GT(rank0.memory->recorded_peak_bytes, 0);
  const double error = (predicted - rank0.memory->recorded_peak_bytes) /
                       static_cast<double>(rank0.memory->recorded_peak_bytes);
  EXPECT_LT(std::abs(error), 0.10) << predicted;
  // The one-rank trace holds all 8 experts' state: far more.
  auto whole = Simulate(OneRank(), "");
  ASSERT_TRUE(whole && whole->report().ranks[0].memory.has_value());
  EXPECT_GT(whole->report().ranks[0].memory->peak_bytes, 1.5 * predicted);

  // Step: both recordings' timing blocks are far apart (30.9-79.4 ms for
  // ep=2: a loaded 2-core VM), and the profiled op times were inflated by
  // the load, so the recorder's truth judges nothing; the synthesized step
  // is held against what et-sim predicts from the real ep=2 files, recorded
  // on the same machine (within 10%).
  const double real_us = real->report().step.predicted_us;
  EXPECT_NEAR(synth->report().step.predicted_us, real_us, 0.10 * real_us);
}

TEST(EpSynthTest, SweepEp124) {
  auto one = Simulate(OneRank(), "");
  auto ep2 = Simulate(OneRank(), "ep=2");
  auto ep4 = Simulate(OneRank(), "ep=4");
  ASSERT_TRUE(one && ep2 && ep4);
  // Fewer experts a rank: less memory; the routed bytes stay, the combine
  // grows with the tokens the rank's experts receive.
  const int64_t m1 = one->report().ranks[0].memory->peak_bytes;
  const int64_t m2 = ep2->report().ranks[0].memory->peak_bytes;
  const int64_t m4 = ep4->report().ranks[0].memory->peak_bytes;
  EXPECT_GT(m1, m2);
  EXPECT_GT(m2, m4);
  int64_t groups4 = 0;
  for (const et::sim::CollectiveRow& c : ep4->report().collectives) {
    EXPECT_EQ(c.group_size, 4);
    ++groups4;
  }
  EXPECT_EQ(groups4, 4);  // counts, routed, combine (ALL_TO_ALL), dense
  EXPECT_EQ(ep4->world_size(), 4);
}

TEST(EpSynthTest, Ep2Dp2SyncsOnlyThisRanksExperts) {
  auto sim = Simulate(OneRank(), "ep=2,dp=2");
  ASSERT_TRUE(sim);
  ASSERT_TRUE(sim->dp_sync().has_value());
  // The router (8 x 64 + 8) and 4 experts of (64 x 256 + 256) + (256 x 64 +
  // 64) float32 parameters.
  constexpr int64_t kExpert = (64 * 256 + 256) + (256 * 64 + 64);
  EXPECT_EQ(sim->dp_sync()->gradient_bytes, (520 + 4 * kExpert) * 4);
  EXPECT_EQ(sim->world_size(), 4);
}

// --write-ranks: every rank of ep=2,dp=2 names its own ep pair (ranks 2k,
// 2k+1) for the all-to-alls and its dp group for the gradient buckets, and
// the written job simulated again predicts the same step.
TEST(EpSynthTest, TheWrittenJobGivesEachRankItsEpAndDpGroups) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("ep=2,dp=2");
  auto written = et::testing::RunLayoutJob(OneRank(), options);
  ASSERT_TRUE(written.ok()) << written.status();
  const et::sim::Simulation& s = *written->sim;
  for (int64_t rank : {0, 3}) {
    SCOPED_TRACE(rank);
    auto graph = written->rank_graph(rank);
    ASSERT_TRUE(graph.ok()) << graph.status();
    const std::vector<int64_t> ep = {rank / 2 * 2, rank / 2 * 2 + 1};
    const std::vector<int64_t> dp = {rank % 2, rank % 2 + 2};
    // 4 all-to-alls and 1 all-reduce, 2 steps
    EXPECT_EQ(et::testing::CollectivesOn(**graph, ep), 10);
    EXPECT_EQ(et::testing::CollectivesOn(**graph, dp), 2);  // 1 bucket a step
  }
  // The written files (et-sim --write-ranks), simulated as a 4-rank job:
  // the same step as the prediction.
  const et::scaleout::RankJobSpec spec{
      ::testing::TempDir() + "/" + std::to_string(getpid()) + "_epsynth_ranks",
      "moe", 4};
  auto job = et::scaleout::WriteRankJob(spec, written->rank_graph);
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->rank_paths.size(), 4u);
  et::sim::SimOptions again;
  auto rerun = et::sim::Simulation::Run({spec.dir + "/moe.%d.et", 4}, again);
  ASSERT_TRUE(rerun.ok()) << rerun.status();
  EXPECT_NEAR((*rerun)->report().step.predicted_us,
              s.report().step.predicted_us,
              1e-6 * s.report().step.predicted_us + 1);
}

TEST(EpSynthTest, ATraceWithoutExpertsIsRefusedWithWhatItLacks) {
  const std::string path = ConvertRecording("tp-synth", "tpmlp1");
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("ep=2");
  auto sim = et::sim::Simulation::Run({path, 0}, options);
  ASSERT_FALSE(sim.ok());
  EXPECT_TRUE(absl::StrContains(sim.status().message(),
                                "no mixture-of-experts layer found"))
      << sim.status();
  EXPECT_TRUE(absl::StrContains(sim.status().message(), "4 MLPs"))
      << sim.status();
  // And ep must divide the experts.
  options.layout = *et::scaleout::ParseLayout("ep=3");
  auto three = et::sim::Simulation::Run({OneRank(), 0}, options);
  ASSERT_FALSE(three.ok());
  EXPECT_TRUE(absl::StrContains(three.status().message(),
                                "ep=3 does not divide the 8 experts"))
      << three.status();
}

}  // namespace
