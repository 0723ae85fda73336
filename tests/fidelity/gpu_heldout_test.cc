// et-sim on eight GPU models nobody tuned the host model on (tests/data/
// gpu-heldout, issue 36's "models kept aside": an LSTM at two sizes, two GPT
// blocks, two MLPs, a CNN and a mixture-of-experts layer, recorded on an H100
// by tests/gpu/gpu_heldout.sh). What holds: the profiled host time replays the
// profiled step; the GPU-bound MLP meets both of its truths. What does not
// yet: the host-bound models' unprofiled steps, -46% to +7% with their own
// light profiles, whose truths moved by up to 50% between before and after
// the recording on that host (docs/benchmarks.md, "GPU models kept aside").
// Asserted so that a change that moves them is seen: the light profile beats
// the documented defaults on the median and on all but one model, and the
// report says when the two truths disagree.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fidelity/own_recording.h"

namespace et::sim {
namespace {

const std::vector<std::string>& Models() {
  static const auto* models = new std::vector<std::string>{
      "gpu_rnn_w512", "gpu_gpt_w256",  "gpu_mlp_w64",   "gpu_conv_w32",
      "gpu_moe_w512", "gpu_rnn_w1024", "gpu_mlp_w2048", "gpu_gpt_w768"};
  return *models;
}

std::string Convert(const std::string& model, bool light) {
  return ConvertOwnRecording("gpu-heldout", model, light);
}

Report RunSim(const std::string& path, HostTimeMode mode) {
  return SimulateOwnRecording(path, mode);
}

bool HasNote(const StepReport& step, const std::string& text) {
  return std::any_of(
      step.notes.begin(), step.notes.end(),
      [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}

class GpuHeldOut : public testing::TestWithParam<std::string> {};

// The GPU side, the launches and the waits are right on every model: what
// the unprofiled prediction misses is the host's cost alone.
TEST_P(GpuHeldOut, RecordedHostTimeMeetsTheProfiledStep) {
  const StepReport step =
      RunSim(Convert(GetParam(), false), HostTimeMode::kRecorded).step;
  EXPECT_EQ(step.steps, 3);
  EXPECT_EQ(step.measured_source, "profiled-run");
  ASSERT_TRUE(step.error_pct.has_value());
  EXPECT_LE(std::abs(*step.error_pct), 2.0)
      << GetParam() << ": predicted " << step.predicted_us << " us";
}

// Where the truth timed after the recording is more than 5% from the one
// before (six of the eight: -11% to +50%), the report says so: the
// prediction cannot be judged closer than that.
TEST_P(GpuHeldOut, TheReportSaysWhenTheTwoTruthsDisagree) {
  const Report report =
      RunSim(Convert(GetParam(), true), HostTimeMode::kUnprofiled);
  ASSERT_TRUE(report.step.measured_us.has_value());
  ASSERT_TRUE(report.step.measured_after_us.has_value());
  const double moved_pct =
      100 * (*report.step.measured_after_us / *report.step.measured_us - 1);
  EXPECT_EQ(HasNote(report.step, "timed after the recording"),
            std::abs(moved_pct) > 5)
      << GetParam() << ": the truth moved " << moved_pct << "%";
}

INSTANTIATE_TEST_SUITE_P(H100, GpuHeldOut, testing::ValuesIn(Models()));

// The GPU-bound MLP (6.28 ms of kernels a step): both truths agree and the
// prediction meets them, with or without its light profile.
TEST(GpuHeldOutSet, GpuBoundMlpMeetsBothTruths) {
  for (bool light : {false, true}) {
    const StepReport step =
        RunSim(Convert("gpu_mlp_w2048", light), HostTimeMode::kUnprofiled).step;
    ASSERT_TRUE(step.error_pct.has_value());
    ASSERT_TRUE(step.error_after_pct.has_value());
    EXPECT_LE(std::abs(*step.error_pct), 3.0) << light;
    EXPECT_LE(std::abs(*step.error_after_pct), 3.0) << light;
  }
}

// Today's standing, against the truth timed before the recording: with the
// light profiles the median miss is 11.6% (documented defaults 27.4%), and
// the light profile is closer on every model but the larger GPT block
// (-3.9% -> +7.0%).
TEST(GpuHeldOutSet, LightProfilesBeatTheDocumentedDefaults) {
  std::vector<double> light_err, default_err;
  int closer = 0;
  for (const std::string& model : Models()) {
    const StepReport light =
        RunSim(Convert(model, true), HostTimeMode::kUnprofiled).step;
    const StepReport documented =
        RunSim(Convert(model, false), HostTimeMode::kUnprofiled).step;
    ASSERT_TRUE(light.error_pct.has_value()) << model;
    ASSERT_TRUE(documented.error_pct.has_value()) << model;
    light_err.push_back(std::abs(*light.error_pct));
    default_err.push_back(std::abs(*documented.error_pct));
    if (light_err.back() < default_err.back()) ++closer;
  }
  EXPECT_LE(Median(light_err), 15.0);
  EXPECT_GE(Median(default_err), Median(light_err) + 10.0);
  EXPECT_GE(closer, 7);
}

}  // namespace
}  // namespace et::sim
