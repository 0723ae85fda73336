// Megatron-LM's interleaved 1F1B (--pp-schedule interleaved:V) and a
// user-given split (--pp-split) of pipeline stages synthesized from the
// one-rank recording of tests/data/pp-gpt (a 4-block GPT stack, 4
// micro-batches of gradient accumulation; README) and, when present, the
// H100 GPT-2 of ../shared/traces (12 blocks). Checked: the repeated blocks
// found; the chunks (rank s holding chunks s, s + P, ...); 2 (P V - 1) M
// sends and receives, each tag once per pair of ranks; the simulated bubble
// against Narayanan et al.'s (P-1)/(V M) and below 1F1B's; the in-flight
// micro-batch chunks per rank (Megatron-LM's warm-up + 1) and rank 0's
// activations against Korthikanti et al.'s (1 + (P-1)/(P V)) times 1F1B's;
// the written ranks under ASTRA-sim's issue rules (and the refusal where
// collectives inside a pass would deadlock there); on GPT-2 small, the
// head's chunk making equal chunks slower than 1F1B's balanced cut; --pp-split
// moving time and memory to the stage given more blocks, its default the
// balanced cut; the refusals naming the counts.
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "scaleout/parallel_layout.h"
#include "simulator/et_sim_command.h"
#include "simulator/simulation.h"
#include "tests/simulator/layout_fixture.h"

namespace {

using et::scaleout::PpSchedule;
using et::sim::Simulation;

std::string OneRank() {
  return et::testing::ConvertRecording("pp-gpt", "gpt1");
}

struct PpRun {
  std::string layout = "pp=2";
  int64_t micro_batches = 8;
  PpSchedule schedule = PpSchedule::k1F1B;
  int64_t chunks = 1;
  std::vector<int64_t> split;
};

absl::StatusOr<std::unique_ptr<Simulation>> Simulate(const std::string& path,
                                                     const PpRun& run) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout(run.layout);
  options.micro_batches = run.micro_batches;
  options.pp_schedule = run.schedule;
  options.pp_chunks = run.chunks;
  options.pp_split = run.split;
  return Simulation::Run({path, 0}, options);
}

std::unique_ptr<Simulation> MustRun(const std::string& path, const PpRun& run) {
  auto sim = Simulate(path, run);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? std::move(*sim) : nullptr;
}

PpRun Interleaved(int64_t v, int64_t mb = 8, std::string layout = "pp=2",
                  std::vector<int64_t> split = {}) {
  return {layout, mb, PpSchedule::kInterleaved, v, split};
}

PpRun OneFOneB(std::string layout, int64_t mb,
               std::vector<int64_t> split = {}) {
  return {layout, mb, PpSchedule::k1F1B, 1, split};
}

// Megatron-LM's warm-up forwards + 1: the micro-batch chunks stage s holds
// at most (all M V when M = P).
int64_t MegatronInFlight(int64_t pp, int64_t mb, int64_t v, int64_t s) {
  if (mb == pp) return mb * v;
  return std::min(mb * v, 2 * (pp - s - 1) + (v - 1) * pp + 1);
}

TEST(PpInterleaved, FindsTheFourBlocks) {
  auto sim = MustRun(OneRank(), Interleaved(2));
  ASSERT_NE(sim, nullptr);
  const auto& plan = sim->pipeline()->plan;
  // The two embeddings, 4 blocks of 6 layers (layer_norm, QKV, output
  // projection, layer_norm, the MLP's two linears), the final norm and head.
  ASSERT_EQ(plan.blocks.first_layer.size(), 4u);
  EXPECT_EQ(plan.blocks.layers_per_block, 6);
  EXPECT_EQ(plan.blocks.prefix_layers, 2);
  EXPECT_EQ(plan.layers[plan.blocks.first_layer[0]].first_op,
            "aten::layer_norm");
  // 4 chunks of one block: rank 0 holds the embeddings and block 0, and
  // block 2; rank 1 blocks 1 and 3 with the head.
  ASSERT_EQ(plan.chunks.size(), 4u);
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_EQ(plan.chunks[c].stage, c % 2);
    EXPECT_EQ(plan.chunks[c].index, c / 2);
    EXPECT_EQ(plan.chunks[c].first_layer,
              c == 0 ? 0 : plan.blocks.first_layer[c]);
    EXPECT_EQ(plan.chunks[c].last_layer,
              c == 3 ? static_cast<int64_t>(plan.layers.size()) - 1
                     : plan.blocks.first_layer[c] + 5);
    // Every boundary sends a micro-batch's hidden state (2 x 64 x 128
    // float32: the recorded micro-batch of 4 at M = 8 is half of one).
    EXPECT_EQ(plan.chunks[c].send_bytes, c == 3 ? 0 : 2 * 64 * 128 * 4);
  }
}

