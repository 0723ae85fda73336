// et-sim on eight GPU models nobody tuned the host model on, recorded twice on
// two starts of the H100 machine an hour apart (tests/data/gpu-heldout and
// gpu-heldout-b, issue 36's "models kept aside": an LSTM at two sizes, two GPT
// blocks, two MLPs, a CNN and a mixture-of-experts layer, by
// tests/gpu/gpu_heldout.sh). What holds on both: the profiled host time
// replays the profiled step, and the GPU-bound MLP meets both of its truths.
// What does not: the host-bound models' unprofiled steps. Their light
// profiles' predictions swing between the two starts (conv_w32 -46% then
// +32%; median 11.6% then 31.7%, the documented defaults 27.4% then 10.5%)
// while their truths move by up to 50% within one recording
// (docs/benchmarks.md, "GPU models kept aside"). Asserted: the report says
// when the two truths disagree, and today's medians over both starts, so that
// a change that moves them is seen.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/fidelity/own_recording.h"

namespace et::sim {
namespace {

using Recording = std::pair<std::string, std::string>;  // folder, model

const std::vector<Recording>& Recordings() {
  static const auto* recordings = [] {
    auto* all = new std::vector<Recording>;
    for (const char* folder : {"gpu-heldout", "gpu-heldout-b"}) {
      for (const char* model :
           {"gpu_rnn_w512", "gpu_gpt_w256", "gpu_mlp_w64", "gpu_conv_w32",
            "gpu_moe_w512", "gpu_rnn_w1024", "gpu_mlp_w2048", "gpu_gpt_w768"})
        all->emplace_back(folder, model);
    }
    return all;
  }();
  return *recordings;
}

StepReport Simulate(const Recording& r, bool light, HostTimeMode mode) {
  return SimulateOwnRecording(ConvertOwnRecording(r.first, r.second, light),
                              mode)
      .step;
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

class GpuHeldOut : public testing::TestWithParam<Recording> {};

// The GPU side, the launches and the waits are right on every model: what
// the unprofiled prediction misses is the host's cost alone.
TEST_P(GpuHeldOut, RecordedHostTimeMeetsTheProfiledStep) {
  const StepReport step = Simulate(GetParam(), false, HostTimeMode::kRecorded);
  EXPECT_EQ(step.steps, 3);
  EXPECT_EQ(step.measured_source, "profiled-run");
  ASSERT_TRUE(step.error_pct.has_value());
  EXPECT_LE(std::abs(*step.error_pct), 2.0)
      << GetParam().first << "/" << GetParam().second << ": predicted "
      << step.predicted_us << " us";
}

// Where the truth timed after the recording is more than 5% from the one
// before (twelve of the sixteen: -15% to +50%), the report says so: the
// prediction cannot be judged closer than that.
TEST_P(GpuHeldOut, TheReportSaysWhenTheTwoTruthsDisagree) {
  const StepReport step = Simulate(GetParam(), true, HostTimeMode::kUnprofiled);
  ASSERT_TRUE(step.measured_us.has_value());
  ASSERT_TRUE(step.measured_after_us.has_value());
  const double moved_pct =
      100 * (*step.measured_after_us / *step.measured_us - 1);
  EXPECT_EQ(HasNote(step, "timed after the recording"), std::abs(moved_pct) > 5)
      << GetParam().second << ": the truth moved " << moved_pct << "%";
}

// With a light profile the report says how far the light profiler's cost
// per op, which the model takes out of every op, moves the step: its ops a
// step, in ms per 1 us.
TEST_P(GpuHeldOut, TheReportSaysWhatTheProfilersCostPerOpMoves) {
  const Recording& r = GetParam();
  auto learned = LearnHostProfile(std::string(ET_TEST_DATA) + "/" + r.first +
                                  "/" + r.second + "_kineto_light.json.gz");
  ASSERT_TRUE(learned.ok()) << learned.status();
  const Report report = SimulateOwnRecording(
      ConvertOwnRecording(r.first, r.second, true), HostTimeMode::kUnprofiled);
  const std::string moves =
      absl::StrFormat("moves the host's time by %.3f ms a step",
                      learned->model.light_ops_per_step * 1e-3);
  EXPECT_TRUE(std::any_of(
      report.notes.begin(), report.notes.end(),
      [&](const std::string& n) { return n.find(moves) != std::string::npos; }))
      << r.second << ": no note saying " << moves;
}

INSTANTIATE_TEST_SUITE_P(H100, GpuHeldOut, testing::ValuesIn(Recordings()));

// The GPU-bound MLP (6.28 ms of kernels a step): both truths agree on both
// starts and the prediction meets them, with or without its light profile.
TEST(GpuHeldOutSet, GpuBoundMlpMeetsBothTruths) {
  for (const char* folder : {"gpu-heldout", "gpu-heldout-b"}) {
    for (bool light : {false, true}) {
      const StepReport step =
          Simulate({folder, "gpu_mlp_w2048"}, light, HostTimeMode::kUnprofiled);
      ASSERT_TRUE(step.error_pct.has_value());
      ASSERT_TRUE(step.error_after_pct.has_value());
      EXPECT_LE(std::abs(*step.error_pct), 3.0) << folder << " " << light;
      EXPECT_LE(std::abs(*step.error_after_pct), 3.0) << folder << " " << light;
    }
  }
}

// Today's standing over both starts, against the truth timed before each
// recording: median miss 18.3% with the light profiles, 21.9% with the
// documented defaults; neither is the 10%.
TEST(GpuHeldOutSet, MediansOverBothStarts) {
  std::vector<double> light_err, default_err;
  for (const Recording& r : Recordings()) {
    const StepReport light = Simulate(r, true, HostTimeMode::kUnprofiled);
    const StepReport documented = Simulate(r, false, HostTimeMode::kUnprofiled);
    ASSERT_TRUE(light.error_pct.has_value()) << r.second;
    ASSERT_TRUE(documented.error_pct.has_value()) << r.second;
    light_err.push_back(std::abs(*light.error_pct));
    default_err.push_back(std::abs(*documented.error_pct));
  }
  EXPECT_LE(Median(light_err), 20.0);
  EXPECT_LE(Median(default_err), 24.0);
}

}  // namespace
}  // namespace et::sim
