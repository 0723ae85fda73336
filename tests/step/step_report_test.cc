// The per-step report et-sim and et-replay share: MakeRankSteps turns step end
// times into per-step times with a running maximum (an end earlier than the
// previous one gives a 0 step), a mean of last end / steps and the error
// against the rank's measured step; MakeStepReport takes the slowest rank's
// mean as the prediction and the rank-count-weighted mean of the ranks that
// have a truth as the measured step, and notes a missing truth and nodes left
// out; StepReportJson carries exactly the documented keys, with JSON null
// where there is no truth; FormatStepReport says when there is nothing to
// compare with and prints the error otherwise.
#include "step/step_report.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "step/step_model.h"

namespace et {
namespace {

MeasuredStep Truth(double us, const std::string& source = "profiled-run") {
  MeasuredStep m;
  m.us = us;
  m.source = source;
  return m;
}

RankSteps Row(std::vector<int64_t> ranks, double mean_us,
              MeasuredStep measured) {
  RankSteps r;
  r.ranks = std::move(ranks);
  r.mean_us = mean_us;
  r.step_us = {mean_us};
  r.measured = std::move(measured);
  return r;
}

TEST(StepReportTest, RankStepsTakeARunningMaxOfStepEnds) {
  // Step 2 ends (900 us) before step 1 (1000 us): it takes no time of its own.
  RankSteps r = MakeRankSteps({0}, {1000000, 900000, 2500000}, Truth(1000));
  EXPECT_EQ(r.ranks, (std::vector<int64_t>{0}));
  ASSERT_EQ(r.step_us.size(), 3u);
  EXPECT_DOUBLE_EQ(r.step_us[0], 1000);
  EXPECT_DOUBLE_EQ(r.step_us[1], 0);
  EXPECT_DOUBLE_EQ(r.step_us[2], 1500);
  EXPECT_DOUBLE_EQ(r.mean_us, 2500.0 / 3);
  ASSERT_TRUE(r.error_pct.has_value());
  EXPECT_NEAR(*r.error_pct, (2500.0 / 3 - 1000) / 1000 * 100, 1e-9);
  EXPECT_EQ(r.measured.source, "profiled-run");
}

TEST(StepReportTest, RankStepsWithoutTruthHaveNoError) {
  RankSteps r = MakeRankSteps({3, 4}, {2000, 6000}, MeasuredStep());
  EXPECT_DOUBLE_EQ(r.mean_us, 3.0);
  EXPECT_EQ(r.step_us, (std::vector<double>{2.0, 4.0}));
  EXPECT_FALSE(r.error_pct.has_value());
  EXPECT_FALSE(r.measured.us.has_value());
}

TEST(StepReportTest, ReportComparesSlowestRankWithWeightedMeasuredMean) {
  std::vector<RankSteps> rows = {
      Row({0, 1}, 900, Truth(1000)),  // two ranks
      Row({2}, 1200, Truth(700)),     // slowest
      Row({3}, 500, MeasuredStep()),  // no truth: not in the measured mean
  };
  StepReport s =
      MakeStepReport(rows, /*steps=*/3, HostTimeMode::kRecorded, /*left=*/5);
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.host_time, HostTimeMode::kRecorded);
  EXPECT_DOUBLE_EQ(s.predicted_us, 1200);
  ASSERT_TRUE(s.measured_us.has_value());
  EXPECT_DOUBLE_EQ(*s.measured_us, (1000.0 * 2 + 700) / 3);
  EXPECT_EQ(s.measured_source, "profiled-run");
  ASSERT_TRUE(s.error_pct.has_value());
  EXPECT_NEAR(*s.error_pct, (1200 - 900.0) / 900 * 100, 1e-9);
  EXPECT_EQ(s.ranks.size(), 3u);
  // Only the left-out note: there is a truth.
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("5 nodes"), std::string::npos) << s.notes[0];
}

// A CPU-only graph has no GPU warm-up work: its note says what it left out.
TEST(StepReportTest, LeftOutNoteNamesGpuWorkOnlyForGpuGraphs) {
  const std::vector<RankSteps> rows = {Row({0}, 900, Truth(1000))};
  const StepReport gpu = MakeStepReport(rows, 1, HostTimeMode::kUnprofiled, 3);
  const StepReport cpu =
      MakeStepReport(rows, 1, HostTimeMode::kUnprofiled, 3, false);
  ASSERT_EQ(gpu.notes.size(), 1u);
  ASSERT_EQ(cpu.notes.size(), 1u);
  EXPECT_NE(gpu.notes[0].find("warm-up"), std::string::npos) << gpu.notes[0];
  EXPECT_EQ(cpu.notes[0],
            "3 nodes outside the recorded steps left out (ops before the first "
            "step)");
}

