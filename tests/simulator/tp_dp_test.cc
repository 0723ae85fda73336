// Real tensor-parallel x data-parallel recordings (tests/data/tp-dp: tp=2 x
// dp=2 on 4 ranks, tp=4 x dp=2 on 8; torch 1.13, gloo) end to end: the
// recorder marks each collective with its group, the converter reads the mark
// and chains each group's collectives in recorded order, and et-sim runs the
// activation all-reduces in the tensor-parallel groups and the DDP buckets in
// the data-parallel ones, from the recorded ranks and from one rank at a
// larger layout.
#include <unistd.h>

#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "base/gzip_input.h"
#include "collective_groups.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "scaleout/parallel_layout.h"
#include "simulator/simulation.h"

namespace {

constexpr uint64_t kActivationBytes = 16 * 64 * 4;  // batch x width, float32
// One DDP bucket of a rank's gradients: per layer pair a column-parallel
// 64 -> 256/tp layer with bias, a row-parallel 256/tp -> 64 one without, the
// row bias of 64; float32.
constexpr uint64_t BucketBytes(int tp) {
  return 2 * (64 * (256 / tp) + 256 / tp + (256 / tp) * 64 + 64) * 4;
}

std::string Out(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_tpdp_" +
         name;
}

std::string Data(const std::string& name) {
  return std::string(ET_TEST_DATA) + "/tp-dp/" + name;
}

// Converts rank `rank` of recording `tag` ("tp2dp2", "tp4dp2") with its
// profiler trace; returns the report.
et::convert::ConvertReport Convert(const std::string& tag, int rank) {
  et::convert::ConvertOptions options;
  options.rank = rank;
  options.kineto_path =
      Data(absl::StrFormat("%s_kineto_r%d.json.gz", tag, rank));
  auto report = et::convert::ConvertFile(
      Data(absl::StrFormat("%s_et_r%d.json.gz", tag, rank)),
      Out(absl::StrFormat("%s.%d.et", tag, rank)), options);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : et::convert::ConvertReport{};
}

using et::testing::GroupsBySize;
using et::testing::Strided;

TEST(TpDpTest, EveryCollectiveRunsOnItsRecordedGroup) {
  for (const auto& [tag, tp, ranks] :
       std::vector<std::tuple<std::string, int, int>>{{"tp2dp2", 2, 4},
                                                      {"tp4dp2", 4, 8}}) {
    for (int rank = 0; rank < ranks; ++rank) {
      SCOPED_TRACE(absl::StrCat(tag, " rank ", rank));
      const et::convert::ConvertReport report = Convert(tag, rank);
      for (const std::string& w : report.warnings)
        EXPECT_EQ(w.find("smaller than the world"), std::string::npos) << w;
      auto by_size = GroupsBySize(Out(absl::StrFormat("%s.%d.et", tag, rank)));
      ASSERT_EQ(by_size.size(), 2u);
      const std::vector<int64_t> tp_group = Strided(rank / tp * tp, tp, 1);
      const std::vector<int64_t> dp_group = Strided(rank % tp, ranks / tp, tp);
      ASSERT_EQ(by_size[kActivationBytes].size(), 6u);  // 3 per step
      for (const auto& g : by_size[kActivationBytes]) EXPECT_EQ(g, tp_group);
      ASSERT_EQ(by_size[BucketBytes(tp)].size(), 2u);  // 1 per step
      for (const auto& g : by_size[BucketBytes(tp)]) EXPECT_EQ(g, dp_group);
    }
  }
}

// The same trace without the marks (PyTorch 1.13's own recording, renamed
// so the converter does not see them): every collective on the whole world,
// and a warning that says so and what it costs.
TEST(TpDpTest, UnmarkedCollectivesOnTheWorldAreWarnedAbout) {
  std::string text;
  ASSERT_TRUE(et::ReadFileMaybeGzip(Data("tp2dp2_et_r0.json.gz"), &text).ok());
  const std::string bare =
      absl::StrReplaceAll(text, {{"## pg_name:", "## no_group:"}});
  ASSERT_NE(bare, text);
  const std::string in = Out("tp2dp2_unmarked_et.json");
  std::ofstream(in) << bare;
  auto report = et::convert::ConvertFile(in, Out("tp2dp2_unmarked.et"), {});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_NE(report->warnings[0].find(
                "2 group(s) smaller than the world of 4 ranks (1 (2 ranks), 3 "
                "(2 ranks)) but all 8 collectives name none of them"),
            std::string::npos)
      << report->warnings[0];
  auto by_size = GroupsBySize(Out("tp2dp2_unmarked.et"));
  for (const auto& [bytes, groups] : by_size) {
    for (const auto& g : groups) EXPECT_EQ(g, std::vector<int64_t>{-1});
  }
}

// The recorded ranks' own files: the simulated groups are the recorded ones
// (tensor-parallel all-reduces in groups of tp, buckets in groups of dp), in
// et-sim's default schedule and in ASTRA-sim's (one collective at a time per
// rank, the lowest ready id first), which runs every rank to the end.
TEST(TpDpTest, RecordedRanksSimulateTheirGroups) {
  for (const auto& [tag, tp, ranks] :
       std::vector<std::tuple<std::string, int, int>>{{"tp2dp2", 2, 4},
                                                      {"tp4dp2", 4, 8}}) {
    for (int rank = 0; rank < ranks; ++rank) Convert(tag, rank);
    const auto sims = et::testing::SimulateInBothSchedules(
        Out(absl::StrCat(tag, ".%d.et")), ranks);
    ASSERT_EQ(sims.size(), 2u);
    for (const auto& sim : sims) {
      SCOPED_TRACE(absl::StrCat(tag, " schedule ",
                                static_cast<int>(sim.get() != sims[0].get())));
      int64_t tp_calls = 0, dp_calls = 0;
      for (const et::sim::CollectiveRow& c : sim->report().collectives) {
        if (c.bytes == kActivationBytes) {
          EXPECT_EQ(c.group_size, tp) << c.group;
          tp_calls += c.calls;
        } else {
          EXPECT_EQ(c.bytes, BucketBytes(tp));
          EXPECT_EQ(c.group_size, ranks / tp) << c.group;
          dp_calls += c.calls;
        }
      }
      // Each call counted once per instance: ranks / tp tp groups, tp dp ones.
      EXPECT_EQ(tp_calls, 6 * (ranks / tp));
      EXPECT_EQ(dp_calls, 2 * tp);
    }
  }
}

// Every multi-rank recording in tests/data, from its own per-rank files, runs
// to the end under ASTRA-sim's issue rules (--schedule astra: lowest ready id,
// one collective in flight per rank): no rank waits in a collective its peers
// issue in another order (docs/astra-sim.md; tp2dp2 and tp4dp2 above). The
// same files run to the end in ASTRA-sim itself (tests/astra/run_astra_sim.py).
TEST(TpDpTest, EveryMultiRankRecordingRunsToTheEndUnderAstraSchedule) {
  struct Recording {
    std::string tag, et, kineto;  // under tests/data; kineto "" for none
    int ranks;
  };
  const std::vector<Recording> recordings = {
      {"ddp_mlp", "pytorch-1.13-cpu/ddp_mlp_et_r%d.json.gz",
       "pytorch-1.13-cpu/ddp_mlp_trace_r%d.json.gz", 4},
      {"tp8", "tp8/tp8_et_r%d.json.gz", "tp8/tp8_kineto_r%d.json.gz", 8},
      {"pp", "pp/pp2_2r_et_r%d.json.gz", "pp/pp2_2r_kineto_r%d.json.gz", 2},
      {"wide_ddp2", "dp-sync/wide_ddp2_et_r%d.json.gz", "", 2},
      {"torch2_tp2dp2", "torch2-cpu/tp2dp2_et_r%d.json.gz",
       "torch2-cpu/tp2dp2_kineto_r%d.json.gz", 4},
      {"torch2_ddp4", "torch2-cpu/ddp4_et_r%d.json.gz",
       "torch2-cpu/ddp4_kineto_r%d.json.gz", 4},
      {"ddp_gpt_2r", "recorded/ddp_gpt_2r_et_r%d.json.gz",
       "recorded/ddp_gpt_2r_kineto_r%d.json.gz", 2},
      {"ddp_gpt_4r", "recorded/ddp_gpt_4r_et_r%d.json.gz",
       "recorded/ddp_gpt_4r_kineto_r%d.json.gz", 4},
      {"tp_dp_4r", "recorded/tp_dp_4r_et_r%d.json.gz",
       "recorded/tp_dp_4r_kineto_r%d.json.gz", 4}};
  const std::string data = std::string(ET_TEST_DATA) + "/";
  for (const Recording& r : recordings) {
    SCOPED_TRACE(r.tag);
    for (int rank = 0; rank < r.ranks; ++rank) {
      auto path = [&](const std::string& pattern) {
        return data +
               absl::StrReplaceAll(pattern, {{"%d", std::to_string(rank)}});
      };
      et::convert::ConvertOptions convert;
      convert.rank = rank;
      if (!r.kineto.empty()) convert.kineto_path = path(r.kineto);
      auto report = et::convert::ConvertFile(
          path(r.et), Out(absl::StrFormat("%s.%d.et", r.tag, rank)), convert);
      ASSERT_TRUE(report.ok()) << report.status();
    }
    et::sim::SimOptions options;
    options.scheduling = et::sim::SchedulingMode::kAstraCompat;
    auto sim = et::sim::Simulation::Run(
        {Out(absl::StrCat(r.tag, ".%d.et")), r.ranks}, options);
    ASSERT_TRUE(sim.ok()) << sim.status();
    EXPECT_EQ((*sim)->world_size(), r.ranks);
    int64_t calls = 0;
    for (const et::sim::CollectiveRow& c : (*sim)->report().collectives)
      calls += c.calls;
    EXPECT_GT(calls, 0);
  }
}

// One rank at --layout tp=2,dp=8: the tensor-parallel all-reduces stay in
// groups of 2, the recorded DDP buckets run over the 8 data-parallel replicas.
// --layout dp=8 (the dp the user wants, forgetting tp) suggests the full one.
TEST(TpDpTest, OneRankScalesDpAndKeepsTp) {
  Convert("tp2dp2", 0);
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("tp=2,dp=8");
  auto sim = et::sim::Simulation::Run({Out("tp2dp2.0.et"), 0}, options);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_EQ((*sim)->world_size(), 16);
  EXPECT_EQ((*sim)->recorded_layout()->layout.ToString(), "tp=2,dp=2");
  int64_t tp_calls = 0, dp_calls = 0;
  for (const et::sim::CollectiveRow& c : (*sim)->report().collectives) {
    if (c.bytes == kActivationBytes) {
      EXPECT_EQ(c.group_size, 2);
      tp_calls += c.calls;
    } else {
      EXPECT_EQ(c.bytes, BucketBytes(2));
      EXPECT_EQ(c.group_size, 8);
      dp_calls += c.calls;
    }
  }
  EXPECT_EQ(tp_calls, 6);
  EXPECT_EQ(dp_calls, 2);

  options.layout = *et::scaleout::ParseLayout("dp=8");
  auto wrong = et::sim::Simulation::Run({Out("tp2dp2.0.et"), 0}, options);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("use --layout tp=2,dp=8"),
            std::string::npos)
      << wrong.status();
}

