// Megatron's sequence parallelism on synthesized tensor parallelism
// (scaleout/sequence_parallel.h, et-sim --sequence-parallel) on the GPT block
// of the CPU corpus (one layer: QKV -> output projection, MLP up -> down, a
// replicated head; batch 8 x context 32 x width 256, float32). There is no
// recorded truth: torch 1.13's gloo has no reduce_scatter, so Megatron's
// sequence parallelism cannot run on the CPU recorder. The collectives are
// checked against Megatron's (Korthikanti et al. 2022, section 4.2.2): per
// pair and step a reduce-scatter in place of each all-reduce and all-gathers
// of the same s x b x h x dtype bytes; the activation memory against the
// paper's formula, which divides every term of a layer's activations by t.
// A trace recorded at tp=2 (tests/data/tp-synth's Megatron MLP) re-split to
// tp=4 with sequence parallelism gives what its one-rank recording split to
// tp=4 with it gives; one that records sequence parallelism is refused.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/parallel_layout.h"
#include "simulator/simulation.h"
#include "tests/simulator/layout_fixture.h"

namespace {

using et::testing::CollectiveCalls;
using et::testing::CollectiveKey;

// One GPT block's activation: 8 x 32 tokens x width 256, float32.
constexpr uint64_t kActivationBytes = 8 * 32 * 256 * 4;

const std::string& GptBlock() {
  static const std::string* path = new std::string(
      et::testing::ConvertRecording("cpu-corpus", "cpu_gpt_w256"));
  return *path;
}

et::sim::SimOptions Options(const std::string& layout, bool sp) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout(layout);
  options.sequence_parallel = sp;
  options.keep_memory_lives = true;
  return options;
}

// Rank 0 of the same MLP recorded at tp=2 (tests/data/tp-synth).
std::string RecordedTp2() {
  return et::testing::ConvertRecording("tp-synth", "tpmlp2", 0);
}

absl::StatusOr<std::unique_ptr<et::sim::Simulation>> RunLayout(
    const std::string& path, const std::string& layout, bool sp) {
  return et::sim::Simulation::Run({path, 0}, Options(layout, sp));
}

TEST(TpSpTest, AllReducesBecomeReduceScattersAndAllGathers) {
  for (int64_t tp : {2, 4}) {
    SCOPED_TRACE(tp);
    auto sp = RunLayout(GptBlock(), absl::StrCat("tp=", tp), true);
    auto plain = RunLayout(GptBlock(), absl::StrCat("tp=", tp), false);
    ASSERT_TRUE(sp.ok()) << sp.status();
    ASSERT_TRUE(plain.ok()) << plain.status();
    const int64_t steps = (*sp)->report().step.steps;
    const auto got = CollectiveCalls((*sp)->report());
    // Megatron per step: each of the 4 all-reduces of tensor parallelism
    // (forward after the 2 row layers, backward after the 2 column layers'
    // input gradients) becomes a reduce-scatter of the same bytes.
    EXPECT_EQ(CollectiveCalls((*plain)->report()),
              (std::map<CollectiveKey, int64_t>{
                  {{"ALL_REDUCE", kActivationBytes, tp}, 4 * steps}}));
    EXPECT_EQ(got.at({"REDUCE_SCATTER", kActivationBytes, tp}), 4 * steps);
    EXPECT_EQ(got.count({"ALL_REDUCE", kActivationBytes, tp}), 0u);
    // All-gathers of the whole activation: forward before the 2 column
    // layers and the replicated head; backward the 2 row layers' output
    // gradients, the 2 column layers' inputs again (their weight gradients:
    // Megatron keeps only the shard) and the embeddings' gradient (the
    // backward of Megatron's scatter after the embeddings).
    EXPECT_EQ(got.at({"ALL_GATHER", kActivationBytes, tp}), 8 * steps);
    // Sums over each rank's tokens, all-reduced on the tensor-parallel
    // group: the 3 layer norms' weight and bias gradients and the 2 row
    // layers' bias gradients (256 floats), and the position embedding's
    // gradient (32 positions x 256 floats; Megatron gathers the gradient
    // before the embeddings instead).
    EXPECT_EQ(got.at({"ALL_REDUCE", 256 * 4, tp}), 8 * steps);
    EXPECT_EQ(got.at({"ALL_REDUCE", 32 * 256 * 4, tp}), 1 * steps);
    EXPECT_EQ(got.size(), 4u);
  }
}

// The most activation bytes (the memory model's kind: made by the forward
// pass, used by the backward pass) held at once on the rank.
int64_t ActivationHighWater(const et::sim::Simulation& s) {
  const std::vector<et::StorageLife>* lives =
      s.MemoryLivesOf(s.classes()[0].program);
  EXPECT_NE(lives, nullptr);
  if (lives == nullptr) return 0;
  std::map<et::NodeIndex, int64_t> delta;
  for (const et::StorageLife& l : *lives) {
    if (l.persistent || l.kind != et::MemoryKind::kActivation) continue;
    delta[l.first] += l.bytes;
    delta[l.last + 1] -= l.bytes;
  }
  int64_t held = 0, most = 0;
  for (const auto& [node, change] : delta) {
    held += change;
    most = std::max(most, held);
  }
  return most;
}

