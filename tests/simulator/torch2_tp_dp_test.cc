// PyTorch 2.11 CPU recordings over gloo (tests/data/torch2-cpu: Megatron tp=2
// x dp=2 and 4-rank DDP) end to end, as a user runs them: `et-convert
// 'et_r%d' 'out.%d.et' --ranks 4 --kineto 'kineto_r%d'`, then et-sim on the
// four files. The group table is PyTorch's own `## process_group:init ##`
// (2.x writes it; the recorder adds one only for 1.13). PyTorch 2.11 over gloo
// records no group per collective (no record_param_comms, and `c10d::
// allreduce_` holds the group as an opaque `<Object>`), so each collective's
// group comes from the recorder's `## pg_name ##` mark; without the marks
// every collective runs on the world and the converter says so. et-sim's step
// is compared with the recorded truth (each Kineto trace's
// `unprofiled_step_ms`).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/gzip_input.h"
#include "collective_groups.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "nlohmann/json.hpp"
#include "simulator/simulation.h"
#include "step/step_model.h"
#include "tests/cli/run_tool.h"

namespace {

using et::testing::GroupsBySize;
using et::testing::Strided;

constexpr int kRanks = 4;
constexpr int kTp = 2;
constexpr int kSteps = 3;
// record_trace.py --tp 2 --width 128 --batch 16: the activations all-reduced
// in the tensor-parallel group are batch x width float32.
constexpr uint64_t kActivationBytes = 16 * 128 * 4;
// One DDP bucket of a rank's gradients at tp=2: per layer pair a
// column-parallel 128 -> 512/2 layer with bias, a row-parallel 256 -> 128 one
// without, and the row bias of 128; float32.
constexpr uint64_t kBucketBytes = 2 * (128 * 256 + 256 + 256 * 128 + 128) * 4;

std::string Out(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_t2_" + name;
}

std::string Data(const std::string& name) {
  return std::string(ET_TEST_DATA) + "/torch2-cpu/" + name;
}

// et-convert on the four ranks of `et_pattern` (a %d path) with the Kineto
// traces of recording `tag`; returns what it printed. Outputs: Out(tag.%d.et).
std::string ConvertRanks(const std::string& tag, const std::string& et_pattern,
                         const std::string& out_tag) {
  int code = -1;
  const std::string out = et::testing::RunTool(
      absl::StrFormat("%s '%s' '%s' --ranks %d --kineto '%s'", ET_CONVERT_BIN,
                      et_pattern, Out(out_tag + ".%d.et"), kRanks,
                      Data(tag + "_kineto_r%d.json.gz")),
      &code);
  EXPECT_EQ(code, 0) << out;
  return out;
}

// The recorded truth: the mean over the ranks of each Kineto trace's
// unprofiled_step_ms, in us (what the step report compares with).
double RecordedStepUs(const std::string& tag) {
  double sum_ms = 0;
  for (int rank = 0; rank < kRanks; ++rank) {
    std::string text;
    EXPECT_TRUE(
        et::ReadFileMaybeGzip(
            Data(absl::StrFormat("%s_kineto_r%d.json.gz", tag, rank)), &text)
            .ok());
    sum_ms += nlohmann::json::parse(text).value("unprofiled_step_ms", 0.0);
  }
  return sum_ms * 1000 / kRanks;
}

int64_t Count(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(Torch2TpDpTest, EveryCollectiveOnItsGroupFromTheCommandLine) {
  const std::string out =
      ConvertRanks("tp2dp2", Data("tp2dp2_et_r%d.json.gz"), "tp2dp2");
  EXPECT_EQ(Count(out, "smaller than the world"), 0) << out;
  EXPECT_NE(out.find("cross-rank check (4 ranks): every process group's "
                     "members issued the same collectives in the same order"),
            std::string::npos)
      << out;
  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    const std::string et = Out(absl::StrFormat("tp2dp2.%d.et", rank));
    // PyTorch's own table (2.x's descs are "undefined"; the recorder's table
    // for 1.13 names Megatron's groups): the default group and this rank's
    // tensor- and data-parallel groups, numbered as PyTorch numbers them.
    auto graph = et::LoadGraph(et);
    ASSERT_TRUE(graph.ok()) << graph.status();
    const std::vector<et::ProcessGroup> groups =
        et::DecodeProcessGroups(graph->metadata().attr());
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_EQ(groups[0].desc, "default_pg");
    EXPECT_EQ(groups[1].desc, "undefined");
    EXPECT_EQ(groups[1].name, std::to_string(1 + rank / kTp));
    EXPECT_EQ(groups[2].name, std::to_string(3 + rank % kTp));

    auto by_size = GroupsBySize(et);
    ASSERT_EQ(by_size.size(), 2u);
    ASSERT_EQ(by_size[kActivationBytes].size(), 3u * kSteps);
    for (const auto& g : by_size[kActivationBytes])
      EXPECT_EQ(g, Strided(rank / kTp * kTp, kTp, 1));  // {0,1} or {2,3}
    ASSERT_EQ(by_size[kBucketBytes].size(), 1u * kSteps);
    for (const auto& g : by_size[kBucketBytes])
      EXPECT_EQ(g, Strided(rank % kTp, kRanks / kTp, kTp));  // {0,2}, {1,3}
  }
}

// DDP on the default group: every bucket on the whole world, no warning.
TEST(Torch2TpDpTest, DdpBucketsRunOnTheWorld) {
  const std::string out =
      ConvertRanks("ddp4", Data("ddp4_et_r%d.json.gz"), "ddp4");
  EXPECT_EQ(Count(out, "smaller than the world"), 0) << out;
  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    int64_t collectives = 0;
    for (const auto& [bytes, groups] :
         GroupsBySize(Out(absl::StrFormat("ddp4.%d.et", rank)))) {
      EXPECT_EQ(groups.size(), static_cast<size_t>(kSteps)) << bytes;
      for (const auto& g : groups) EXPECT_EQ(g, std::vector<int64_t>{-1});
      collectives += static_cast<int64_t>(groups.size());
    }
    EXPECT_EQ(collectives, 2 * kSteps);  // two buckets per step
  }
}