// A --recorded-layout the trace contradicts: a pure DDP trace (its gradient
// buckets all-reduced on every rank) given as tp=4 is refused, naming the
// buckets; given as dp=4 it is accepted.
TEST(TpDpTest, GivenLayoutThatTheGradientSyncContradictsIsRefused) {
  const std::string et = Out("ddp_mlp.0.et");
  et::convert::ConvertOptions convert;
  convert.rank = 0;
  ASSERT_TRUE(
      et::convert::ConvertFile(
          std::string(ET_TEST_DATA) + "/pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz",
          et, convert)
          .ok());
  et::sim::SimOptions options;
  options.recorded_layout = *et::scaleout::ParseLayout("tp=4");
  options.layout = *et::scaleout::ParseLayout("tp=4,dp=16");
  auto sim = et::sim::Simulation::Run({et, 0}, options);
  ASSERT_FALSE(sim.ok());
  EXPECT_NE(sim.status().message().find(
                "--recorded-layout tp=4: the trace's 3 gradient all-reduces "
                "(DDP's buckets, issued from AccumulateGrad) run on every rank "
                "(4), which that layout makes tp, not dp"),
            std::string::npos)
      << sim.status();
  options.recorded_layout = *et::scaleout::ParseLayout("dp=4");
  options.layout = *et::scaleout::ParseLayout("dp=16");
  EXPECT_TRUE(et::sim::Simulation::Run({et, 0}, options).ok());
}

}  // namespace

