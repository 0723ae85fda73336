// Pipeline parallelism synthesized from a one-rank trace (scaleout/
// pipeline_plan.h, pipeline_schedule.h; et-sim --layout pp=P): on the CPU
// corpus's GPT block, tests/data/tp-synth's Megatron MLP and, when present,
// the H100 GPT-2 of ../shared/traces. The simulated bubble against the
// analytic (P-1)/(M+P-1) for balanced stages and against the same formula
// for the stages found; 2 (P-1) M sends and receives per step of the
// boundary activation's bytes; 1F1B holding fewer micro-batches' activations
// than GPipe; the stages' time adding up to the one-rank step; pp=1 changing
// nothing; the refusals naming what the trace lacks.
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
#include "simulator/layout_sweep.h"
#include "simulator/simulation.h"
#include "tests/simulator/layout_fixture.h"

namespace {

using et::sim::Simulation;

using et::testing::ConvertTrace;

std::string Gpt() {
  return et::testing::ConvertRecording("cpu-corpus", "cpu_gpt_w64");
}

std::string TpMlp() {
  return et::testing::ConvertRecording("tp-synth", "tpmlp1");
}

absl::StatusOr<std::unique_ptr<Simulation>> RunPipeline(
    const std::string& path, const std::string& layout, int64_t micro_batches,
    et::scaleout::PpSchedule schedule = et::scaleout::PpSchedule::k1F1B) {
  et::sim::SimOptions options;
  if (!layout.empty()) options.layout = *et::scaleout::ParseLayout(layout);
  options.micro_batches = micro_batches;
  options.pp_schedule = schedule;
  return Simulation::Run({path, 0}, options);
}

std::unique_ptr<Simulation> MustRun(
    const std::string& path, const std::string& layout, int64_t micro_batches,
    et::scaleout::PpSchedule schedule = et::scaleout::PpSchedule::k1F1B) {
  auto sim = RunPipeline(path, layout, micro_batches, schedule);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? std::move(*sim) : nullptr;
}

// Send/recv calls and the bytes of each in the report's collective table.
struct PointToPoint {
  int64_t calls = 0;
  std::vector<uint64_t> bytes;
};
PointToPoint SendsOf(const et::sim::Report& r) {
  PointToPoint out;
  for (const et::sim::CollectiveRow& c : r.collectives) {
    if (c.group != et::scaleout::kPpGroupName) continue;
    out.calls += c.calls;
    out.bytes.push_back(c.bytes);
  }
  std::sort(out.bytes.begin(), out.bytes.end());
  return out;
}

// Checks every pipeline the tests run share: the bubble against the
// formula for its stages, the sends, the 1F1B in-flight counts.
void ExpectConsistentPipeline(const Simulation& sim, int64_t pp, int64_t mb) {
  ASSERT_TRUE(sim.pipeline().has_value());
  const Simulation::PipelineResult& p = *sim.pipeline();
  ASSERT_EQ(p.plan.stages.size(), static_cast<size_t>(pp));
  EXPECT_DOUBLE_EQ(
      p.plan.analytic_bubble,
      static_cast<double>(pp - 1) / static_cast<double>(mb + pp - 1));
  // The simulated bubble is the formula's for these stages plus what the
  // sends cost: within 4 points on these traces (a receive is posted when
  // the stage's previous forward or backward is done, as Megatron-LM posts
  // it, so a transfer does not overlap the receiver's compute: 3.4 points on
  // the H100 GPT-2, 1.3 on the GPT block).
  EXPECT_NEAR(p.bubble, p.plan.staged_bubble, 0.04)
      << "simulated " << p.bubble << " formula " << p.plan.staged_bubble;
  EXPECT_GE(p.bubble, p.plan.staged_bubble - 0.005);
  EXPECT_EQ(p.sends, 2 * (pp - 1) * mb);
  EXPECT_EQ(p.recvs, 2 * (pp - 1) * mb);
  const PointToPoint sends = SendsOf(sim.report());
  EXPECT_EQ(sends.calls, 2 * (pp - 1) * mb);
  // Each boundary's activation and its gradient: the same bytes, the
  // stage's send_bytes.
  std::vector<uint64_t> expected;
  int64_t total = 0;
  for (int64_t s = 0; s + 1 < pp; ++s) {
    const auto& st = p.plan.stages[s];
    EXPECT_GT(st.send_bytes, 0) << "stage " << s;
    expected.push_back(static_cast<uint64_t>(st.send_bytes));
    total += 2 * mb * st.send_bytes;
  }
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  EXPECT_EQ(sends.bytes, expected);
  EXPECT_EQ(p.send_bytes, total);
  for (int64_t s = 0; s < pp; ++s) {
    const auto& st = p.plan.stages[s];
    EXPECT_EQ(st.in_flight,
              p.plan.options.schedule == et::scaleout::PpSchedule::kGpipe
                  ? mb
                  : std::min(mb, pp - s));
    if (s > 0) {
      EXPECT_EQ(st.first_layer, p.plan.stages[s - 1].last_layer + 1);
    }
  }
  EXPECT_EQ(p.plan.stages.back().last_layer,
            static_cast<int64_t>(p.plan.layers.size()) - 1);
}

TEST(PpSynthTest, GptBlockTwoBalancedStagesBubbleNearTheAnalytic) {
  auto sim = MustRun(Gpt(), "pp=2", 8);
  ASSERT_NE(sim, nullptr);
  ExpectConsistentPipeline(*sim, 2, 8);
  const auto& p = *sim->pipeline();
  // Balanced within 5%: the bubble is (P-1)/(M+P-1) within 4 points (3.6:
  // the stages' imbalance and the exposed transfers).
  EXPECT_LT(p.plan.imbalance, 1.05);
  EXPECT_NEAR(p.bubble, p.plan.analytic_bubble, 0.04);
  // The cut after the MLP's residual add sends the hidden state: the
  // batch's first layer_norm input (16 x 32 x 64 float32), per micro-batch.
  const auto& st0 = p.plan.stages[0];
  EXPECT_EQ(p.plan.layers[st0.last_layer + 1].first_op, "aten::layer_norm");
  EXPECT_EQ(st0.send_bytes, 16 * 32 * 64 * 4 / 8);
  // The step holds the optimizer after the pipeline.
  EXPECT_GT(sim->report().step.predicted_us * 1000, p.pipeline_ns);
}

TEST(PpSynthTest, StagesAddUpToTheOneRankStep) {
  auto one = MustRun(Gpt(), "", 1);
  auto sim = MustRun(Gpt(), "pp=4", 4);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(sim, nullptr);
  ExpectConsistentPipeline(*sim, 4, 4);
  const auto& plan = sim->pipeline()->plan;
  // The last recorded step of the one-rank simulation, split into the
  // layers' forward and backward and the rest: nothing lost or counted
  // twice (within 2%).
  const double last_step_ns =
      one->report().step.ranks.front().step_us.back() * 1000;
  const double parts =
      static_cast<double>(plan.forward_ns + plan.backward_ns + plan.other_ns);
  EXPECT_NEAR(parts / last_step_ns, 1.0, 0.02)
      << parts << " vs " << last_step_ns;
  int64_t per_mb = 0;
  for (const auto& st : plan.stages) per_mb += st.forward_ns + st.backward_ns;
  EXPECT_NEAR(static_cast<double>(per_mb * 4),
              static_cast<double>(plan.forward_ns + plan.backward_ns),
              4.0 * 2 * 4);  // rounding of each stage's share to whole ns
}

TEST(PpSynthTest, OneFOneBHoldsFewerActivationsThanGpipe) {
  auto f1b = MustRun(Gpt(), "pp=4", 8);
  auto gpipe = MustRun(Gpt(), "pp=4", 8, et::scaleout::PpSchedule::kGpipe);
  ASSERT_NE(f1b, nullptr);
  ASSERT_NE(gpipe, nullptr);
  ExpectConsistentPipeline(*f1b, 4, 8);
  ExpectConsistentPipeline(*gpipe, 4, 8);
  const auto& a = f1b->pipeline()->plan.stages;
  const auto& b = gpipe->pipeline()->plan.stages;
  for (size_t s = 0; s < a.size(); ++s) {
    EXPECT_EQ(a[s].activation_bytes, b[s].activation_bytes);
    EXPECT_GT(a[s].activation_bytes, 0) << "stage " << s;
    // GPipe keeps M = 8 micro-batches' activations, 1F1B P - s.
    EXPECT_EQ(
        b[s].peak_bytes - a[s].peak_bytes,
        (b[s].in_flight - a[s].in_flight) * ((a[s].activation_bytes + 7) / 8))
        << "stage " << s;
    EXPECT_LT(a[s].peak_bytes, b[s].peak_bytes) << "stage " << s;
  }
  // The report's memory rows are the stages'.
  ASSERT_EQ(f1b->report().ranks.size(), 4u);
  for (size_t s = 0; s < 4; ++s) {
    ASSERT_TRUE(f1b->report().ranks[s].memory.has_value());
    EXPECT_EQ(f1b->report().ranks[s].memory->peak_bytes, a[s].peak_bytes);
  }
  // GPipe's forward-all-then-backward-all runs no faster than 1F1B here.
  EXPECT_GE(gpipe->pipeline()->pipeline_ns, f1b->pipeline()->pipeline_ns);
}

TEST(PpSynthTest, WithTensorAndDataParallelism) {
  // tp-synth's MLP: 3 tensor-parallel all-reduces per step, now one per
  // micro-batch at 1/M of the bytes; the gradient sync once per step, each
  // stage its own parameters'.
  auto tp = MustRun(TpMlp(), "tp=2,dp=2", 1);
  auto sim = MustRun(TpMlp(), "pp=2,tp=2,dp=2", 4);
  ASSERT_NE(tp, nullptr);
  ASSERT_NE(sim, nullptr);
  ExpectConsistentPipeline(*sim, 2, 4);
  EXPECT_EQ(sim->world_size(), 8);
  // (calls, bytes) on the tensor- and data-parallel groups.
  auto count = [](const et::sim::Report& r, absl::string_view group) {
    std::pair<int64_t, int64_t> out;
    for (const auto& c : r.collectives) {
      if (!absl::StartsWith(c.group, group)) continue;
      out.first += c.calls;
      out.second += static_cast<int64_t>(c.bytes) * c.calls;
    }
    return out;
  };
  const int64_t steps = tp->report().step.steps;
  const auto tp_one = count(tp->report(), "scaleout:tp");
  const auto tp_pp = count(sim->report(), "scaleout:tp");
  EXPECT_GT(tp_one.first, 0);
  EXPECT_EQ(tp_pp.first, tp_one.first / steps * 4);
  EXPECT_EQ(tp_pp.second, tp_one.second / steps);
  // Every bucket on both stages, each with its share of the bytes.
  const auto dp_one = count(tp->report(), "scaleout:dp");
  const auto dp_pp = count(sim->report(), "scaleout:dp");
  EXPECT_GT(dp_one.first, 0);
  EXPECT_EQ(dp_pp.first, dp_one.first / steps * 2);
  EXPECT_NEAR(static_cast<double>(dp_pp.second),
              static_cast<double>(dp_one.second / steps), 4.0);
}

TEST(PpSynthTest, PpOneChangesNothing) {
  for (const char* layout : {"tp=2", "dp=2"}) {
    std::string with, without;
    for (std::string* out : {&with, &without}) {
      et::sim::EtSimFlags flags;
      flags.positional = {"et-sim", Gpt()};
      flags.layout = out == &with ? absl::StrCat(layout, ",pp=1") : layout;
      if (out == &with) flags.micro_batches = 4;
      flags.json = true;
      et::sim::EtSimOutput output;
      output.print_out = [out](const std::string& t) { *out += t; };
      output.print_err = [out](const std::string& t) { *out += t; };
      ASSERT_TRUE(et::sim::RunEtSim(flags, &output).ok());
    }
    EXPECT_EQ(with, without) << layout;
    EXPECT_FALSE(absl::StrContains(with, "pipeline")) << layout;
  }
  // `--layout pp=1` against no layout: the same but for the layout's note
  // (which `--layout dp=1` prints too).
  std::string plain, pp1;
  for (std::string* out : {&plain, &pp1}) {
    et::sim::EtSimFlags flags;
    flags.positional = {"et-sim", Gpt()};
    if (out == &pp1) flags.layout = "pp=1";
    et::sim::EtSimOutput output;
    output.print_out = [out](const std::string& t) { *out += t; };
    output.print_err = [out](const std::string& t) { *out += t; };
    ASSERT_TRUE(et::sim::RunEtSim(flags, &output).ok());
  }
  const std::string note =
      "note: --layout dp=1: 1 ranks run this rank's trace, recorded as dp=1 "
      "(a one-rank trace)\n";
  const size_t at = pp1.find(note);
  ASSERT_NE(at, std::string::npos);
  pp1.erase(at, note.size());
  EXPECT_EQ(plain, pp1);
}

TEST(PpSynthTest, WritesEveryRankOfThePipeline) {
  // pp=2 x dp=2: ranks 0, 1 run stage 0 and 2, 3 stage 1 (pp outermost);
  // rank 1's pipeline is ranks 1 and 3.
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/", getpid(), "_ppsynth_job");
  et::sim::EtSimFlags flags;
  flags.positional = {"et-sim", Gpt()};
  flags.layout = "pp=2,dp=2";
  flags.micro_batches = 4;
  flags.write_ranks = dir;
  auto predicted_us = et::testing::WriteRanksQuietly(flags);
  ASSERT_TRUE(predicted_us.ok()) << predicted_us.status();
  // Each send's (sender, receiver, tag) is one receive's.
  et::testing::PointToPointMessages messages;
  for (int64_t rank = 0; rank < 4; ++rank) {
    auto model =
        et::NodeModel::Load(et::testing::WrittenRank(dir, Gpt(), rank));
    ASSERT_TRUE(model.ok()) << model.status();
    messages.Add(*model, rank);
    int64_t sends = 0, recvs = 0;
    int64_t last_send = -1;  // the send before, if it was the last p2p op
    for (et::NodeIndex i = 0; i < model->size(); ++i) {
      const et::NodeKind kind = model->kind(i);
      if (kind != et::NodeKind::kSend && kind != et::NodeKind::kRecv) continue;
      (kind == et::NodeKind::kSend ? sends : recvs) += 1;
      EXPECT_EQ(model->comm(i)->peer, rank < 2 ? rank + 2 : rank - 2)
          << "rank " << rank;
      if (kind == et::NodeKind::kSend) {
        last_send = static_cast<int64_t>(i);
        continue;
      }
      // ASTRA-sim (518bd51) lets a receive issue while a communication op is
      // in flight, but nothing else while a receive is: a receive posted
      // before the send ahead of it in the schedule is ready would keep that
      // send (and the peer waiting for it) from ever issuing. So a receive
      // waits for what the send before it waits for (the forward or
      // backward it follows), and has a higher id (ASTRA-sim issues the
      // lowest ready id first).
      if (last_send >= 0) {
        const auto recv_deps = model->data_deps(i);
        const auto send_deps =
            model->data_deps(static_cast<et::NodeIndex>(last_send));
        EXPECT_EQ(
            std::vector<et::NodeIndex>(recv_deps.begin(), recv_deps.end()),
            std::vector<et::NodeIndex>(send_deps.begin(), send_deps.end()))
            << "rank " << rank << " node " << model->id(i);
      }
      last_send = -1;  // the next receive may follow a backward alone
    }
    EXPECT_EQ(sends, 4);  // M = 4 to its one neighbour stage
    EXPECT_EQ(recvs, sends);
    EXPECT_EQ(model->counts().unknown_groups, 0);
  }
  et::testing::ExpectEachSendReceivedOnce(messages);
  // The written job, simulated as it is (each rank's times as written),
  // runs the predicted step.
  et::sim::SimOptions options;
  options.host_time = et::HostTimeMode::kRecorded;
  et::testing::ExpectWrittenJobRunsTheStep(flags, 4, options, *predicted_us);
}

TEST(PpSynthTest, RunsUnderAstraSimsIssueRules) {
  // --schedule astra: one communication op at a time per rank, a receive
  // issuing beside it (ASTRA-sim 518bd51's HardwareResource). With every
  // receive posted at the start, each stage with a send to make stalled
  // ("deadlock at t=835000 ns: ... message #0 from rank 0 to rank 256 ...");
  // posted after the previous forward or backward, the job runs to the end,
  // as it does written out and read back.
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/", getpid(), "_ppsynth_astra");
  et::sim::EtSimFlags flags;
  flags.positional = {"et-sim", Gpt()};
  flags.layout = "tp=2,pp=4,dp=2";
  flags.micro_batches = 4;
  flags.schedule = "astra";
  flags.write_ranks = dir;
  auto predicted_us = et::testing::WriteRanksQuietly(flags);
  ASSERT_TRUE(predicted_us.ok()) << predicted_us.status();
  EXPECT_GT(*predicted_us, 0);
  et::sim::SimOptions options;
  options.scheduling = et::sim::SchedulingMode::kAstraCompat;
  et::testing::ExpectWrittenJobRunsTheStep(flags, 16, options, *predicted_us);
}

TEST(PpSynthTest, RefusesWhatTheTraceCannotGive) {
  // More stages than the MLP's layer blocks (its 4 linear layers, the
  // second pair's bias added after the all-reduce, and the first pair's).
  auto many = RunPipeline(TpMlp(), "pp=8", 4);
  ASSERT_FALSE(many.ok());
  EXPECT_TRUE(absl::StrContains(many.status().message(), "layer blocks: 6"))
      << many.status();
  // No micro-batch.
  auto none = RunPipeline(Gpt(), "pp=2", 0);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::StrContains(none.status().message(), "--micro-batches 0"))
      << none.status();
  // An inference trace (PARAM's PyTorch 2 ET: no backward op).
  const std::string pt2 = ConvertTrace(
      std::string(ET_TEST_DATA) + "/param/pt2_et.1.1.1.json.gz", "");
  auto inference = RunPipeline(pt2, "pp=2", 4);
  ASSERT_FALSE(inference.ok());
  EXPECT_TRUE(
      absl::StrContains(inference.status().message(), "has no backward ops"))
      << inference.status();
  // A trace with no training step at all.
  const std::string linear =
      ConvertTrace(std::string(ET_TEST_DATA) + "/param/linear_et.json.gz", "");
  auto stepless = RunPipeline(linear, "pp=2", 4);
  ASSERT_FALSE(stepless.ok());
  EXPECT_TRUE(
      absl::StrContains(stepless.status().message(), "no training step"))
      << stepless.status();
}