// The same recording with the recorder's marks renamed away: PyTorch's own
// fields name no group per collective (2.11 over gloo), so every collective
// runs on the world, and each rank's conversion says which groups it lost.
TEST(Torch2TpDpTest, WithoutMarksEveryRankIsWarnedThatGroupsAreLost) {
  for (int rank = 0; rank < kRanks; ++rank) {
    std::string text;
    ASSERT_TRUE(et::ReadFileMaybeGzip(
                    Data(absl::StrFormat("tp2dp2_et_r%d.json.gz", rank)), &text)
                    .ok());
    const std::string bare =
        absl::StrReplaceAll(text, {{"## pg_name:", "## no_group:"}});
    ASSERT_NE(bare, text);
    std::ofstream(Out(absl::StrFormat("bare_et_r%d.json", rank))) << bare;
  }
  const std::string out =
      ConvertRanks("tp2dp2", Out("bare_et_r%d.json"), "bare");
  EXPECT_EQ(Count(out, "but all 12 collectives name none of them"), kRanks)
      << out;
  EXPECT_NE(out.find("2 group(s) smaller than the world of 4 ranks (1 (2 "
                     "ranks), 3 (2 ranks))"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("2.11 names groups only in its process_group:init table"),
            std::string::npos)
      << out;
  for (int rank = 0; rank < kRanks; ++rank) {
    for (const auto& [bytes, groups] :
         GroupsBySize(Out(absl::StrFormat("bare.%d.et", rank)))) {
      for (const auto& g : groups) EXPECT_EQ(g, std::vector<int64_t>{-1});
    }
  }
}

// et-sim on the four converted files, in its own schedule and ASTRA-sim's:
// every rank runs to the end, the tp all-reduces in groups of 2 (two groups),
// the buckets in groups of 2 (two groups), DDP's on all 4; in et-sim's own
// schedule the step is compared with the recorded truth and the error is the
// one the numbers give. ASTRA-sim's replays the recorded durations with no
// host-time model: no truth, and it says so.
TEST(Torch2TpDpTest, SimulatedStepIsComparedWithTheRecordedTruth) {
  ConvertRanks("tp2dp2", Data("tp2dp2_et_r%d.json.gz"), "sim_tp2dp2");
  ConvertRanks("ddp4", Data("ddp4_et_r%d.json.gz"), "sim_ddp4");
  for (const std::string tag : {"tp2dp2", "ddp4"}) {
    const auto sims = et::testing::SimulateInBothSchedules(
        Out(absl::StrCat("sim_", tag, ".%d.et")), kRanks);
    ASSERT_EQ(sims.size(), 2u);
    for (const auto& sim : sims) {
      SCOPED_TRACE(absl::StrCat(tag, " schedule ",
                                static_cast<int>(sim.get() != sims[0].get())));
      int64_t calls = 0;
      for (const et::sim::CollectiveRow& c : sim->report().collectives) {
        EXPECT_EQ(c.group_size, tag == "ddp4" ? kRanks : kTp) << c.group;
        calls += c.calls;
      }
      // Per group instance: tp2dp2 9 + 9 activations, 3 + 3 buckets; ddp4
      // 2 buckets per step on the one world group.
      EXPECT_EQ(calls, tag == "ddp4" ? 2 * kSteps : 2 * 4 * kSteps);
      const et::StepReport& step = sim->report().step;
      EXPECT_EQ(step.steps, kSteps);
      if (sim.get() != sims[0].get()) {  // --schedule astra
        EXPECT_FALSE(step.measured_us.has_value());
        EXPECT_FALSE(step.error_pct.has_value());
        EXPECT_TRUE(std::any_of(step.notes.begin(), step.notes.end(),
                                [](const std::string& note) {
                                  return note.find(
                                             "no error reported: "
                                             "--schedule astra") == 0;
                                }))
            << absl::StrJoin(step.notes, "\n");
        continue;
      }
      ASSERT_TRUE(step.measured_us.has_value());
      EXPECT_EQ(step.measured_source, "unprofiled-run");
      EXPECT_NEAR(*step.measured_us, RecordedStepUs(tag), 0.01);
      ASSERT_TRUE(step.error_pct.has_value());
      EXPECT_NEAR(*step.error_pct,
                  (step.predicted_us / *step.measured_us - 1) * 100, 1e-6);
      EXPECT_EQ(step.ranks.size(), static_cast<size_t>(kRanks));
    }
  }
}

// gloo's speed is the host's: each collective's run on gloo's worker thread
// (the `gloo:all_reduce` record) is stored on its node as comm_work_ns, from
// the call to that record's end, and et-sim prices host collectives from those
// runs instead of HOST-GLOO's figures from another machine. The preset misses
// these 16-core recordings by +20.9% (ddp4) and -32.8% (tp2dp2) unprofiled.
TEST(Torch2TpDpTest, GlooRunsAreLearnedFromTheRecording) {
  // Rank 0 of ddp4: each c10d::allreduce_ call and the gloo record of its
  // run (record function id one above the call's), from the Kineto trace.
  std::string text;
  ASSERT_TRUE(
      et::ReadFileMaybeGzip(Data("ddp4_kineto_r0.json.gz"), &text).ok());
  std::map<int64_t, double> call_start_us, run_end_us;
  const nlohmann::json kineto = nlohmann::json::parse(text);
  for (const auto& e : kineto["traceEvents"]) {
    if (!e.contains("args") || !e["args"].contains("Record function id"))
      continue;
    const int64_t rf = e["args"]["Record function id"].get<int64_t>();
    const std::string name = e.value("name", "");
    if (name == "c10d::allreduce_") call_start_us[rf] = e["ts"].get<double>();
    if (name == "gloo:all_reduce")
      run_end_us[rf] = e["ts"].get<double>() + e["dur"].get<double>();
  }
  std::vector<int64_t> expected_ns;
  for (const auto& [rf, start] : call_start_us) {
    auto run = run_end_us.find(rf + 1);
    ASSERT_NE(run, run_end_us.end()) << rf;
    expected_ns.push_back(std::llround((run->second - start) * 1e3));
  }
  ConvertRanks("ddp4", Data("ddp4_et_r%d.json.gz"), "gloo_ddp4");
  auto model = et::NodeModel::Load(Out("gloo_ddp4.0.et"));
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<int64_t> work_ns;
  for (et::NodeIndex i = 0; i < model->size(); ++i) {
    const et::CommSpec* c = model->comm(i);
    if (c == nullptr) continue;
    EXPECT_TRUE(c->on_host);
    EXPECT_GT(c->work_ns, model->duration_ns(i)) << model->name(i);
    work_ns.push_back(c->work_ns);
  }
  std::sort(work_ns.begin(), work_ns.end());
  std::sort(expected_ns.begin(), expected_ns.end());
  ASSERT_EQ(work_ns.size(), 6u);
  for (size_t k = 0; k < work_ns.size(); ++k)
    EXPECT_NEAR(work_ns[k], expected_ns[k], 1000) << k;  // 1 us rounding

  ConvertRanks("tp2dp2", Data("tp2dp2_et_r%d.json.gz"), "gloo_tp2dp2");
  for (const std::string tag : {"ddp4", "tp2dp2"}) {
    SCOPED_TRACE(tag);
    et::sim::SimOptions learned, preset;
    preset.topology = "HOST-GLOO";
    auto a = et::sim::Simulation::Run({Out("gloo_" + tag + ".%d.et"), kRanks},
                                      learned);
    auto b = et::sim::Simulation::Run({Out("gloo_" + tag + ".%d.et"), kRanks},
                                      preset);
    ASSERT_TRUE(a.ok() && b.ok());
    const auto& notes = (*a)->report().notes;
    EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const auto& n) {
      return n.find(
                 "host collectives priced from the trace's own gloo work "
                 "records") == 0;
    })) << absl::StrJoin(notes, "\n");
    ASSERT_TRUE((*a)->report().step.error_pct && (*b)->report().step.error_pct);
    // ddp4 +3.9%, tp2dp2 -17.5%, the profiler's cost per op measured in the
    // trace (docs/step-model.md; +1.5% and -5.4% with the gap capped at 10
    // us, which hid these recordings' unsteady steps).
    EXPECT_LE(std::abs(*(*a)->report().step.error_pct), 18.0);
    EXPECT_GE(std::abs(*(*b)->report().step.error_pct), 15.0);
  }
}

