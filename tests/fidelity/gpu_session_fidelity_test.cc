// et-sim on the recordings our own recorder made on an H100 (tests/data/
// h100-gpu-session: a GPT block, a mixture-of-experts layer, a CNN; each
// Kineto file carries its truths). With the profiled host time every one
// must meet its profiled step: the GPU side, the launches and the sync waits
// of moe's `nonzero` are modelled right there. The unprofiled prediction of
// the GPU-bound GPT block must meet the step measured without a profiler; the
// host-bound moe and conv meet theirs within 5% with the host costs their own
// light profiles teach (et-convert --host-profile, stored in the .et; issue
// 36): conv +0.7%, moe +2.4%, where the documented defaults miss them by
// -22.8% and -11.2% (docs/benchmarks.md, "Our own recordings"). The same
// session's torch 2.11 CPU recordings (tests/data/torch2-cpu, one rank each):
// recorded host time within 1% of the profiled step; the unprofiled step
// high (+3% to +42%: the profiler's cost on ops nested in others is not all
// taken out, docs/step-model.md), asserted above the truth and below a bound
// per model so that a change that moves them is seen.
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "model/node_model.h"
#include "tests/fidelity/own_recording.h"

namespace et::sim {
namespace {

std::string Convert(const std::string& model, bool light = false,
                    const std::string& folder = "h100-gpu-session") {
  return ConvertOwnRecording(folder, model, light);
}

Report RunSim(const std::string& path, HostTimeMode mode) {
  return SimulateOwnRecording(path, mode);
}

StepReport Simulate(const std::string& path, HostTimeMode mode) {
  return RunSim(path, mode).step;
}

// The host-cost line (one per rank) names where the costs came from.
bool HasNote(const Report& report, const std::string& text) {
  for (const std::string& n : report.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

class GpuSessionFidelity : public testing::TestWithParam<std::string> {};

TEST_P(GpuSessionFidelity, RecordedHostTimeMeetsTheProfiledStep) {
  const StepReport step =
      Simulate(Convert(GetParam()), HostTimeMode::kRecorded);
  EXPECT_EQ(step.steps, 3);
  EXPECT_EQ(step.measured_source, "profiled-run");
  ASSERT_TRUE(step.error_pct.has_value());
  EXPECT_LE(std::abs(*step.error_pct), 2.0)
      << GetParam() << ": predicted " << step.predicted_us << " us";
}

INSTANTIATE_TEST_SUITE_P(H100Session, GpuSessionFidelity,
                         testing::Values("gpt", "moe", "conv"));

TEST(GpuSessionFidelity, GpuBoundGptBlockMeetsItsUnprofiledStep) {
  const StepReport step = Simulate(Convert("gpt"), HostTimeMode::kUnprofiled);
  EXPECT_EQ(step.measured_source, "unprofiled-run");
  ASSERT_TRUE(step.measured_us.has_value());
  EXPECT_NEAR(*step.measured_us, 9535.0, 1.0);  // the recorder's truth
  ASSERT_TRUE(step.error_pct.has_value());
  EXPECT_LE(std::abs(*step.error_pct), 5.0) << step.predicted_us << " us";
}

class LightProfileFidelity : public testing::TestWithParam<std::string> {};

TEST_P(LightProfileFidelity, HostBoundStepWithinFivePercentWithItsOwnCosts) {
  const std::string model = GetParam();
  const Report learned =
      RunSim(Convert(model, true), HostTimeMode::kUnprofiled);
  ASSERT_TRUE(learned.step.error_pct.has_value());
  EXPECT_LE(std::abs(*learned.step.error_pct), 5.0)
      << model << ": predicted " << learned.step.predicted_us << " us";
  EXPECT_TRUE(HasNote(learned, "stored in the .et")) << model;
  // The documented defaults miss the same recording low: they charge a
  // launching op 1.5 us + 4 us per launch, where this host's light profile
  // shows 9-11 us + 7-8 us (cuDNN's host work, the optimizer's Python).
  const Report documented = RunSim(Convert(model), HostTimeMode::kUnprofiled);
  ASSERT_TRUE(documented.step.error_pct.has_value());
  EXPECT_LT(*documented.step.error_pct, -10.0) << model;
  EXPECT_TRUE(HasNote(documented, "documented defaults")) << model;
}

INSTANTIATE_TEST_SUITE_P(H100Session, LightProfileFidelity,
                         testing::Values("moe", "conv"));

// The same two models recorded again on another H100 machine an hour later
// (`*_b`: its host ran conv's step in 2.12 ms, not 2.65), never used to
// choose anything: their own light profiles predict them within 10% (conv
// +1.6%, moe -6.3%).
class HeldOutLightProfileFidelity : public testing::TestWithParam<std::string> {
};

TEST_P(HeldOutLightProfileFidelity, WithinTenPercentWithItsOwnCosts) {
  const Report learned =
      RunSim(Convert(GetParam(), true), HostTimeMode::kUnprofiled);
  ASSERT_TRUE(learned.step.error_pct.has_value());
  EXPECT_LE(std::abs(*learned.step.error_pct), 10.0)
      << GetParam() << ": predicted " << learned.step.predicted_us << " us";
  const StepReport recorded =
      Simulate(Convert(GetParam()), HostTimeMode::kRecorded);
  ASSERT_TRUE(recorded.error_pct.has_value());
  EXPECT_LE(std::abs(*recorded.error_pct), 2.0) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(H100SessionHeldOut, HeldOutLightProfileFidelity,
                         testing::Values("moe_b", "conv_b"));

struct Torch2Cpu {
  const char* name;
  double max_error_pct;  // unprofiled |error|
};

class Torch2CpuFidelity : public testing::TestWithParam<Torch2Cpu> {};

// Without a light profile a CPU-only trace loses the profiler's cost per op
// measured in it: a leaf op that computes nothing spans only the profiler
// (view_op_span_us, 11-25 us here) and two ops nested in one are the
// profiler's cost outside a span apart (nested_op_gap_us, 5.6-10.0 us).
TEST_P(Torch2CpuFidelity, RecordedExactUnprofiledLessTheSpansCostPerOp) {
  const Torch2Cpu p = GetParam();
  const std::string et = Convert(p.name, false, "torch2-cpu");
  auto model = NodeModel::Load(et);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_GT(model->info().nested_op_gap_ns, 5000) << p.name;
  EXPECT_LT(model->info().nested_op_gap_ns, 11000) << p.name;
  EXPECT_GT(model->info().view_op_span_ns, 10000) << p.name;
  EXPECT_LT(model->info().view_op_span_ns, 26000) << p.name;
  const StepReport unprofiled = Simulate(et, HostTimeMode::kUnprofiled);
  ASSERT_TRUE(unprofiled.error_pct.has_value());
  EXPECT_LT(std::abs(*unprofiled.error_pct), p.max_error_pct) << p.name;
  const StepReport recorded = Simulate(et, HostTimeMode::kRecorded);
  ASSERT_TRUE(recorded.error_pct.has_value());
  EXPECT_LE(std::abs(*recorded.error_pct), 1.0) << p.name;
}

// Recorded on the GPU machine's 16-core host (docs/step-model.md); the
// one-op-node rule gave +5.5, +17.8, +41.9, +3.4%.
INSTANTIATE_TEST_SUITE_P(
    SingleRank, Torch2CpuFidelity,
    testing::Values(Torch2Cpu{"cpu_mlp_w256", 10.0},    // +9.6%
                    Torch2Cpu{"cpu_gpt_w256", 8.0},     // -7.0%
                    Torch2Cpu{"cpu_conv_w16", 49.0},    // +48.3%
                    Torch2Cpu{"cpu_moe_w128", 35.0}));  // +34.1%

}  // namespace
}  // namespace et::sim
