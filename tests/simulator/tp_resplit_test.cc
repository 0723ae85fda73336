// A trace recorded with tensor parallelism re-split to another tp
// (scaleout/tensor_parallel.h, TpShardOptions::recorded_tp), against the
// real recordings of the same Megatron MLP (tests/data/tp-synth: torch 1.13
// CPU, gloo): tp=2 -> tp=4 against the real tp=4 files and tp=4 -> tp=2
// against the real tp=2 files: the collectives per step exactly, the memory
// peak per rank against the recorder's truth, the step against the real
// files' measured blocks; tp=1 is refused, and with dp the gradient buckets
// hold the re-split gradients (synthesized, and a recorded DDP bucket:
// tests/data/tp-dp's tp=2 x dp=2 to the real tp=4 x dp=2).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/layout_job.h"
#include "scaleout/parallel_layout.h"
#include "simulator/simulation.h"

namespace {

constexpr char kDir[] = "/tp-synth/";

std::string Convert(const std::string& name, int rank) {
  const std::string data = std::string(ET_TEST_DATA) + kDir;
  const std::string out = absl::StrCat(::testing::TempDir(), "/", getpid(),
                                       "_tpresplit_", name, "_r", rank, ".et");
  et::convert::ConvertOptions options;
  options.rank = rank;
  if (name != "tpmlp1") {
    options.kineto_path =
        absl::StrCat(data, name, "_kineto_r", rank, ".json.gz");
    auto report = et::convert::ConvertFile(
        absl::StrCat(data, name, "_et_r", rank, ".json.gz"), out, options);
    EXPECT_TRUE(report.ok()) << report.status();
  } else {
    options.rank = -1;
    options.kineto_path = data + "tpmlp1_kineto.json.gz";
    auto report =
        et::convert::ConvertFile(data + "tpmlp1_et.json.gz", out, options);
    EXPECT_TRUE(report.ok()) << report.status();
  }
  return out;
}

std::unique_ptr<et::sim::Simulation> Simulate(const std::string& path,
                                              const std::string& layout) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout(layout);
  auto sim = et::sim::Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? std::move(*sim) : nullptr;
}

// The real job at `tp`, every rank's files.
std::unique_ptr<et::sim::Simulation> RunRecorded(const std::string& name,
                                                 int tp) {
  for (int r = 0; r < tp; ++r) Convert(name, r);
  const std::string pattern = absl::StrCat(::testing::TempDir(), "/", getpid(),
                                           "_tpresplit_", name, "_r%d.et");
  auto sim = et::sim::Simulation::Run({pattern, tp}, et::sim::SimOptions{});
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? std::move(*sim) : nullptr;
}

// (type, bytes, group size) -> calls.
using CollectiveKey = std::tuple<std::string, uint64_t, int64_t>;
std::map<CollectiveKey, int64_t> Collectives(const et::sim::Report& r) {
  std::map<CollectiveKey, int64_t> out;
  for (const et::sim::CollectiveRow& c : r.collectives)
    out[{c.type, c.bytes, c.group_size}] += c.calls;
  return out;
}