TEST(PpInterleaved, BubbleNearNarayanansAndBelowOneFOneB) {
  for (int64_t mb : {4, 8}) {
    SCOPED_TRACE(mb);
    auto f1b = MustRun(OneRank(), OneFOneB("pp=2", mb));
    auto inter = MustRun(OneRank(), Interleaved(2, mb));
    ASSERT_NE(f1b, nullptr);
    ASSERT_NE(inter, nullptr);
    const auto& p = *inter->pipeline();
    EXPECT_DOUBLE_EQ(p.plan.analytic_bubble_ratio, 1.0 / (2.0 * mb));
    EXPECT_DOUBLE_EQ(p.plan.analytic_bubble, 1.0 / (2.0 * mb + 1));
    // The simulated idle over compute time against (P-1)/(V M): within 5
    // points (the 4 chunks are not equal: the embeddings and the head ride
    // with the first and last).
    EXPECT_NEAR(p.bubble_ratio, p.plan.analytic_bubble_ratio, 0.05)
        << "simulated " << p.bubble_ratio;
    EXPECT_NEAR(p.bubble_ratio, p.bubble / (1 - p.bubble), 1e-12);
    // Half 1F1B's bubble, as V = 2 promises, less what the twice as many
    // sends cost.
    EXPECT_LT(p.bubble, f1b->pipeline()->bubble);
    EXPECT_LT(p.pipeline_ns, f1b->pipeline()->pipeline_ns);
    // Twice 1F1B's messages: every chunk boundary, 2 (P V - 1) M.
    EXPECT_EQ(p.sends, 2 * 3 * mb);
    EXPECT_EQ(p.recvs, 2 * 3 * mb);
    EXPECT_EQ(f1b->pipeline()->sends, 2 * 1 * mb);
  }
}

TEST(PpInterleaved, InFlightChunksAsMegatron) {
  for (int64_t mb : {2, 4, 8}) {
    SCOPED_TRACE(mb);
    auto f1b = MustRun(OneRank(), OneFOneB("pp=2", mb));
    auto inter = MustRun(OneRank(), Interleaved(2, mb));
    ASSERT_NE(f1b, nullptr);
    ASSERT_NE(inter, nullptr);
    const auto& plan = inter->pipeline()->plan;
    for (int64_t s = 0; s < 2; ++s)
      EXPECT_EQ(plan.stages[s].in_flight, MegatronInFlight(2, mb, 2, s));
    // Rank 0's activations at its peak, each 1/M of the batch's, when M >
    // P: at the forward of micro-batch 3 through chunk 0 it holds micro-
    // batches 0-3 through chunk 0 and 1 through chunk 1 (micro-batch 0's
    // chunk-1 backward has run): 5 passes, Megatron's warm-up + 1.
    const auto& c = plan.chunks;
    auto stash = [&](int64_t k) {
      return (c[k].activation_bytes + mb - 1) / mb;
    };
    const int64_t held =
        plan.stages[0]
            .peak_parts[static_cast<int>(et::MemoryKind::kActivation)];
    if (mb > 2) {
      EXPECT_EQ(held, 4 * stash(0) + stash(2));
      // Korthikanti et al. 2022: the first stage holds (1 + (P-1)/(P V))
      // times 1F1B's P micro-batches, 1.25 here, up to the chunks'
      // imbalance (the embeddings' activations ride with chunk 0).
      const double f1b_held = static_cast<double>(
          f1b->pipeline()->plan.stages[0].peak_parts[static_cast<int>(
              et::MemoryKind::kActivation)]);
      EXPECT_NEAR(static_cast<double>(held) / f1b_held, 1.25, 0.1)
          << held << " vs 1f1b " << f1b_held;
    } else {
      // M = P: every forward first, all 4 chunk passes of both.
      EXPECT_EQ(held, 2 * stash(0) + 2 * stash(2));
    }
    EXPECT_EQ(inter->report().ranks[0].memory->peak_bytes,
              plan.stages[0].peak_bytes);
  }
}

