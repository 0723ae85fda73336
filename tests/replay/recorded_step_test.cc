// The replay engine against real recordings: each trace is converted with its
// Kineto trace (recorded per-op times, streams, launches), replayed on the CPU
// backend with `--host-time recorded`, where every op holds its recorded time,
// and the replayed step must come within 10% of the profiled one. What this
// checks is the timeline model (queues, cross-queue waits, launch points inside
// host ops, host gaps); the GPU backend replaces the recorded times with real
// kernels on the same model.
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "replay/mpi_world.h"
#include "replay/replay_session.h"
#include "replay_test_graphs.h"
#include "test_world.h"

namespace et::replay {
namespace {

using testing::World;

struct Replayed {
  double recorded_us = 0;
  double replayed_us = 0;
};

Replayed ConvertAndReplay(const std::string& et, const std::string& kineto,
                          const std::string& out_name) {
  convert::ConvertOptions convert_options;
  convert_options.kineto_path = std::string(ET_TEST_DATA) + "/" + kineto;
  const std::string out = testing::TempEtPath(out_name);
  auto summary = convert::ConvertFile(std::string(ET_TEST_DATA) + "/" + et, out,
                                      convert_options);
  EXPECT_TRUE(summary.ok()) << summary.status();
  ReplayOptions options;
  options.trace = out;
  options.warmup_iterations = 1;
  options.timed_iterations = 2;
  options.host_time = HostTimeMode::kRecorded;
  auto report = RunReplaySession(options, World(), nullptr);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok()) return {};
  EXPECT_EQ(report->step.measured_source, "profiled-run");
  return {report->step.measured_us.value_or(0), report->step.predicted_us};
}

// resnet on a V100: 161 ms, one host thread launching 335 kernels on one
// stream, a 23 ms synchronous host-to-device copy inside aten::to.
TEST(RecordedStepTest, ResnetGpuStepReplaysWithinTenPercent) {
  ASSERT_NE(World(), nullptr);
  const Replayed r =
      ConvertAndReplay("param/resnet_et.1.0.1.json.gz",
                       "param/resnet_kineto.json.gz", "resnet_step.et");
  ASSERT_GT(r.recorded_us, 100000);
  EXPECT_NEAR(r.replayed_us, r.recorded_us, 0.10 * r.recorded_us);
}

// Three CPU training steps of an MLP (tests/data/recorded): small ops whose
// step time is a third Python between the ops.
TEST(RecordedStepTest, CpuMlpStepsReplayWithinTenPercent) {
  ASSERT_NE(World(), nullptr);
  const Replayed r =
      ConvertAndReplay("recorded/mlp_steps_et.json.gz",
                       "recorded/mlp_steps_trace.json.gz", "mlp_steps.et");
  ASSERT_GT(r.recorded_us, 0);
  EXPECT_NEAR(r.replayed_us, r.recorded_us, 0.10 * r.recorded_us);
}

}  // namespace
}  // namespace et::replay