// A step whose ops all end before the previous step's last op comes out as
// 0 ms: the report says why instead of printing 0.000 alone.
TEST(StepReportTest, AStepOfZeroIsExplained) {
  const RankSteps rank = MakeRankSteps({0}, {5000000, 4000000}, Truth(800));
  ASSERT_EQ(rank.step_us.size(), 2u);
  EXPECT_EQ(rank.step_us[1], 0.0);
  const StepReport s = MakeStepReport({rank}, 2, HostTimeMode::kRecorded, 0);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(
      s.notes[0].rfind("rank 0: step 1 ends before the step before it", 0), 0u)
      << s.notes[0];
  const StepReport fine =
      MakeStepReport({MakeRankSteps({0}, {4000000, 5000000}, Truth(800))}, 2,
                     HostTimeMode::kRecorded, 0);
  EXPECT_TRUE(fine.notes.empty());
}

// A new user's steps of 385, 172, 132, 125 and 126 ms (issue 49, item 10):
// the mean, 188 ms, is said to be one, with the steps and their median; steady
// steps get no such note.
TEST(StepReportTest, UnsteadyStepsAreSaidWithTheirMedian) {
  std::vector<int64_t> ends;
  int64_t end = 0;
  for (int64_t ms : {385, 172, 132, 125, 126})
    ends.push_back(end += ms * 1000000);
  const StepReport s = MakeStepReport({MakeRankSteps({0}, ends, Truth(130000))},
                                      5, HostTimeMode::kUnprofiled, 0);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0].rfind("rank 0: unsteady steps (385.000, 172.000, "
                             "132.000, 125.000, 126.000 ms; the longest 2.9x "
                             "their median): the predicted step is their "
                             "mean, 188.000 ms, and their median 132.000 ms",
                             0),
            0u)
      << s.notes[0];
  const StepReport steady = MakeStepReport(
      {MakeRankSteps({0}, {125000000, 251000000, 377000000}, Truth(130000))}, 3,
      HostTimeMode::kUnprofiled, 0);
  EXPECT_TRUE(steady.notes.empty());
}

// --slow-rank 3:1.5 on 64 ranks leaves a class of 63: its label must not say
// 0..63.
TEST(StepReportTest, RanksLabelListsRunsOfConsecutiveRanks) {
  std::vector<int64_t> without3;
  for (int64_t r = 0; r < 64; ++r) {
    if (r != 3) without3.push_back(r);
  }
  EXPECT_EQ(RanksLabel(without3), "ranks 0..2,4..63 (63)");
  EXPECT_EQ(RanksLabel({5}), "rank 5");
  EXPECT_EQ(RanksLabel({7, 1, 2}), "ranks 1..2,7 (3)");
  EXPECT_EQ(RanksLabel({0, 1, 2, 3}), "ranks 0..3 (4)");
}

TEST(StepReportTest, ReportNotesAMissingTruth) {
  StepReport u = MakeStepReport({Row({0}, 800, MeasuredStep())}, 1,
                                HostTimeMode::kUnprofiled, 0);
  EXPECT_DOUBLE_EQ(u.predicted_us, 800);
  EXPECT_FALSE(u.measured_us.has_value());
  EXPECT_FALSE(u.error_pct.has_value());
  EXPECT_EQ(u.measured_source, "");
  ASSERT_EQ(u.notes.size(), 1u);
  EXPECT_NE(u.notes[0].find("no measured step without a profiler"),
            std::string::npos)
      << u.notes[0];

  StepReport r = MakeStepReport({Row({0}, 800, MeasuredStep())}, 1,
                                HostTimeMode::kRecorded, 0);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("no profiled step"), std::string::npos)
      << r.notes[0];

  // No truth and nodes left out: both notes.
  StepReport both = MakeStepReport({Row({0}, 800, MeasuredStep())}, 1,
                                   HostTimeMode::kUnprofiled, 12);
  EXPECT_EQ(both.notes.size(), 2u);
}