TEST(TpSpTest, ActivationMemoryFollowsKorthikantisFormula) {
  auto one = RunLayout(GptBlock(), "dp=1", false);
  auto tp2 = RunLayout(GptBlock(), "tp=2", false);
  auto sp2 = RunLayout(GptBlock(), "tp=2", true);
  auto sp4 = RunLayout(GptBlock(), "tp=4", true);
  ASSERT_TRUE(one.ok() && tp2.ok() && sp2.ok() && sp4.ok());
  const int64_t a1 = ActivationHighWater(**one);
  const int64_t at2 = ActivationHighWater(**tp2);
  const int64_t as2 = ActivationHighWater(**sp2);
  const int64_t as4 = ActivationHighWater(**sp4);
  std::printf(
      "activations held at most: tp=1 %lld, tp=2 %lld, tp=2+sp %lld, "
      "tp=4+sp %lld bytes\n",
      static_cast<long long>(a1), static_cast<long long>(at2),
      static_cast<long long>(as2), static_cast<long long>(as4));
  // Korthikanti et al. 2022 (section 4.2.2): with tensor and sequence
  // parallelism every activation of a layer is 1/t of the unsplit layer's,
  // sbh(34/t + 5as/(ht)). Outside the layer (the embeddings, the replicated
  // head and loss) nothing is split, so the activations at tp=t with
  // sequence parallelism are L/t + C: fit L and C on t = 2 and 4, and tp=1
  // must be L + C.
  const double layer = 4.0 * static_cast<double>(as2 - as4);
  const double outside = static_cast<double>(as2) - layer / 2;
  std::printf("fit: layer %.0f bytes, outside the layer %.0f bytes\n", layer,
              outside);
  EXPECT_NEAR(layer + outside, static_cast<double>(a1), 0.02 * a1);
  EXPECT_GT(outside, 0);
  EXPECT_LT(outside, 0.5 * layer);
  // Tensor parallelism alone leaves the norms' inputs and the column layers'
  // inputs whole: sbh(10 + 24/t + 5as/(ht)), 0.65 of the layer at t=2 with
  // the paper's fp16 and dropout masks (this block: float32, no dropout).
  const double tp_share = (static_cast<double>(at2) - outside) / layer;
  std::printf("tp=2 without sequence parallelism: %.3f of the layer\n",
              tp_share);
  EXPECT_NEAR(tp_share, (10.0 + 24.0 / 2) / 34.0, 0.1);
  EXPECT_LT(as2, at2);
}

TEST(TpSpTest, TheWrittenJobNamesTheTpGroupOfEveryGatherAndScatter) {
  auto job = et::testing::RunLayoutJob(GptBlock(), Options("tp=2,dp=2", true));
  ASSERT_TRUE(job.ok()) << job.status();
  auto graph = job->rank_graph(3);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const int64_t steps = job->sim->report().step.steps;
  // comm type -> nodes on {2, 3}
  auto by_group = et::testing::CollectivesByGroup(**graph);
  const std::vector<int64_t> tp_pair = {2, 3};
  EXPECT_EQ((by_group[{tp_pair, ChakraProtoMsg::ALL_GATHER}]), 8 * steps);
  EXPECT_EQ((by_group[{tp_pair, ChakraProtoMsg::REDUCE_SCATTER}]), 4 * steps);
}

TEST(TpSpTest, SequenceParallelismNeedsASplitTp) {
  auto no_tp = RunLayout(GptBlock(), "dp=2", true);
  ASSERT_FALSE(no_tp.ok());
  EXPECT_TRUE(absl::StrContains(no_tp.status().message(),
                                "--sequence-parallel needs tp > 1"))
      << no_tp.status();
  // A trace recorded at tp=2 kept at tp=2: nothing is split to add it to.
  auto kept = RunLayout(RecordedTp2(), "tp=2", true);
  ASSERT_FALSE(kept.ok());
  EXPECT_TRUE(absl::StrContains(kept.status().message(),
                                "the trace records this tp and the layout "
                                "keeps it"))
      << kept.status();
}

