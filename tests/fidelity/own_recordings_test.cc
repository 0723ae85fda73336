// et-sim on the project's own recordings (issue 36), each against the truth
// its recorder stored (examples/record_trace.py: the median of 5 blocks of 20
// unprofiled steps): tests/data/h100-gpu-session (H100, torch 2.11) and
// tests/data/torch2-cpu (torch 2.11 on a quiet 16-core CPU). et-sim is
// deterministic, so these are the error bounds reached (docs/benchmarks.md,
// "Our own recordings"):
//   - H100 with the recording's light profile (et-convert --host-profile):
//     the default prediction within 5% (conv +0.7%, moe +2.4%); with the
//     documented defaults instead conv is -22.8%, moe -11.2%;
//   - H100 gpt (no light profile recorded): documented defaults within 2%;
//   - every recording: --host-time recorded within 1% of the profiled step;
//   - the single-rank CPU recordings: the unprofiled prediction is high
//     (+6% to +45%: the profiler's cost on ops nested in others is not all
//     taken out; docs/step-model.md), asserted within 50% and above the
//     truth, so that a change that moves them is seen.
#include <cmath>
#include <filesystem>
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "simulator/simulation.h"
#include "step/host_profile.h"

namespace et::sim {
namespace {

std::string Data(const std::string& folder) {
  return std::string(ET_TEST_DATA) + "/" + folder + "/";
}

// Converts `name` from `folder` with its Kineto trace and, when `light` is
// set, the costs learned from its light profile stored in the .et.
std::string Convert(const std::string& folder, const std::string& name,
                    bool light) {
  const std::string out = std::string(ET_BINARY_DIR) + "/own_" + name +
                          (light ? "_light" : "") + ".et";
  convert::ConvertOptions options;
  options.kineto_path = Data(folder) + name + "_kineto.json.gz";
  if (light) {
    auto learned =
        LearnHostProfile(Data(folder) + name + "_kineto_light.json.gz");
    EXPECT_TRUE(learned.ok()) << learned.status();
    if (learned.ok()) options.host_costs = learned->model;
  }
  auto s =
      convert::ConvertFile(Data(folder) + name + "_et.json.gz", out, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return out;
}

Report RunSim(const std::string& path, HostTimeMode mode) {
  SimOptions options;
  options.host_time = mode;
  auto sim = Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? (*sim)->report() : Report{};
}

StepReport Simulate(const std::string& path, HostTimeMode mode) {
  return RunSim(path, mode).step;
}

double ErrorPct(const StepReport& step) {
  EXPECT_TRUE(step.error_pct.has_value());
  return step.error_pct.value_or(1e9);
}

// The host-cost line (one per rank) names where the costs came from.
bool HasNote(const Report& report, const std::string& text) {
  for (const std::string& n : report.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

class H100LightProfile : public testing::TestWithParam<std::string> {};

TEST_P(H100LightProfile, DefaultWithinFivePercentWithTheStoredCosts) {
  const std::string name = GetParam();
  const std::string et = Convert("h100-gpu-session", name, /*light=*/true);
  const Report learned_run = RunSim(et, HostTimeMode::kUnprofiled);
  const StepReport& learned = learned_run.step;
  EXPECT_EQ(learned.measured_source, "unprofiled-run");
  EXPECT_LE(std::abs(ErrorPct(learned)), 5.0)
      << name << ": predicted " << learned.predicted_us << " us";
  EXPECT_TRUE(HasNote(learned_run, "stored in the .et")) << name;

  // The documented defaults miss the same recording low: they charge a
  // launching op 1.5 us + 4 us per launch, where this host's light profile
  // shows 9-11 us + 7-8 us (cuDNN's host work, the optimizer's Python).
  const std::string plain = Convert("h100-gpu-session", name, false);
  const Report documented = RunSim(plain, HostTimeMode::kUnprofiled);
  EXPECT_LT(ErrorPct(documented.step), -10.0) << name;
  EXPECT_TRUE(HasNote(documented, "documented defaults")) << name;

  const StepReport recorded = Simulate(et, HostTimeMode::kRecorded);
  EXPECT_EQ(recorded.measured_source, "profiled-run");
  EXPECT_LE(std::abs(ErrorPct(recorded)), 1.0) << name;
}

INSTANTIATE_TEST_SUITE_P(Models, H100LightProfile,
                         testing::Values("conv", "moe"));

TEST(OwnRecordingsTest, H100GptWithoutALightProfileKeepsTheDefaults) {
  const std::string et = Convert("h100-gpu-session", "gpt", false);
  EXPECT_LE(std::abs(ErrorPct(Simulate(et, HostTimeMode::kUnprofiled))), 2.0);
  EXPECT_LE(std::abs(ErrorPct(Simulate(et, HostTimeMode::kRecorded))), 1.0);
}

class CpuRecording : public testing::TestWithParam<std::string> {};

TEST_P(CpuRecording, RecordedExactUnprofiledHighByTheNestedOpsCost) {
  const std::string name = GetParam();
  const std::string et = Convert("torch2-cpu", name, false);
  const double unprofiled = ErrorPct(Simulate(et, HostTimeMode::kUnprofiled));
  EXPECT_GT(unprofiled, 0.0) << name;
  EXPECT_LT(unprofiled, 50.0) << name;
  EXPECT_LE(std::abs(ErrorPct(Simulate(et, HostTimeMode::kRecorded))), 1.0)
      << name;
}

INSTANTIATE_TEST_SUITE_P(Models, CpuRecording,
                         testing::Values("cpu_mlp_w256", "cpu_gpt_w256",
                                         "cpu_conv_w16", "cpu_moe_w128"));

}  // namespace
}  // namespace et::sim