// The truth timed again after the recording: its own error, and a note only
// when the two truths differ by more than 5%.
TEST(StepReportTest, ATruthTimedAfterTheRecordingHasItsErrorAndItsDrift) {
  MeasuredStep drifted = Truth(1000, "unprofiled-run");
  drifted.after_recording_us = 800;
  StepReport d =
      MakeStepReport({Row({0}, 900, drifted)}, 1, HostTimeMode::kUnprofiled, 0);
  ASSERT_TRUE(d.measured_after_us && d.error_after_pct);
  EXPECT_DOUBLE_EQ(*d.measured_after_us, 800);
  EXPECT_DOUBLE_EQ(*d.error_after_pct, 12.5);
  EXPECT_DOUBLE_EQ(d.error_pct.value_or(0), -10);
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("20.0% faster than before it"), std::string::npos)
      << d.notes[0];
  EXPECT_NE(FormatStepReport(d, "predicted", 1)
                .find("timed again after the recording 0.800 ms: error +12.5%"),
            std::string::npos);

  MeasuredStep steady = Truth(1000, "unprofiled-run");
  steady.after_recording_us = 960;
  StepReport s =
      MakeStepReport({Row({0}, 900, steady)}, 1, HostTimeMode::kUnprofiled, 0);
  EXPECT_TRUE(s.measured_after_us);
  EXPECT_TRUE(s.notes.empty());
}

std::set<std::string> Keys(const nlohmann::json& j) {
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  return keys;
}