// One rank's file of the 4-rank job, given alone (issue 49, item 2): it is
// simulated in its recorded world with the others as its replicas, so its
// collectives cost what a group of 2 costs; it was a world of one, every
// collective free, scored against the 4-rank truth. --world 1 still
// simulates it alone, and then no truth applies.
TEST(TpDpTest, OneRankOfTheJobRunsInItsRecordedWorld) {
  Convert("tp2dp2", 0);
  const std::string et = Out("tp2dp2.0.et");
  auto in_world = et::sim::Simulation::Run({et, 0}, et::sim::SimOptions());
  ASSERT_TRUE(in_world.ok()) << in_world.status();
  const et::sim::Report& r = (*in_world)->report();
  EXPECT_EQ(r.world_size, 4);
  bool noted = false;
  for (const std::string& n : r.notes)
    noted |= n.find("rank 0 of a 4-rank job") != std::string::npos;
  EXPECT_TRUE(noted);
  ASSERT_FALSE(r.collectives.empty());
  for (const et::sim::CollectiveRow& c : r.collectives) {
    EXPECT_EQ(c.group_size, 2) << c.type << " " << c.group;
    EXPECT_GT(c.total_ns, 0) << c.type << " " << c.group;
  }
  EXPECT_TRUE(r.step.measured_us.has_value());

  et::sim::SimOptions alone;
  alone.world_size = 1;
  auto one = et::sim::Simulation::Run({et, 0}, alone);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ((*one)->report().world_size, 1);
  EXPECT_FALSE((*one)->report().step.measured_us.has_value());
  EXPECT_FALSE((*one)->report().step.error_pct.has_value());
}