// The Megatron MLP recorded at tp=2 (tests/data/tp-synth, 2 pairs of 256 ->
// 512 -> 256, batch 16, float32) re-split to tp=4 with sequence parallelism
// against its one-rank recording split to tp=4 with it: the same
// collectives, and the same memory but for what the memory model already
// tells apart between the two files at tp=4 without it.
TEST(TpSpTest, ReSplitTp2ToTp4MatchesTheOneRankSplit) {
  const std::string one = et::testing::ConvertRecording("tp-synth", "tpmlp1");
  auto resplit = RunLayout(RecordedTp2(), "tp=4", true);
  auto split = RunLayout(one, "tp=4", true);
  auto resplit_plain = RunLayout(RecordedTp2(), "tp=4", false);
  auto split_plain = RunLayout(one, "tp=4", false);
  ASSERT_TRUE(resplit.ok()) << resplit.status();
  ASSERT_TRUE(split.ok() && resplit_plain.ok() && split_plain.ok());
  const et::sim::Report& r = (*resplit)->report();
  EXPECT_TRUE(et::testing::HasNoteWith(
      r, {"re-split from the recorded tp=2",
          "its 6 all-reduces of partial sums kept as reduce-scatters",
          "sequence parallelism"}))
      << r.notes.size();
  const int64_t steps = r.step.steps;
  EXPECT_EQ(steps, (*split)->report().step.steps);
  // Per step, on the group of 4: the recorded 3 all-reduces (2 row layers
  // forward, the second column layer's input gradient) as reduce-scatters of
  // the 16 x 256 float32 activation; all-gathers of it before the second
  // column layer, its input again for its weight gradient, and the 2 row
  // layers' output gradients (the first column layer reads the batch, whole
  // on every rank); the 2 row layers' bias gradients (256 floats, sums over
  // the rank's tokens) all-reduced; and the loss (one float) gathered for
  // its backward.
  constexpr uint64_t kActivation = 16 * 256 * 4;
  const std::map<CollectiveKey, int64_t> want = {
      {{"REDUCE_SCATTER", kActivation, 4}, 3 * steps},
      {{"ALL_GATHER", kActivation, 4}, 4 * steps},
      {{"ALL_REDUCE", 256 * 4, 4}, 2 * steps},
      {{"ALL_GATHER", 4, 4}, 1 * steps}};
  EXPECT_EQ(CollectiveCalls(r), want);
  EXPECT_EQ(CollectiveCalls((*split)->report()), want);

  // Memory: the peak per rank, and the activations held at most, differ
  // between the two files with sequence parallelism no more than without it
  // (the two recordings are not one run: their temporaries differ by a few
  // bytes). Today both peaks are the optimizer's, with no activation held.
  auto peak = [](const et::sim::Simulation& s) {
    return s.report().ranks[0].memory->peak_bytes;
  };
  for (const auto* s : {&*resplit, &*split, &*resplit_plain, &*split_plain})
    ASSERT_TRUE((*s)->report().ranks[0].memory.has_value());
  const int64_t sp_gap = peak(**resplit) - peak(**split);
  const int64_t plain_gap = peak(**resplit_plain) - peak(**split_plain);
  const int64_t act_sp_gap =
      ActivationHighWater(**resplit) - ActivationHighWater(**split);
  const int64_t act_plain_gap =
      ActivationHighWater(**resplit_plain) - ActivationHighWater(**split_plain);
  std::printf(
      "tp=4 peak: re-split %lld, one-rank split %lld with sequence "
      "parallelism (gap %lld), gap %lld without; activations held at most: "
      "re-split %lld (%lld without), one-rank %lld (gap %lld), gap %lld "
      "without\n",
      static_cast<long long>(peak(**resplit)),
      static_cast<long long>(peak(**split)), static_cast<long long>(sp_gap),
      static_cast<long long>(plain_gap),
      static_cast<long long>(ActivationHighWater(**resplit)),
      static_cast<long long>(ActivationHighWater(**resplit_plain)),
      static_cast<long long>(ActivationHighWater(**split)),
      static_cast<long long>(act_sp_gap),
      static_cast<long long>(act_plain_gap));
  EXPECT_LE(std::abs(sp_gap), std::abs(plain_gap));
  EXPECT_LE(std::abs(act_sp_gap), std::abs(act_plain_gap));
  // Sequence parallelism holds fewer activations on the re-split rank too.
  EXPECT_LT(ActivationHighWater(**resplit),
            ActivationHighWater(**resplit_plain));
}

// A trace that records sequence parallelism already is refused: the tp=2
// recording with one of its tp all-reduces recorded as a reduce-scatter
// (torch 1.13's gloo has no reduce_scatter to record a real one with).
TEST(TpSpTest, ARecordedSequenceParallelSplitIsRefused) {
  auto graph = et::LoadGraph(RecordedTp2());
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<ChakraProtoMsg::Node> nodes = graph->nodes();
  std::string group;
  for (ChakraProtoMsg::Node& n : nodes) {
    if (n.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    group = et::GetString(n, et::attr::kPgName).value_or("");
    et::SetInt64(n.mutable_attr(), et::attr::kCommType,
                 ChakraProtoMsg::REDUCE_SCATTER);
    break;
  }
  ASSERT_FALSE(group.empty());
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/", getpid(), "_tpsp_recorded.et");
  ASSERT_TRUE(
      et::SaveGraph(et::Graph::Build(graph->metadata(), std::move(nodes)), path)
          .ok());
  auto sim = RunLayout(path, "tp=4", true);
  ASSERT_FALSE(sim.ok());
  const std::string message(sim.status().message());
  EXPECT_TRUE(absl::StrContains(
      message, absl::StrCat("the trace records sequence parallelism already (1 "
                            "reduce-scatters on its tp=2 group '",
                            group, "')")))
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  // Without --sequence-parallel the re-split runs, the reduce-scatter kept.
  EXPECT_TRUE(RunLayout(path, "tp=4", false).ok());
}

}  // namespace