// The re-split rank against the real job: collectives exactly; the memory
// peak per rank the memory model's on the real files (within 1%) and the
// recorder's truth within 6% (the memory model's own error on these files:
// -5.5% at tp=2, -5.8% at tp=4); the step against the real job's measured
// one, within 50% (the VM was loaded: the recordings' own predictions are
// -15% (tp=2) and -31% (tp=4) from their measured steps). Numbers printed.
void ExpectMatches(const et::sim::Simulation& synth,
                   const et::sim::Simulation& real, int64_t tp) {
  EXPECT_EQ(synth.report().step.steps, real.report().step.steps);
  const auto want = Collectives(real.report());
  ASSERT_EQ(want.size(), 1u);
  // 3 all-reduces of the 16 x 256 float32 activations a step (2 steps).
  EXPECT_EQ(want.begin()->first, CollectiveKey("ALL_REDUCE", 16 * 256 * 4, tp));
  EXPECT_EQ(want.begin()->second, 6);
  EXPECT_EQ(Collectives(synth.report()), want);
  ASSERT_TRUE(synth.report().ranks[0].memory.has_value());
  const int64_t predicted = synth.report().ranks[0].memory->peak_bytes;
  for (const et::sim::RankStats& r : real.report().ranks) {
    ASSERT_TRUE(r.memory.has_value());
    ASSERT_GT(r.memory->recorded_peak_bytes, 0);
    EXPECT_NEAR(predicted, r.memory->peak_bytes, 0.01 * r.memory->peak_bytes);
    const double error = 100.0 * (predicted - r.memory->recorded_peak_bytes) /
                         static_cast<double>(r.memory->recorded_peak_bytes);
    std::printf(
        "tp=%lld memory: predicted %lld, model on the real files %lld, "
        "recorded %lld (%+.2f%%)\n",
        static_cast<long long>(tp), static_cast<long long>(predicted),
        static_cast<long long>(r.memory->peak_bytes),
        static_cast<long long>(r.memory->recorded_peak_bytes), error);
    EXPECT_LT(std::abs(error), 6.0) << "predicted " << predicted;
  }
  const et::StepReport& step = real.report().step;
  ASSERT_TRUE(step.measured_us.has_value());
  const double step_error =
      100.0 * (synth.report().step.predicted_us - *step.measured_us) /
      *step.measured_us;
  std::printf(
      "tp=%lld step: predicted %.0f us, real job measured %.0f us (%+.1f%%), "
      "blocks %.0f..%.0f us\n",
      static_cast<long long>(tp), synth.report().step.predicted_us,
      *step.measured_us, step_error, *step.measured_fastest_block_us,
      *step.measured_slowest_block_us);
  EXPECT_LT(std::abs(step_error), 50.0);
}

TEST(TpResplitTest, Tp2ToTp4MatchesTheRecordedTp4Job) {
  auto synth = Simulate(Convert("tpmlp2", 0), "tp=4");
  auto real = RunRecorded("tpmlp4", 4);
  ASSERT_TRUE(synth && real);
  bool noted = false;
  for (const std::string& n : synth->report().notes)
    noted |= absl::StrContains(n, "re-split from the recorded tp=2") &&
             absl::StrContains(n, "its 6 all-reduces of partial sums kept") &&
             absl::StrContains(n, "0 all-reduces of partial sums");
  EXPECT_TRUE(noted);
  ExpectMatches(*synth, *real, 4);
}

TEST(TpResplitTest, Tp4ToTp2MatchesTheRecordedTp2Job) {
  auto synth = Simulate(Convert("tpmlp4", 0), "tp=2");
  auto real = RunRecorded("tpmlp2", 2);
  ASSERT_TRUE(synth && real);
  ExpectMatches(*synth, *real, 2);
}

TEST(TpResplitTest, ReSplitGradientsMatchTheOneRankSplit) {
  // tp=4,dp=2 from the tp=2 trace syncs what tp=4,dp=2 from the one-rank
  // trace does: per pair the column layer 256 -> 256 with bias and the row
  // layer 256 -> 256 split, the row layer's bias of 256 whole; float32.
  auto resplit = Simulate(Convert("tpmlp2", 0), "tp=4,dp=2");
  auto split = Simulate(Convert("tpmlp1", 0), "tp=4,dp=2");
  ASSERT_TRUE(resplit && split);
  ASSERT_TRUE(resplit->dp_sync().has_value() && split->dp_sync().has_value());
  constexpr int64_t kPair = (256 * 256 + 256) + 256 * 256 + 256;
  EXPECT_EQ(split->dp_sync()->gradient_bytes, 2 * kPair * 4);
  EXPECT_EQ(resplit->dp_sync()->gradient_bytes, 2 * kPair * 4);
  EXPECT_EQ(resplit->world_size(), 8);
}