// The truth rule for what-ifs (issue 49, item 4): a prediction of another run
// than the measured one (faster compute or host, a straggler, another network)
// prints no error, and says which what-if it is; the recorded machine's own
// network keeps the truth.
TEST(TpDpTest, WhatIfsAreComparedWithNoTruth) {
  for (int rank = 0; rank < 4; ++rank) Convert("tp2dp2", rank);
  const et::sim::SimInput job{Out("tp2dp2.%d.et"), 4};
  auto base = et::sim::Simulation::Run(job, et::sim::SimOptions());
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_TRUE((*base)->report().step.error_pct.has_value());
  et::sim::SimOptions compute, host, straggler, network, own_network;
  compute.compute_scale = 2;
  host.host_model.host_speed = 2;
  straggler.rank_slowdown[1] = 2;
  network.topology = "DGX-A100";
  own_network.topology = "HOST-GLOO";  // what a gloo trace resolves to
  for (const auto& [options, what] :
       std::vector<std::pair<et::sim::SimOptions, std::string>>{
           {compute, "--compute-scale"},
           {host, "--host-speed"},
           {straggler, "--slow-rank"},
           {network, "--topology DGX-A100"}}) {
    SCOPED_TRACE(what);
    auto sim = et::sim::Simulation::Run(job, options);
    ASSERT_TRUE(sim.ok()) << sim.status();
    const et::StepReport& step = (*sim)->report().step;
    EXPECT_FALSE(step.error_pct.has_value());
    EXPECT_FALSE(step.measured_us.has_value());
    bool said = false;
    for (const std::string& n : step.notes)
      said |= n.find("what-if") != std::string::npos &&
              n.find(what) != std::string::npos;
    EXPECT_TRUE(said);
  }
  auto own = et::sim::Simulation::Run(job, own_network);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_TRUE((*own)->report().step.error_pct.has_value());
  // A CPU trace on a GPU platform says the step mixes the two (item 5).
  auto on_gpu = et::sim::Simulation::Run(job, network);
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.status();
  bool mixed = false;
  for (const std::string& n : (*on_gpu)->report().notes)
    mixed |=
        n.find("a CPU trace on the DGX-A100 platform") != std::string::npos;
  EXPECT_TRUE(mixed);
  for (const std::string& n : (*own)->report().notes)
    EXPECT_EQ(n.find("a CPU trace on the"), std::string::npos) << n;
}