TEST(StepReportTest, JsonCarriesExactlyTheDocumentedKeys) {
  StepReport s = MakeStepReport({MakeRankSteps({0}, {1000000}, Truth(800))}, 1,
                                HostTimeMode::kRecorded, 0);
  nlohmann::json j = StepReportJson(s);
  EXPECT_EQ(Keys(j),
            (std::set<std::string>{
                "steps", "host_time", "predicted_us", "measured_us",
                "measured_source", "error_pct", "measured_after_recording_us",
                "error_after_recording_pct", "measured_fastest_block_us",
                "measured_slowest_block_us", "notes", "ranks", "bound"}));
  EXPECT_TRUE(j["measured_fastest_block_us"].is_null());
  EXPECT_TRUE(j["measured_after_recording_us"].is_null());
  EXPECT_TRUE(j["bound"].is_null());  // no bounds given: et-replay's case
  EXPECT_EQ(j["steps"], 1);
  EXPECT_EQ(j["host_time"], "recorded");
  EXPECT_DOUBLE_EQ(j["predicted_us"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(j["measured_us"].get<double>(), 800);
  EXPECT_EQ(j["measured_source"], "profiled-run");
  EXPECT_DOUBLE_EQ(j["error_pct"].get<double>(), 25);
  ASSERT_EQ(j["ranks"].size(), 1u);
  const nlohmann::json& row = j["ranks"][0];
  EXPECT_EQ(Keys(row),
            (std::set<std::string>{"ranks", "step_us", "mean_us", "measured_us",
                                   "measured_source", "error_pct", "bounds"}));
  EXPECT_TRUE(row["bounds"].empty());
  EXPECT_EQ(row["ranks"], nlohmann::json::array({0}));
  EXPECT_DOUBLE_EQ(row["error_pct"].get<double>(), 25);
}

// The truth's timing blocks: their range over the ranks that have them, and
// a note only when they are more than 5% of the truth apart.
TEST(StepReportTest, TimingBlocksRangeOverRanksAndNoteWhenWide) {
  MeasuredStep a = Truth(1000, "unprofiled-run");
  a.blocks_us = {990, 1010, 1000};
  MeasuredStep b = Truth(1000, "unprofiled-run");
  b.blocks_us = {1020, 980, 1000};
  StepReport s = MakeStepReport({Row({0}, 900, a), Row({1}, 950, b)}, 1,
                                HostTimeMode::kUnprofiled, 0);
  ASSERT_TRUE(s.measured_fastest_block_us && s.measured_slowest_block_us);
  EXPECT_DOUBLE_EQ(*s.measured_fastest_block_us, 980);
  EXPECT_DOUBLE_EQ(*s.measured_slowest_block_us, 1020);
  for (const std::string& n : s.notes)
    EXPECT_EQ(n.find("timing blocks"), std::string::npos) << n;  // 4% apart
  EXPECT_NE(FormatStepReport(s, "predicted", 2)
                .find("(unprofiled-run; timing blocks 0.980-1.020 ms)"),
            std::string::npos);
  b.blocks_us = {1100, 900};
  s = MakeStepReport({Row({0}, 900, a), Row({1}, 950, b)}, 1,
                     HostTimeMode::kUnprofiled, 0);
  bool noted = false;
  for (const std::string& n : s.notes)
    noted |= n.find("0.900 to 1.100 ms a step (20.0% of the truth apart") !=
             std::string::npos;
  EXPECT_TRUE(noted);
}

// The side that bounds a step is the largest busy time; the slowest rank's
// steps together are the means; text and JSON carry the same numbers.
TEST(StepReportTest, BoundIsTheLargestSideOfTheSlowestRank) {
  StepBound host_heavy{10000, 9000, 2, 6000, 0, BoundSide::kGpu};
  PickBoundSide(&host_heavy);
  EXPECT_EQ(host_heavy.side, BoundSide::kHost);
  StepBound comm_heavy{10000, 3000, 1, 2000, 5000, BoundSide::kHost};
  PickBoundSide(&comm_heavy);
  EXPECT_EQ(comm_heavy.side, BoundSide::kComm);
  StepBound tie{10000, 4000, 1, 4000, 4000, BoundSide::kComm};
  PickBoundSide(&tie);
  EXPECT_EQ(tie.side, BoundSide::kHost);

  RankSteps fast = MakeRankSteps({0}, {10000000}, MeasuredStep());
  fast.bounds = {comm_heavy};
  RankSteps slow = MakeRankSteps({1}, {10000000, 22000000}, MeasuredStep());
  StepBound gpu_step{12000, 2000, 1, 11000, 0, BoundSide::kGpu};
  PickBoundSide(&gpu_step);
  slow.bounds = {host_heavy, gpu_step};
  const StepReport s =
      MakeStepReport({fast, slow}, 2, HostTimeMode::kUnprofiled, 0);
  ASSERT_TRUE(s.bound.has_value());  // rank 1's: 11 ms per step
  EXPECT_DOUBLE_EQ(s.bound->host_busy_us, 5500);
  EXPECT_DOUBLE_EQ(s.bound->gpu_busy_us, 8500);
  EXPECT_EQ(s.bound->side, BoundSide::kGpu);
  EXPECT_EQ(s.bound->host_threads, 2);
  const nlohmann::json j = StepReportJson(s);
  EXPECT_EQ(j["bound"]["side"], "gpu");
  EXPECT_EQ(j["ranks"][1]["bounds"][0]["side"], "host");
  EXPECT_EQ(j["ranks"][0]["bounds"][0]["side"], "comm");
  const std::string text = FormatStepReport(s, "predicted", 4);
  EXPECT_NE(text.find("GPU-bound: host (2 threads) busy 5.500 of 11.000 ms "
                      "(50%), GPU 8.500 ms (77%)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    step 0: host-bound: host (2 threads) busy 9.000 "
                      "of 10.000 ms (90%)"),
            std::string::npos)
      << text;
}

TEST(StepReportTest, JsonHasNullsWithoutTruth) {
  StepReport s = MakeStepReport({MakeRankSteps({0}, {1000}, MeasuredStep())}, 1,
                                HostTimeMode::kUnprofiled, 0);
  nlohmann::json j = StepReportJson(s);
  EXPECT_EQ(j["host_time"], "unprofiled");
  EXPECT_TRUE(j["measured_us"].is_null());
  EXPECT_TRUE(j["measured_source"].is_null());
  EXPECT_TRUE(j["error_pct"].is_null());
  EXPECT_TRUE(j["ranks"][0]["measured_us"].is_null());
  EXPECT_TRUE(j["ranks"][0]["error_pct"].is_null());
  EXPECT_EQ(j["notes"].size(), 1u);
}

TEST(StepReportTest, TextSaysWhetherThereIsATruth) {
  StepReport none = MakeStepReport({MakeRankSteps({0}, {1000}, MeasuredStep())},
                                   1, HostTimeMode::kUnprofiled, 0);
  std::string text = FormatStepReport(none, "predicted", 8);
  EXPECT_NE(text.find("no measured step"), std::string::npos) << text;
  EXPECT_EQ(text.find("error +"), std::string::npos) << text;
  EXPECT_EQ(text.find("error -"), std::string::npos) << text;

  StepReport with = MakeStepReport(
      {MakeRankSteps({0}, {1200000}, Truth(900, "unprofiled-run"))}, 1,
      HostTimeMode::kUnprofiled, 0);
  text = FormatStepReport(with, "replayed", 8);
  EXPECT_EQ(text.find("no measured step"), std::string::npos) << text;
  EXPECT_NE(text.find("replayed 1.200 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("measured 0.900 ms (unprofiled-run)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("error +33.3%"), std::string::npos) << text;
}

TEST(StepReportTest, TextListsAtMostMaxRanks) {
  std::vector<RankSteps> rows;
  for (int64_t r = 0; r < 5; ++r)
    rows.push_back(MakeRankSteps({r}, {1000 * (r + 1)}, Truth(1)));
  StepReport s = MakeStepReport(rows, 1, HostTimeMode::kRecorded, 0);
  std::string text = FormatStepReport(s, "predicted", 2);
  EXPECT_NE(text.find("rank 0 "), std::string::npos) << text;
  EXPECT_NE(text.find("rank 1 "), std::string::npos) << text;
  EXPECT_EQ(text.find("rank 2 "), std::string::npos) << text;
}

}  // namespace
}  // namespace et