TEST(PpSynthTest, SweepsPipelineAndTensorParallelism) {
  et::sim::SimOptions base;
  base.micro_batches = 8;
  auto pp = et::sim::RunLayoutSweep({Gpt(), 0}, base,
                                    *et::scaleout::ParseSweep("pp=1,2,4"));
  ASSERT_TRUE(pp.ok()) << pp.status();
  ASSERT_EQ(pp->rows.size(), 3u);
  auto two = MustRun(Gpt(), "pp=2", 8);
  ASSERT_NE(two, nullptr);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(pp->rows[k].world, int64_t{1} << k);
  // The pp=2 point is the --layout pp=2 run; the stages' peaks fall with pp.
  EXPECT_DOUBLE_EQ(pp->rows[1].step_us, two->report().step.predicted_us);
  EXPECT_GT(pp->rows[0].peak_bytes, pp->rows[1].peak_bytes);
  auto tp = et::sim::RunLayoutSweep({TpMlp(), 0}, base,
                                    *et::scaleout::ParseSweep("tp=1,2"));
  ASSERT_TRUE(tp.ok()) << tp.status();
  ASSERT_EQ(tp->rows.size(), 2u);
  EXPECT_EQ(tp->rows[1].world, 2);
  EXPECT_EQ(tp->rows[1].groups.front().name.rfind("scaleout:tp", 0), 0u);
  EXPECT_LT(tp->rows[1].peak_bytes, tp->rows[0].peak_bytes);
  // Expert parallelism is not synthesized: refused before any point runs.
  EXPECT_FALSE(et::sim::RunLayoutSweep({Gpt(), 0}, base,
                                       *et::scaleout::ParseSweep("ep=1,2"))
                   .ok());
}