TEST(PpInterleaved, WrittenRanksRunUnderAstraSimsIssueRules) {
  // pp=2 x dp=2, interleaved:2, under --schedule astra (receives posted
  // after the previous pass, as 1F1B's): every send's (sender, receiver,
  // tag) is one receive's, once; the last stage's sends to the first (the
  // wrap to the next chunk) among them; the written job read back runs the
  // predicted step.
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/", getpid(), "_ppint_astra");
  et::sim::EtSimFlags flags;
  flags.positional = {"et-sim", OneRank()};
  flags.layout = "pp=2,dp=2";
  flags.micro_batches = 4;
  flags.pp_schedule = "interleaved:2";
  flags.schedule = "astra";
  flags.write_ranks = dir;
  auto predicted_us = et::testing::WriteRanksQuietly(flags);
  ASSERT_TRUE(predicted_us.ok()) << predicted_us.status();
  et::testing::PointToPointMessages messages;
  int64_t wraps = 0;
  for (int64_t rank = 0; rank < 4; ++rank) {
    auto model =
        et::NodeModel::Load(et::testing::WrittenRank(dir, OneRank(), rank));
    ASSERT_TRUE(model.ok()) << model.status();
    messages.Add(*model, rank);
    int64_t sends = 0;
    for (et::NodeIndex i = 0; i < model->size(); ++i) {
      if (model->kind(i) != et::NodeKind::kSend) continue;
      ++sends;
      // Stage 1 (ranks 2, 3) sends activations to stage 0 only across the
      // wrap, chunk 1 to chunk 2.
      if (rank >= 2 && absl::StrContains(model->name(i), "act")) ++wraps;
    }
    // Per micro-batch: rank 0 sends chunk 0's and chunk 2's activations and
    // chunk 2's gradient; rank 1 chunk 1's activations and gradient and
    // chunk 3's gradient: 3 each.
    EXPECT_EQ(sends, 3 * 4) << "rank " << rank;
  }
  EXPECT_EQ(wraps, 2 * 4);
  et::testing::ExpectEachSendReceivedOnce(messages);
  et::sim::SimOptions options;
  options.scheduling = et::sim::SchedulingMode::kAstraCompat;
  et::testing::ExpectWrittenJobRunsTheStep(flags, 4, options, *predicted_us);
  // With tensor parallelism's all-reduces inside each pass the interleaved
  // order and ASTRA-sim's one-op-at-a-time rule wait on each other: refused
  // in one line naming the collective, not run into a deadlock.
  flags.layout = "tp=2,pp=2,dp=2";
  flags.write_ranks.clear();
  et::sim::EtSimOutput output;
  const absl::Status tp = et::testing::RunEtSimQuietly(flags, &output);
  ASSERT_FALSE(tp.ok());
  const std::string message(tp.message());
  EXPECT_TRUE(absl::StrContains(message, "--schedule astra")) << message;
  EXPECT_TRUE(absl::StrContains(message, "deadlock")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(PpSplit, UnevenSplitMovesTimeAndMemory) {
  auto front = MustRun(OneRank(), OneFOneB("pp=2", 4, {3, 1}));
  auto back = MustRun(OneRank(), OneFOneB("pp=2", 4, {1, 3}));
  auto even = MustRun(OneRank(), OneFOneB("pp=2", 4, {2, 2}));
  auto balanced = MustRun(OneRank(), OneFOneB("pp=2", 4));
  ASSERT_NE(front, nullptr);
  ASSERT_NE(back, nullptr);
  ASSERT_NE(even, nullptr);
  ASSERT_NE(balanced, nullptr);
  const auto& f = front->pipeline()->plan.stages;
  const auto& b = back->pipeline()->plan.stages;
  // 3,1: stage 0 the embeddings and blocks 0-2 (2 + 18 layers); 1,3:
  // the embeddings and block 0.
  EXPECT_EQ(f[0].last_layer, 19);
  EXPECT_EQ(b[0].last_layer, 7);
  // Stage 0 takes three blocks' time and memory from stage 1 and back.
  auto t = [](const et::scaleout::PipelineStage& st) {
    return st.forward_ns + st.backward_ns;
  };
  EXPECT_GT(t(f[0]), t(b[0]));
  EXPECT_LT(t(f[1]), t(b[1]));
  EXPECT_GT(t(f[0]), t(f[1]));
  EXPECT_LT(t(b[0]), t(b[1]));
  EXPECT_GT(f[0].persistent_bytes, b[0].persistent_bytes);
  EXPECT_LT(f[1].persistent_bytes, b[1].persistent_bytes);
  EXPECT_GT(f[0].peak_bytes, b[0].peak_bytes);
  EXPECT_LT(f[1].peak_bytes, b[1].peak_bytes);
  // Either uneven split runs slower than the even one.
  const int64_t even_ns = even->pipeline()->pipeline_ns;
  EXPECT_GT(front->pipeline()->pipeline_ns, even_ns);
  EXPECT_GT(back->pipeline()->pipeline_ns, even_ns);
  // The default (balanced by time) is today's cut, 2,2 here (the real run's:
  // the embeddings and blocks 0-1), and the same step.
  const auto& d = balanced->pipeline()->plan.stages;
  const auto& e = even->pipeline()->plan.stages;
  EXPECT_EQ(d[0].last_layer, 13);
  EXPECT_EQ(e[0].last_layer, d[0].last_layer);
  EXPECT_EQ(e[0].peak_bytes, d[0].peak_bytes);
  EXPECT_EQ(e[1].peak_bytes, d[1].peak_bytes);
  EXPECT_DOUBLE_EQ(even->report().step.predicted_us,
                   balanced->report().step.predicted_us);
}

TEST(PpSplit, RefusalsNameTheCounts) {
  auto message = [](const PpRun& run) {
    auto sim = Simulate(OneRank(), run);
    EXPECT_FALSE(sim.ok());
    const std::string text(sim.ok() ? "" : sim.status().message());
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    return text;
  };
  const std::string sum = message(OneFOneB("pp=2", 4, {1, 2}));
  EXPECT_TRUE(absl::StrContains(sum, "--pp-split 1,2 counts 3 blocks")) << sum;
  EXPECT_TRUE(absl::StrContains(sum, "has 4")) << sum;
  EXPECT_TRUE(absl::StrContains(sum, "6 layers from aten::layer_norm")) << sum;
  const std::string entries = message(OneFOneB("pp=2", 4, {1, 1, 2}));
  EXPECT_TRUE(absl::StrContains(entries, "has 3 entries: pp=2 needs 2"))
      << entries;
  const std::string zero = message(OneFOneB("pp=2", 4, {0, 4}));
  EXPECT_TRUE(absl::StrContains(zero, "stage 0 gets 0 blocks")) << zero;
  // Interleaved: 4 blocks in 6 chunks, and M not a multiple of P.
  const std::string chunks = message(Interleaved(3, 4));
  EXPECT_TRUE(absl::StrContains(chunks, "pp x V = 6 equal chunks")) << chunks;
  EXPECT_TRUE(absl::StrContains(chunks, "has 4 blocks")) << chunks;
  const std::string odd = message(Interleaved(2, 3));
  EXPECT_TRUE(absl::StrContains(odd, "--micro-batches 3 on pp=2")) << odd;
  // An interleaved split counts per chunk.
  auto chunked = Simulate(OneRank(), Interleaved(2, 4, "pp=2", {1, 1, 1, 1}));
  EXPECT_TRUE(chunked.ok()) << chunked.status();
  // Without a pipeline to split, the flag is refused, not ignored.
  et::sim::EtSimFlags flags;
  flags.positional = {"et-sim", OneRank()};
  flags.layout = "dp=2";
  flags.pp_split = "2,2";
  et::sim::EtSimOutput output;
  const absl::Status no_pp = et::testing::RunEtSimQuietly(flags, &output);
  EXPECT_TRUE(absl::StrContains(no_pp.message(), "needs --layout with pp >= 2"))
      << no_pp;
  const std::string per_stage = message(Interleaved(2, 4, "pp=2", {2, 2}));
  EXPECT_TRUE(absl::StrContains(per_stage, "one per model chunk")) << per_stage;
}

TEST(PpInterleaved, H100Gpt2TwelveBlocks) {
  const std::string dir = std::string(ET_SHARED_TRACES) + "/h100/";
  if (access((dir + "gpt2_et.json.gz").c_str(), R_OK) != 0)
    GTEST_SKIP() << "no " << dir << "gpt2_et.json.gz";
  const std::string gpt2 = et::testing::ConvertTrace(
      dir + "gpt2_et.json.gz", dir + "gpt2_kineto.json.gz");
  auto f1b = MustRun(gpt2, OneFOneB("pp=4", 8));
  auto inter = MustRun(gpt2, Interleaved(3, 8, "pp=4"));
  ASSERT_NE(f1b, nullptr);
  ASSERT_NE(inter, nullptr);
  const auto& p = *inter->pipeline();
  EXPECT_EQ(p.plan.blocks.first_layer.size(), 12u);
  EXPECT_EQ(p.plan.chunks.size(), 12u);
  // GPT-2 small's head (768 x 50257) and loss cost about 7 blocks: the
  // last chunk (block 11, the final norm, the head) takes 1.7 ms a
  // micro-batch against 0.23 for the others, rank 3 twice the mean. Equal
  // chunks of blocks then lose to 1F1B's cut balanced by time (19.0 against
  // 14.9 ms); the simulated bubble follows the estimate for these chunks,
  // M max T_s + (P-1) max t_c (55.0% against 61.6%).
  EXPECT_GT(p.plan.imbalance, 1.9);
  EXPECT_GT(p.pipeline_ns, f1b->pipeline()->pipeline_ns);
  EXPECT_NEAR(p.bubble, p.plan.staged_bubble, 0.08)
      << "simulated " << p.bubble << " estimate " << p.plan.staged_bubble;
  for (int64_t s = 0; s < 4; ++s)
    EXPECT_EQ(p.plan.stages[s].in_flight, MegatronInFlight(4, 8, 3, s));
}

}  // namespace