// In recorded host time a rank's wait for a DDP bucket sits in the gap before
// the op that consumes it (DDP's wait is no op of its own); et-sim makes that
// op wait for the simulated all-reduce too, and counts the wait once. ddp4
// was +36.7% against its profiled step when it counted both.
TEST(Torch2TpDpTest, ARecordedWaitForABucketCountsOnce) {
  ConvertRanks("ddp4", Data("ddp4_et_r%d.json.gz"), "wait_ddp4");
  auto model = et::NodeModel::Load(Out("wait_ddp4.0.et"));
  ASSERT_TRUE(model.ok()) << model.status();
  const et::StepModel steps = et::StepModel::Build(*model);
  int64_t waits = 0;
  for (et::NodeIndex i = 0; i < model->size(); ++i) {
    const int64_t w =
        steps.HostCollectiveWaitNs(i, et::HostTimeMode::kRecorded);
    EXPECT_LE(w, steps.HostGapNs(i, et::HostTimeMode::kRecorded));
    EXPECT_EQ(steps.HostCollectiveWaitNs(i, et::HostTimeMode::kUnprofiled), 0);
    waits += w > 1'000'000 ? 1 : 0;  // over a millisecond
    // Unprofiled, the gap before the op holds none of that wait either: the
    // simulated op waits for the simulated all-reduce (with the wait kept,
    // ddp4 was +47.5% against its truth, tp2dp2 +48.0%).
    EXPECT_LE(steps.HostGapNs(i, et::HostTimeMode::kUnprofiled),
              steps.HostGapNs(i, et::HostTimeMode::kRecorded) - w);
  }
  EXPECT_GE(waits, 3);  // a bucket's wait per step, at least
  et::sim::SimOptions options;
  options.host_time = et::HostTimeMode::kRecorded;
  options.topology = "HOST-GLOO";  // the wait rule alone, on the preset
  auto sim =
      et::sim::Simulation::Run({Out("wait_ddp4.%d.et"), kRanks}, options);
  ASSERT_TRUE(sim.ok()) << sim.status();
  ASSERT_TRUE((*sim)->report().step.error_pct.has_value());
  EXPECT_LT(std::abs(*(*sim)->report().step.error_pct), 20.0);
}

}  // namespace