TEST(PpSynthTest, H100Gpt2FourStages) {
  const std::string dir = std::string(ET_SHARED_TRACES) + "/h100/";
  if (access((dir + "gpt2_et.json.gz").c_str(), R_OK) != 0)
    GTEST_SKIP() << "no " << dir << "gpt2_et.json.gz";
  const std::string gpt2 =
      ConvertTrace(dir + "gpt2_et.json.gz", dir + "gpt2_kineto.json.gz");
  auto f1b = MustRun(gpt2, "pp=4", 8);
  auto gpipe = MustRun(gpt2, "pp=4", 8, et::scaleout::PpSchedule::kGpipe);
  ASSERT_NE(f1b, nullptr);
  ASSERT_NE(gpipe, nullptr);
  ExpectConsistentPipeline(*f1b, 4, 8);
  const auto& plan = f1b->pipeline()->plan;
  // GPT-2 small: 12 blocks of 6 parameter layers, the two embeddings and
  // the final norm (the head's weight is the token embedding's).
  EXPECT_EQ(plan.layers.size(), 75u);
  for (size_t s = 0; s < 4; ++s) {
    EXPECT_LT(plan.stages[s].peak_bytes,
              gpipe->pipeline()->plan.stages[s].peak_bytes);
  }
  // The boundaries cut the bf16 residual stream or the wider MLP input:
  // multiples of the hidden state (batch x 1024 x 768 x 2 bytes / M).
  for (size_t s = 0; s + 1 < 4; ++s)
    EXPECT_EQ(plan.stages[s].send_bytes % (768 * 2), 0) << "stage " << s;
}

}  // namespace
