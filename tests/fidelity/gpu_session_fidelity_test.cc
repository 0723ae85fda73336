// et-sim on the recordings our own recorder made on an H100 (tests/data/
// h100-gpu-session: a GPT block, a mixture-of-experts layer, a CNN; each
// Kineto file carries its truths). With the profiled host time every one
// must meet its profiled step: the GPU side, the launches and the sync waits
// of moe's `nonzero` are modelled right there. The unprofiled prediction of
// the GPU-bound GPT block must meet the step measured without a profiler; the
// host-bound moe and conv are the host model's (issue 36, docs/benchmarks.md).
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

std::string Convert(const std::string& model) {
  const std::string dir = std::string(ET_TEST_DATA) + "/h100-gpu-session/";
  const std::string out =
      std::string(ET_BINARY_DIR) + "/gpu_session_" + model + ".et";
  convert::ConvertOptions options;
  options.kineto_path = dir + model + "_kineto.json.gz";
  auto s = convert::ConvertFile(dir + model + "_et.json.gz", out, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return out;
}

StepReport Simulate(const std::string& path, HostTimeMode mode) {
  SimOptions options;
  options.host_time = mode;
  auto sim = Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? (*sim)->report().step : StepReport{};
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

}  // namespace
}  // namespace et::sim
