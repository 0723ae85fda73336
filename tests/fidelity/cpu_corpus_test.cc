// The CPU corpus (tests/data/cpu-corpus, issue 36): twelve single-rank
// torch 2.11 recordings of five models (MLP, GPT block, CNN, mixture of
// experts, embedding + LSTM) at widths 64-1024, one at a time on one pinned
// core of a quiet 16-core host, and five 2- and 4-rank gloo runs. Each Kineto
// trace carries its truth, the recorder's thread count and profiler warm-up,
// and what the profiler costs per op measured at record time.
//
// Asserted: the recording replays its profiled step (recorded host time,
// within 1% on one rank); the unprofiled prediction is compared with the
// truth, and its misses stay inside today's bounds (docs/step-model.md,
// "The CPU corpus"). The bounds are gates on that state, so that a change
// that moves any recording is seen; the goal (10% each) is not met.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "base/gzip_input.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simulator/simulation.h"
#include "step/host_profile.h"
#include "tests/fidelity/cpu_corpus_recipes.h"

namespace et::sim {
namespace {

std::string Data(const std::string& name,
                 const std::string& folder = "cpu-corpus") {
  return std::string(ET_TEST_DATA) + "/" + folder + "/" + name;
}

// A copy of Kineto trace `stem` (e.g. "cpu_mlp_w64_kineto") whose
// calibration lost its full-profiler probes (`full_us`): what the light-step
// rule did before it scaled the light profiler's probe cost to the model.
std::string WithoutFullProbes(const std::string& folder,
                              const std::string& stem) {
  std::string text;
  EXPECT_TRUE(ReadFileMaybeGzip(Data(stem + ".json.gz", folder), &text).ok());
  nlohmann::json doc = nlohmann::json::parse(text);
  doc["profiler_calibration"].erase("full_us");
  const std::string out =
      std::string(ET_BINARY_DIR) + "/" + folder + "_" + stem + "_unscaled.json";
  std::ofstream(out) << doc.dump();
  return out;
}

// Converts rank `rank` of `name` (-1: a single-rank recording) from `folder`;
// returns the .et path. With `light`, the costs its light profile teaches are
// stored in the .et (et-convert --host-profile); `kineto` replaces its
// Kineto trace.
std::string Convert(const std::string& name, int rank = -1, bool light = false,
                    const std::string& folder = "cpu-corpus",
                    const std::string& kineto = "") {
  const std::string suffix = rank < 0 ? "" : "_r" + std::to_string(rank);
  const std::string out = std::string(ET_BINARY_DIR) + "/" + folder + "_" +
                          name + (rank < 0 ? "" : "." + std::to_string(rank)) +
                          (light ? "_light" : "") +
                          (kineto.empty() ? "" : "_alt") + ".et";
  convert::ConvertOptions options;
  options.kineto_path =
      kineto.empty() ? Data(name + "_kineto" + suffix + ".json.gz", folder)
                     : kineto;
  if (light) {
    auto learned = LearnHostProfile(
        Data(name + "_kineto_light" + suffix + ".json.gz", folder));
    EXPECT_TRUE(learned.ok()) << learned.status();
    if (learned.ok()) options.host_costs = learned->model;
  }
  auto s = convert::ConvertFile(
      Data(name + "_et" + suffix + ".json.gz", folder), out, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return out;
}

Report RunSim(const std::string& path, int ranks, HostTimeMode mode) {
  SimOptions options;
  options.host_time = mode;
  auto sim = Simulation::Run({path, ranks}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? (*sim)->report() : Report{};
}

StepReport Simulate(const std::string& path, int ranks, HostTimeMode mode) {
  return RunSim(path, ranks, mode).step;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

TEST(CpuCorpus, EveryRecordingReplaysItsProfiledStep) {
  for (const char* name : kCpuCorpusSingles) {
    const StepReport step = Simulate(Convert(name), 0, HostTimeMode::kRecorded);
    EXPECT_EQ(step.steps, 4) << name;
    EXPECT_EQ(step.measured_source, "profiled-run") << name;
    ASSERT_TRUE(step.error_pct.has_value()) << name;
    EXPECT_LE(std::abs(*step.error_pct), 1.0) << name;
  }
}

// The trace alone: each op less the profiler's cost measured in the trace (a
// leaf view's span plus the nested-op gap, 14.5-24.4 us): 0.5-46.9%, median
// 10.8% (the one-op-node rule: 3.4-72.0%, median 29.6%). The report says
// what the cost rests on and how much 1% of it moves the prediction.
TEST(CpuCorpus, UnprofiledStepsAreComparedWithTheirTruths) {
  std::vector<double> misses;
  for (const char* name : kCpuCorpusSingles) {
    const Report report = RunSim(Convert(name), 0, HostTimeMode::kUnprofiled);
    const StepReport& step = report.step;
    EXPECT_EQ(step.measured_source, "unprofiled-run") << name;
    // The report says the cost is estimated from the trace, and uncertain.
    bool said = false;
    for (const std::string& note : report.notes) {
      said |= note.find("host cost (estimated from the trace)") !=
                  std::string::npos &&
              note.find("inside the span of an op that computes nothing") !=
                  std::string::npos &&
              note.find(
                  "each 1% off in the cost per op moves the "
                  "prediction") != std::string::npos &&
              note.find("uncertain") != std::string::npos;
    }
    EXPECT_TRUE(said) << name;
    ASSERT_TRUE(step.error_pct.has_value()) << name;
    EXPECT_LE(std::abs(*step.error_pct), 48.0) << name;
    misses.push_back(std::abs(*step.error_pct));
  }
  EXPECT_LE(Median(misses), 11.0);
}

// With its light profile (the same program under the light profiler alone,
// recorded next), a CPU-only recording learns the full profiler's cost per
// op from the two steps, with the light profiler's own cost measured at
// record time and scaled, like the full profiler's, from the calibration
// loop's probe to an op of the model: 1.6-25.0% (median 5.9%; unscaled
// 0.7-39.5%, median 10.4%) where the trace alone gives 3.4-72% (median
// 29.6%).
TEST(CpuCorpus, LightProfileTeachesTheFullProfilersCost) {
  std::vector<double> misses;
  int light_faster_than_truth = 0, another_speed = 0;
  for (const char* name : kCpuCorpusSingles) {
    const Report report =
        RunSim(Convert(name, -1, /*light=*/true), 0, HostTimeMode::kUnprofiled);
    ASSERT_TRUE(report.step.error_pct.has_value()) << name;
    EXPECT_LE(std::abs(*report.step.error_pct), 27.0) << name;
    misses.push_back(std::abs(*report.step.error_pct));
    bool said = false;
    for (const std::string& note : report.notes) {
      said |= note.find("a CPU-only trace; each op less the full profiler's") !=
                  std::string::npos &&
              note.find("measured at record time") != std::string::npos &&
              note.find(
                  "scaled by the full profiler's cost over the light "
                  "one") != std::string::npos;
    }
    EXPECT_TRUE(said) << name << ": the note names the rule and its source";
    // A light step faster than the truth is said, and the prediction read
    // from it falls short of that truth.
    bool faster = false;
    for (const std::string& note : report.notes)
      faster |=
          note.find("light profile's step") != std::string::npos &&
          note.find("faster than the unprofiled truth") != std::string::npos;
    if (faster) {
      ++light_faster_than_truth;
      EXPECT_LT(*report.step.error_pct, 0) << name;
    }
    // The trace's own spans measure the same cost: both are printed, and a
    // gap beyond 0.8-1.25x is said (the program ran at another speed).
    bool spans = false;
    for (const std::string& note : report.notes) {
      if (note.find("the trace's own spans put the full profiler's cost") ==
          std::string::npos)
        continue;
      spans = true;
      another_speed += note.find("ran at another speed") != std::string::npos;
    }
    EXPECT_TRUE(spans) << name;
  }
  // mlp_w1024 (2.67x) and gpt_w512 (1.34x); the others 0.91-1.13x.
  EXPECT_EQ(another_speed, 2);
  EXPECT_LE(Median(misses), 7.0);
  // mlp_w256, mlp_w1024, gpt_w512, conv_w32, rnn_w128, rnn_w512: every
  // recording the rule predicts too fast by more than 5%.
  EXPECT_EQ(light_faster_than_truth, 6);
}

// The light profiler's probe cost scaled to an op of the model by the
// recording's own full-over-light ratio, against the probe's cost as it is:
// better on the corpus (median 10.4% -> 5.9%) and on twelve recordings of
// the same recipes made afterwards on another host and torch (the 2-core VM,
// torch 1.13's legacy profiler: 7.5% -> 6.6%, against truths whose own
// timing blocks are 5-39% apart there, which the report notes).
TEST(CpuCorpus, LightProbeScaledToTheModelOnBothHosts) {
  for (const char* folder : {"cpu-corpus", "cpu-corpus-vm"}) {
    std::vector<double> scaled, unscaled;
    for (const char* name : kCpuCorpusSingles) {
      const Report with = RunSim(Convert(name, -1, /*light=*/true, folder), 0,
                                 HostTimeMode::kUnprofiled);
      const Report without = RunSim(
          Convert(name, -1, /*light=*/true, folder,
                  WithoutFullProbes(folder, std::string(name) + "_kineto")),
          0, HostTimeMode::kUnprofiled);
      ASSERT_TRUE(with.step.error_pct.has_value()) << folder << " " << name;
      ASSERT_TRUE(without.step.error_pct.has_value()) << folder << " " << name;
      scaled.push_back(std::abs(*with.step.error_pct));
      unscaled.push_back(std::abs(*without.step.error_pct));
      // Where the truth's own blocks are more than 5% apart, the report
      // says a prediction cannot be judged closer than that.
      const StepReport& step = with.step;
      if (step.measured_fastest_block_us && step.measured_slowest_block_us &&
          *step.measured_slowest_block_us - *step.measured_fastest_block_us >
              0.05 * *step.measured_us) {
        bool noted = false;
        for (const std::string& note : step.notes)
          noted |= note.find("timing blocks") != std::string::npos;
        EXPECT_TRUE(noted) << folder << " " << name;
      }
    }
    EXPECT_LT(Median(scaled), Median(unscaled)) << folder;
    EXPECT_LE(Median(scaled), 7.0) << folder;
  }
}

// Three 2-rank runs on the VM (tests/data/cpu-corpus-vm, one thread a rank
// on its two cores), each rank with its own light profile: each rank learns
// its own cost (ddp_gpt_2r -11.1%, ddp_rnn_2r -2.1%, tp2_mlp -11.8%; the
// trace alone -11.1%, +0.7%, -16.1%).
TEST(CpuCorpus, VmRankRecordingsLearnFromEachRanksLightProfile) {
  const std::string folder = "cpu-corpus-vm";
  for (const char* name : {"ddp_gpt_2r", "ddp_rnn_2r", "tp2_mlp"}) {
    auto simulate = [&](bool scaled, HostTimeMode mode) {
      for (int r = 0; r < 2; ++r) {
        const std::string kineto =
            scaled ? ""
                   : WithoutFullProbes(folder, std::string(name) + "_kineto_r" +
                                                   std::to_string(r));
        Convert(name, r, /*light=*/true, folder, kineto);
      }
      const std::string pattern = std::string(ET_BINARY_DIR) + "/" + folder +
                                  "_" + name + ".%d_light" +
                                  (scaled ? "" : "_alt") + ".et";
      return Simulate(pattern, 2, mode);
    };
    const StepReport recorded = simulate(true, HostTimeMode::kRecorded);
    const StepReport with = simulate(true, HostTimeMode::kUnprofiled);
    const StepReport without = simulate(false, HostTimeMode::kUnprofiled);
    ASSERT_TRUE(recorded.error_pct && with.error_pct && without.error_pct)
        << name;
    EXPECT_LE(std::abs(*recorded.error_pct), 10.0) << name;
    EXPECT_LE(std::abs(*with.error_pct), 20.0) << name;
    // Scaled or not, within a point of each other (with the gloo wait left
    // to the simulator: -11.1, -2.1, -11.8% scaled).
    EXPECT_NEAR(std::abs(*with.error_pct), std::abs(*without.error_pct), 1.0)
        << name;
  }
}

TEST(CpuCorpus, RankRecordingsReplayNearTheirProfiledSteps) {
  const struct {
    const char* name;
    int ranks;
  } runs[] = {{"ddp_gpt_2r", 2},
              {"ddp_gpt_4r", 4},
              {"ddp_rnn_2r", 2},
              {"tp2_mlp", 2},
              {"ddp_conv_4r", 4}};
  for (const auto& run : runs) {
    for (int r = 0; r < run.ranks; ++r) Convert(run.name, r);
    const std::string pattern =
        std::string(ET_BINARY_DIR) + "/cpu-corpus_" + run.name + ".%d.et";
    const StepReport recorded =
        Simulate(pattern, run.ranks, HostTimeMode::kRecorded);
    ASSERT_TRUE(recorded.error_pct.has_value()) << run.name;
    EXPECT_LE(std::abs(*recorded.error_pct), 25.0) << run.name;
    // The trace alone, each rank's gloo waits left to the simulator: +12.5,
    // +24.9, +0.5, +11.6, +1.9% (with the waits kept in the gaps and the
    // one-op-node rule: +112.8% to -30.1%).
    const StepReport unprofiled =
        Simulate(pattern, run.ranks, HostTimeMode::kUnprofiled);
    EXPECT_EQ(unprofiled.measured_source, "unprofiled-run") << run.name;
    ASSERT_TRUE(unprofiled.error_pct.has_value()) << run.name;
    EXPECT_LE(std::abs(*unprofiled.error_pct), 26.0) << run.name;
  }
}

// What the recorder stores beside the truth: its thread count, the profiler
// warm-up step it left out, and per probe op the time of a call with no
// instrument, the light profiler, the ET observer, and both (what a
// recording pays).
TEST(CpuCorpus, RecorderStoresItsProfilerCalibration) {
  for (const char* name : kCpuCorpusSingles) {
    std::string text;
    ASSERT_TRUE(
        ReadFileMaybeGzip(Data(std::string(name) + "_kineto.json.gz"), &text)
            .ok());
    const nlohmann::json doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc.value("host_threads", 0), 1) << name;
    EXPECT_EQ(doc.value("profiler_warmup_steps", 0), 1) << name;
    ASSERT_TRUE(doc.contains("profiler_calibration")) << name;
    const nlohmann::json& cal = doc["profiler_calibration"];
    for (const char* probe : {"view", "add", "cat8", "linear"}) {
      const double none = cal["none_us"][probe].get<double>();
      const double light = cal["light_us"][probe].get<double>();
      const double full = cal["full_us"][probe].get<double>();
      EXPECT_GT(none, 0) << name << " " << probe;
      EXPECT_GT(full, light) << name << " " << probe;
      EXPECT_GT(full, 2 * none) << name << " " << probe;
    }
    EXPECT_GT(cal["ops_per_call"]["linear"].get<int>(), 1) << name;
  }
}

}  // namespace
}  // namespace et::sim