TEST(TpResplitTest, TheWrittenJobNamesTheResizedGroup) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("tp=4,dp=2");
  options.keep_graph = true;
  auto sim = et::sim::Simulation::Run({Convert("tpmlp2", 0), 0}, options);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const et::sim::Simulation& s = **sim;
  auto source = et::scaleout::LayoutRankSource(
      *s.layout_graph(), *s.recorded_layout(), *options.layout);
  ASSERT_TRUE(source.ok()) << source.status();
  for (int64_t rank : {0, 5}) {
    SCOPED_TRACE(rank);
    auto graph = (*source)(rank);
    ASSERT_TRUE(graph.ok()) << graph.status();
    const std::vector<et::ProcessGroup> groups =
        et::DecodeProcessGroups((*graph)->metadata().attr());
    const int64_t first = rank / 4 * 4;
    const std::vector<int64_t> tp = {first, first + 1, first + 2, first + 3};
    int64_t tp_named = 0;
    for (const auto& node : (*graph)->nodes()) {
      if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
      const std::string pg = et::GetString(node, et::attr::kPgName).value();
      for (const et::ProcessGroup& g : groups)
        if (g.name == pg && g.ranks == tp) ++tp_named;
    }
    EXPECT_EQ(tp_named, 6);  // the recorded 3 a step, 2 steps
  }
}

TEST(TpResplitTest, MergingToOneRankIsRefused) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("tp=1,dp=2");
  auto sim = et::sim::Simulation::Run({Convert("tpmlp2", 0), 0}, options);
  ASSERT_FALSE(sim.ok());
  EXPECT_TRUE(absl::StrContains(sim.status().message(),
                                "and tp=1 would merge its shards"))
      << sim.status();
}

}  // namespace

namespace {

// The real tp=2 x dp=2 rank 0 (tests/data/tp-dp, DDP over the data-parallel
// group) re-split to tp=4,dp=2 against the real tp=4 x dp=2 job: its
// recorded DDP bucket holds the re-split gradients (66,560 bytes: the split
// layers' quarters, the row biases whole), its tp all-reduces the group of 4.
TEST(TpResplitTest, Tp2Dp2ToTp4Dp2MatchesTheRecordedTp4Dp2Collectives) {
  const std::string data = std::string(ET_TEST_DATA) + "/tp-dp/";
  auto convert = [&](const std::string& name, int rank) {
    const std::string out = absl::StrCat(::testing::TempDir(), "/", getpid(),
                                         "_tpresplit_", name, ".", rank, ".et");
    et::convert::ConvertOptions options;
    options.rank = rank;
    options.kineto_path =
        absl::StrCat(data, name, "_kineto_r", rank, ".json.gz");
    EXPECT_TRUE(
        et::convert::ConvertFile(
            absl::StrCat(data, name, "_et_r", rank, ".json.gz"), out, options)
            .ok());
    return out;
  };
  auto synth = Simulate(convert("tp2dp2", 0), "tp=4,dp=2");
  for (int r = 0; r < 8; ++r) convert("tp4dp2", r);
  auto real = et::sim::Simulation::Run(
      {absl::StrCat(::testing::TempDir(), "/", getpid(),
                    "_tpresplit_tp4dp2.%d.et"),
       8},
      et::sim::SimOptions{});
  ASSERT_TRUE(synth && real.ok()) << real.status();
  // Per rank (the real job's rows are per group: 2 tp groups, 4 dp groups).
  EXPECT_EQ(Collectives(synth->report()),
            (std::map<CollectiveKey, int64_t>{
                {{"ALL_REDUCE", 16 * 64 * 4, int64_t{4}}, 6},
                {{"ALL_REDUCE", 66560, int64_t{2}}, 2}}));
  for (const auto& [key, calls] : Collectives((*real)->report()))
    EXPECT_TRUE(key == CollectiveKey("ALL_REDUCE", 16 * 64 * 4, 4) ||
                key == CollectiveKey("ALL_REDUCE", 66560, 2))
        << std::get<0>(key) << " " << std::get<1>(key);
}

}  // namespace
