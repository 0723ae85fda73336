// The step prediction against true step times (docs/benchmarks.md has the
// whole scoreboard, tests/fidelity/scoreboard.py prints it). et-sim is
// deterministic, so these are error bounds, not timings:
//   - the five H100 models (tests/data/h100, ../shared/traces/h100): the
//     default (unprofiled) prediction within 10% of the step measured without
//     a profiler; `--host-time recorded` within 10% of the profiled step;
//     `--device H200` within 10% of the step measured on an H200;
//   - the bundled 4-rank DDP trace: `--host-time recorded` within 10% of its
//     `## step_N ##` steps;
//   - a trace without a truth reports none, and no error.
#include <filesystem>
#include <fstream>
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

struct Truth {
  double h100_ms = 0;
  double h200_ms = 0;
};

std::string Dir(const std::string& model) {
  const std::string local = std::string(ET_TEST_DATA) + "/h100/";
  if (std::filesystem::exists(local + model + "_et.json.gz")) return local;
  return std::string(ET_SHARED_TRACES) + "/h100/";
}

Truth ReadTruth(const std::string& model) {
  std::ifstream in(Dir(model) + model + "_meta.json");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return {};
  return {j.value("unprofiled_step_ms", 0.0),
          j.value("unprofiled_step_ms_h200", 0.0)};
}

// Converts `model` with its Kineto trace and its H100 truth.
std::string Convert(const std::string& model, const Truth& truth) {
  const std::string out =
      std::string(ET_BINARY_DIR) + "/fidelity_" + model + ".et";
  convert::ConvertOptions options;
  options.kineto_path = Dir(model) + model + "_kineto.json.gz";
  options.measured_step_ms = truth.h100_ms;
  auto s =
      convert::ConvertFile(Dir(model) + model + "_et.json.gz", out, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return out;
}

StepReport Simulate(const std::string& path, SimOptions options) {
  auto sim = Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? (*sim)->report().step : StepReport{};
}

class H100Fidelity : public testing::TestWithParam<std::string> {};

TEST_P(H100Fidelity, PredictsTheTrueStepInBothModesAndOnAnH200) {
  const std::string model = GetParam();
  const Truth truth = ReadTruth(model);
  if (truth.h100_ms <= 0) GTEST_SKIP() << model << ": no trace here";
  const std::string et = Convert(model, truth);

  const StepReport unprofiled = Simulate(et, SimOptions());
  EXPECT_EQ(unprofiled.steps, 3);
  EXPECT_EQ(unprofiled.measured_source, "unprofiled-run");
  ASSERT_TRUE(unprofiled.measured_us.has_value());
  EXPECT_NEAR(*unprofiled.measured_us, truth.h100_ms * 1e3, 1e-6);
  ASSERT_TRUE(unprofiled.error_pct.has_value());
  EXPECT_LE(std::abs(*unprofiled.error_pct), 10.0)
      << model << ": predicted " << unprofiled.predicted_us << " us";

  SimOptions recorded;
  recorded.host_time = HostTimeMode::kRecorded;
  const StepReport profiled = Simulate(et, recorded);
  EXPECT_EQ(profiled.measured_source, "profiled-run");
  ASSERT_TRUE(profiled.error_pct.has_value());
  EXPECT_LE(std::abs(*profiled.error_pct), 10.0)
      << model << ": predicted " << profiled.predicted_us << " us vs "
      << profiled.measured_us.value_or(0);
  // The profiler makes the host several times slower than the real program.
  EXPECT_GT(profiled.predicted_us, unprofiled.predicted_us);

  SimOptions h200;
  h200.device = "H200";
  h200.measured_step_us = truth.h200_ms * 1e3;
  const StepReport what_if = Simulate(et, h200);
  ASSERT_TRUE(what_if.error_pct.has_value());
  EXPECT_LE(std::abs(*what_if.error_pct), 10.0)
      << model << ": predicted " << what_if.predicted_us << " us on H200";
  EXPECT_LT(what_if.predicted_us, unprofiled.predicted_us);
}

INSTANTIATE_TEST_SUITE_P(Models, H100Fidelity,
                         testing::Values("mlp1024", "mlp4096", "gpt1024",
                                         "resnet50", "gpt2"));

// Without --measured-step-ms, the H100 truth is not compared with an H200
// prediction.
TEST(FidelityTest, WhatIfWithoutItsTruthReportsNoError) {
  const Truth truth = ReadTruth("mlp1024");
  const std::string et = Convert("mlp1024", truth);
  SimOptions h200;
  h200.device = "H200";
  auto sim = Simulation::Run({et, 0}, h200);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_FALSE((*sim)->report().step.error_pct.has_value());
  bool noted = false;
  for (const std::string& n : (*sim)->report().step.notes)
    noted |= n.find("for H200 (--device), not the H100") != std::string::npos;
  EXPECT_TRUE(noted);
}

std::string ConvertDemo() {
  const std::string dir = std::string(ET_BINARY_DIR) + "/fidelity_demo";
  std::filesystem::create_directories(dir);
  const std::string data = std::string(ET_TEST_DATA) + "/pytorch-1.13-cpu/";
  for (int r = 0; r < 4; ++r) {
    convert::ConvertOptions options;
    options.kineto_path =
        data + "ddp_mlp_trace_r" + std::to_string(r) + ".json.gz";
    auto s = convert::ConvertFile(
        data + "ddp_mlp_et_r" + std::to_string(r) + ".json.gz",
        dir + "/ddp_mlp." + std::to_string(r) + ".et", options);
    EXPECT_TRUE(s.ok()) << s.status();
  }
  return dir + "/ddp_mlp.%d.et";
}

TEST(FidelityTest, DemoRanksRecordedWithinTenPercentOfTheirSteps) {
  SimOptions recorded;
  recorded.host_time = HostTimeMode::kRecorded;
  auto sim = Simulation::Run({ConvertDemo(), 4}, recorded);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const StepReport& step = (*sim)->report().step;
  EXPECT_EQ(step.steps, 3);  // the `## step_N ##` ranges
  ASSERT_TRUE(step.error_pct.has_value());
  EXPECT_LE(std::abs(*step.error_pct), 10.0);
  ASSERT_EQ(step.ranks.size(), 4u);
  for (const RankSteps& r : step.ranks) {
    ASSERT_TRUE(r.error_pct.has_value());
    EXPECT_LE(std::abs(*r.error_pct), 10.0) << "rank " << r.ranks[0];
  }
}

TEST(FidelityTest, TraceWithoutTruthSaysSoAndReportsNoError) {
  auto sim = Simulation::Run({ConvertDemo(), 4}, SimOptions());
  ASSERT_TRUE(sim.ok()) << sim.status();
  const StepReport& step = (*sim)->report().step;
  EXPECT_FALSE(step.measured_us.has_value());
  EXPECT_FALSE(step.error_pct.has_value());
  ASSERT_FALSE(step.notes.empty());
  EXPECT_NE(step.notes[0].find("no measured step"), std::string::npos);
  const nlohmann::json j = StepReportJson(step);
  EXPECT_TRUE(j["error_pct"].is_null());
  EXPECT_TRUE(j["measured_source"].is_null());
}

}  // namespace
}  // namespace et::sim
