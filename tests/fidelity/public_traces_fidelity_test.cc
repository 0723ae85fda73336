// et-sim on the public corpus (tests/data/public; its README says where each
// file comes from): `--host-time recorded` against the recorded steps of
// traces nobody here recorded (issue 48). et-sim is deterministic, so these
// are error bounds, not timings.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "simulator/simulation.h"

namespace et::sim {
namespace {

// Chakra's linked "ET+" files of one DLRM step on 8 GPUs (astra-sim
// 24S_HML_FP): host ops carry Kineto's `ts` and `dur`, GPU ops their kernels.
// Before the converter kept the host ops' `dur`, et-sim predicted 1.265 ms
// against 14.665 ms (-91.4%): only the kernels had times.
//
// The ranks' recordings begin up to 7.5 ms apart (rank 1 first, rank 7 last)
// and end within 0.12 ms of each other, at the step's last collectives. An
// early rank waits for the late ones inside a blocking copy to the host (rank
// 1's `aten::copy_`: 6.58 ms, behind the forward's all-to-all), and that wait
// is in the copy's recorded duration. Replayed as recorded, every rank starts
// at 0: the early ranks match their own recorded steps (the slowest, rank 1,
// within 5%), and the late ranks (0, 2, 6, 7, whose recorded steps are 12.3 to
// 14.3 ms) wait for rank 1 and end with it. The report's job line compares the
// slowest rank's step with the mean of the ranks' recorded steps (15.8 ms),
// which no rank ran: +19% (docs/et-convert.md, "Times").
TEST(PublicTracesFidelityTest, DlrmEtPlusRecordedHostTimeReplaysItsSteps) {
  const std::string pattern = std::string(ET_BINARY_DIR) + "/public_dlrm.%d.et";
  for (int rank = 0; rank < 8; ++rank) {
    convert::ConvertOptions options;
    options.rank = rank;
    const std::string in = std::string(ET_TEST_DATA) + "/public/dlrm_eg_" +
                           std::to_string(rank) + "_plus.json.gz";
    char out[512];
    std::snprintf(out, sizeof(out), pattern.c_str(), rank);
    auto converted = convert::ConvertFile(in, out, options);
    ASSERT_TRUE(converted.ok()) << converted.status();
  }
  SimOptions recorded;
  recorded.host_time = HostTimeMode::kRecorded;
  auto sim = Simulation::Run({pattern, 8}, recorded);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const StepReport& step = (*sim)->report().step;
  EXPECT_EQ(step.measured_source, "profiled-run");

  double longest_us = 0;
  for (const RankSteps& row : step.ranks) {
    ASSERT_TRUE(row.measured.us.has_value());
    longest_us = std::max(longest_us, *row.measured.us);
  }
  // The job's step is the slowest rank's: against the longest recorded one.
  EXPECT_LE(std::abs(step.predicted_us / longest_us - 1), 0.05)
      << "predicted " << step.predicted_us << " us vs " << longest_us;
  for (const RankSteps& row : step.ranks) {
    const double measured_us = *row.measured.us;
    if (measured_us >= 0.85 * longest_us) {  // began with the first ranks
      EXPECT_LE(std::abs(row.mean_us / measured_us - 1), 0.05)
          << "rank " << row.ranks[0] << ": " << row.mean_us << " us vs "
          << measured_us;
    } else {  // began late: waits for the slowest rank, as recorded it did not
      EXPECT_GE(row.mean_us, 0.9 * step.predicted_us)
          << "rank " << row.ranks[0];
    }
  }
}

// Issue 48, item 6: HTA's trace_diff control trace (rank 3 of 8, Kineto
// alone, A100) runs its backward on the autograd engine's thread while the
// main thread's `## backward ##` range waits 34 ms for it. Without that wait
// the main thread ran on: --host-time recorded gave steps of 64.1 and 53.5 ms
// against 76.2 and 76.7 recorded (-16%, -30%). The waits come from the
// recorded times (converter/graph/cross_thread_waits.h).
TEST(PublicTracesFidelityTest, CrossThreadWaitsKeepTheRecordedSteps) {
  const std::string out = std::string(ET_BINARY_DIR) + "/public_hta_control.et";
  auto converted = convert::ConvertFile(
      std::string(ET_TEST_DATA) + "/public/hta_control.json.gz", out, {});
  ASSERT_TRUE(converted.ok()) << converted.status();
  SimOptions recorded;
  recorded.host_time = HostTimeMode::kRecorded;
  auto sim = Simulation::Run({out, 0}, recorded);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const StepReport& step = (*sim)->report().step;
  ASSERT_TRUE(step.measured_us.has_value());
  EXPECT_LE(std::abs(step.predicted_us / *step.measured_us - 1), 0.05)
      << "predicted " << step.predicted_us << " us vs " << *step.measured_us;
  for (const RankSteps& row : step.ranks) {
    for (double us : row.step_us) EXPECT_GT(us, 0.85 * *step.measured_us);
  }
}

// Issue 48, item 2: the astra-sim "eg.rank_0" file is the ET of a 2-GPU
// ResNet step (tensors on cuda:0) without its Kineto trace, so it records no
// GPU op and no duration. It was called "a CPU only" run with "no GPU work";
// its GPU time is unknown, and its ops are priced as a GPU's roofline.
TEST(PublicTracesFidelityTest, GpuJobWithoutKinetoIsNotCalledACpuRun) {
  const std::string out = std::string(ET_BINARY_DIR) + "/public_eg_rank0.et";
  convert::ConvertOptions options;
  auto converted = convert::ConvertFile(
      std::string(ET_TEST_DATA) + "/public/eg.rank_0.pt.trace.json.gz", out,
      options);
  ASSERT_TRUE(converted.ok()) << converted.status();
  SimOptions defaults;
  defaults.device = "A100";
  auto sim = Simulation::Run({out, 0}, defaults);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const Report& report = (*sim)->report();
  ASSERT_TRUE(report.step.bound.has_value());
  EXPECT_TRUE(report.step.bound->gpu_ops_unrecorded);
  const std::string bound = FormatStepBound(*report.step.bound);
  EXPECT_NE(bound.find("GPU ops not recorded"), std::string::npos) << bound;
  EXPECT_EQ(bound.find("no GPU work"), std::string::npos) << bound;
  std::string notes;
  for (const std::string& n : report.notes) notes += n + "\n";
  for (const std::string& n : report.step.notes) notes += n + "\n";
  EXPECT_EQ(notes.find("CPU only"), std::string::npos) << notes;
  EXPECT_NE(notes.find("a GPU job's ET"), std::string::npos) << notes;
  EXPECT_FALSE(report.step.error_pct.has_value());
}

// HTA's ROCm 6.2 trace of a small training loop on an MI250 (Kineto alone):
// replayed as recorded, its two steps within 5% on the mean, with the AMD
// runtime's hexadecimal stream handles read. A step runs from its start to
// the next one's: 9.325 ms (its ProfilerStep#1 range is 9.288) and 0.049.
TEST(PublicTracesFidelityTest, AmdRocmTraceReplaysItsSteps) {
  const std::string out = std::string(ET_BINARY_DIR) + "/public_hta_mi250.et";
  auto converted = convert::ConvertFile(
      std::string(ET_TEST_DATA) + "/public/hta_mi250_rocm6.json.gz", out, {});
  ASSERT_TRUE(converted.ok()) << converted.status();
  SimOptions recorded;
  recorded.host_time = HostTimeMode::kRecorded;
  auto sim = Simulation::Run({out, 0}, recorded);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const StepReport& step = (*sim)->report().step;
  ASSERT_TRUE(step.measured_us.has_value());
  EXPECT_NEAR(*step.measured_us, (9325.301 + 49.073) / 2, 1.0);
  EXPECT_LE(std::abs(step.predicted_us / *step.measured_us - 1), 0.05)
      << "predicted " << step.predicted_us << " us vs " << *step.measured_us;
}

// HTA's DLRM-like rank 0 of 16 (Kineto alone): replayed as recorded, four of
// its five steps are within 2% of their recorded ones; the last one's GPU
// work ran on 158 ms past the step's end (374.5 ms against 209.8-216.5), so
// the mean misses by -13%: the report says it step by step.
TEST(PublicTracesFidelityTest, AMeanMissFromOneStepIsSaidStepByStep) {
  const std::string out = std::string(ET_BINARY_DIR) + "/public_hta_nq.et";
  ASSERT_TRUE(
      convert::ConvertFile(std::string(ET_TEST_DATA) +
                               "/public/hta_negative_queue_rank0.json.gz",
                           out, {})
          .ok());
  SimOptions recorded;
  recorded.host_time = HostTimeMode::kRecorded;
  auto sim = Simulation::Run({out, 0}, recorded);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const StepReport& step = (*sim)->report().step;
  ASSERT_EQ(step.ranks.size(), 1u);
  const RankSteps& rank = step.ranks[0];
  ASSERT_EQ(rank.step_us.size(), 5u);
  ASSERT_EQ(rank.measured.steps_us.size(), 5u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_LE(std::abs(rank.step_us[k] / rank.measured.steps_us[k] - 1), 0.02)
        << "step " << k;
  }
  EXPECT_GT(rank.measured.steps_us[4], 1.5 * rank.step_us[4]);
  EXPECT_TRUE(std::any_of(
      step.notes.begin(), step.notes.end(), [](const std::string& n) {
        return n.find("step by step:") != std::string::npos &&
               n.find("step 4 ") != std::string::npos;
      }));
}

}  // namespace
}  // namespace et::sim
