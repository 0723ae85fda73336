// Page faults beside the truth (tests/data/cpu-faults, issue 36): twelve
// single-rank torch 2.11 CPU recordings whose recorder counted the minor
// page faults a step in the run the truth comes from, in the recorded
// steps and in the light profile's, and measured what one fault costs on
// the recording host (docs/step-model.md, "Page faults").
//
// Asserted: the counts and the cost reach the prediction, which adds the
// truth's run's faults beyond its base's at that cost and says so; with
// the light profile the misses shrink (median 20.3% without the faults,
// 14.3% with; 11.4% with since the light probe's cost is scaled to the
// model). The bounds are today's: the host of this run was noisy
// (two truths of one recording differ by up to 39%), so 10% is not the
// gate here.
#include <algorithm>
#include <cmath>
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

std::string Data(const std::string& name) {
  return std::string(ET_TEST_DATA) + "/cpu-faults/" + name;
}

nlohmann::json ReadJson(const std::string& path) {
  std::string text;
  EXPECT_TRUE(ReadFileMaybeGzip(path, &text).ok()) << path;
  return nlohmann::json::parse(text, nullptr, false);
}

// Converts `name`, with its light profile when `light`; returns the .et.
std::string Convert(const std::string& name, bool light) {
  const std::string out = std::string(ET_BINARY_DIR) + "/cpu_faults_" + name +
                          (light ? "_light" : "") + ".et";
  convert::ConvertOptions options;
  options.kineto_path = Data(name + "_kineto.json.gz");
  if (light) {
    auto learned = LearnHostProfile(Data(name + "_kineto_light.json.gz"));
    EXPECT_TRUE(learned.ok()) << learned.status();
    if (learned.ok()) options.host_costs = learned->model;
  }
  auto s = convert::ConvertFile(Data(name + "_et.json.gz"), out, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return out;
}

Report Simulate(const std::string& path) {
  SimOptions options;
  options.host_time = HostTimeMode::kUnprofiled;
  auto sim = Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? (*sim)->report() : Report{};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

bool SaysPageFaults(const Report& report, const std::string& base) {
  for (const std::string& note : report.notes) {
    if (note.find("page faults: the unprofiled run paid") !=
            std::string::npos &&
        note.find(base) != std::string::npos)
      return true;
  }
  return false;
}

TEST(PageFaultCorpus, RecorderCountsFaultsAndTheirCost) {
  for (const char* name : kCpuCorpusSingles) {
    const nlohmann::json trace =
        ReadJson(Data(std::string(name) + "_kineto.json.gz"));
    const nlohmann::json light =
        ReadJson(Data(std::string(name) + "_kineto_light.json.gz"));
    EXPECT_GE(trace.value("unprofiled_page_faults_per_step", -1.0), 0) << name;
    EXPECT_GE(trace.value("profiled_page_faults_per_step", -1.0), 0) << name;
    EXPECT_GE(light.value("light_page_faults_per_step", -1.0), 0) << name;
    const nlohmann::json& cal = trace["page_fault_calibration"];
    // A 4 KiB fault on a server CPU: zeroing the page and the trap, 0.5-5 us.
    EXPECT_GT(cal.value("ns_per_fault", 0.0), 500) << name;
    EXPECT_LT(cal.value("ns_per_fault", 0.0), 5000) << name;
    EXPECT_EQ(cal.value("faults", 0), 16384)
        << name << ": 64 MiB in 4 KiB pages";
  }
}

// The step gains the truth's run's faults beyond the light profile's, at the
// measured cost: the prediction moves by exactly that, and the misses shrink.
TEST(PageFaultCorpus, TheTruthsFaultsAreAddedAtTheirMeasuredCost) {
  std::vector<double> with_faults, without_faults;
  for (const char* name : kCpuCorpusSingles) {
    const nlohmann::json trace =
        ReadJson(Data(std::string(name) + "_kineto.json.gz"));
    const nlohmann::json light =
        ReadJson(Data(std::string(name) + "_kineto_light.json.gz"));
    const double added_us =
        (trace["unprofiled_page_faults_per_step"].get<double>() -
         light["light_page_faults_per_step"].get<double>()) *
        std::round(
            trace["page_fault_calibration"]["ns_per_fault"].get<double>()) /
        1e3;
    const Report report = Simulate(Convert(name, /*light=*/true));
    EXPECT_TRUE(SaysPageFaults(report, "the light profile")) << name;
    ASSERT_TRUE(report.step.measured_us.has_value()) << name;
    const double truth = *report.step.measured_us;
    const double predicted = report.step.predicted_us;
    with_faults.push_back(std::abs(predicted / truth - 1) * 100);
    without_faults.push_back(std::abs((predicted - added_us) / truth - 1) *
                             100);
    EXPECT_LE(with_faults.back(), 42.0) << name;
  }
  EXPECT_LE(Median(with_faults), 12.5);
  EXPECT_GT(Median(without_faults), Median(with_faults) + 4.0);
}

// Without a light profile the base is the recorded steps' faults.
TEST(PageFaultCorpus, TheTraceAloneCountsTheRecordedStepsFaults) {
  std::vector<double> misses;
  for (const char* name : kCpuCorpusSingles) {
    const Report report = Simulate(Convert(name, /*light=*/false));
    EXPECT_TRUE(SaysPageFaults(report, "the recorded steps")) << name;
    ASSERT_TRUE(report.step.error_pct.has_value()) << name;
    misses.push_back(std::abs(*report.step.error_pct));
  }
  EXPECT_LE(Median(misses), 25.0);
}

// Recorded steps far apart are the machine's, and the report says so:
// cpu_moe_w128's five took 57-87 ms (51% apart), cpu_mlp_w256's 29.7-30.8.
TEST(PageFaultCorpus, UnsteadyRecordedStepsAreNoted) {
  auto noted = [](const Report& report) {
    for (const std::string& note : report.notes) {
      if (note.find("the recording machine was not steady") !=
          std::string::npos)
        return true;
    }
    return false;
  };
  EXPECT_TRUE(noted(Simulate(Convert("cpu_moe_w128", /*light=*/false))));
  EXPECT_FALSE(noted(Simulate(Convert("cpu_mlp_w256", /*light=*/false))));
}

// A 2-rank DDP recording with a light profile per rank: each rank learns
// from its own (the notes name each file), the faults of each rank are its
// own. The light profiles give +22.1%: the light steps themselves are 15.4
// and 16.1 ms against 11.5 and 11.4 ms truths (docs/step-model.md, "Page
// faults"). The trace alone, once +90.7%, is now within 1%.
TEST(PageFaultCorpus, EachRankLearnsFromItsOwnLightProfile) {
  auto convert = [](bool light) {
    for (int r = 0; r < 2; ++r) {
      const std::string suffix = "_r" + std::to_string(r) + ".json.gz";
      convert::ConvertOptions options;
      options.kineto_path = Data("ddp_gpt_2r_kineto" + suffix);
      if (light) {
        auto learned =
            LearnHostProfile(Data("ddp_gpt_2r_kineto_light" + suffix));
        EXPECT_TRUE(learned.ok()) << learned.status();
        if (learned.ok()) options.host_costs = learned->model;
      }
      const std::string out = std::string(ET_BINARY_DIR) + "/cpu_faults_ddp" +
                              (light ? "_light." : ".") + std::to_string(r) +
                              ".et";
      EXPECT_TRUE(
          convert::ConvertFile(Data("ddp_gpt_2r_et" + suffix), out, options)
              .ok());
    }
    SimOptions options;
    options.host_time = HostTimeMode::kUnprofiled;
    auto sim = Simulation::Run({std::string(ET_BINARY_DIR) + "/cpu_faults_ddp" +
                                    (light ? "_light" : "") + ".%d.et",
                                2},
                               options);
    EXPECT_TRUE(sim.ok()) << sim.status();
    return sim.ok() ? (*sim)->report() : Report{};
  };
  const Report alone = convert(false);
  const Report light = convert(true);
  ASSERT_TRUE(alone.step.error_pct && light.step.error_pct);
  // The trace alone -0.9% (the profiler's cost per op measured in it, with
  // the gloo wait left to the simulator), its light profiles +22.1%.
  EXPECT_LE(std::abs(*alone.step.error_pct), 5.0);
  EXPECT_LE(std::abs(*light.step.error_pct), 25.0);
  for (int r = 0; r < 2; ++r) {
    const std::string file = "ddp_gpt_2r_kineto_light_r" + std::to_string(r);
    bool named = false;
    for (const std::string& note : light.notes) {
      named |= note.find("rank " + std::to_string(r) + ": host cost") == 0 &&
               note.find(file) != std::string::npos;
    }
    EXPECT_TRUE(named) << "rank " << r << " learns from " << file;
  }
  EXPECT_TRUE(SaysPageFaults(light, "the light profile"));
}

}  // namespace
}  // namespace et::sim
