// A sweep point's row read off a hand-made report: the slowest rank's totals
// per step, the collectives summed per group (largest first), the memory
// verdict; the text marks the point that does not fit and only the recorded
// job's point carries an error; the chart draws one bar per point.
#include "simulator/report/sweep_report.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simulator/report/step_chart.h"

namespace et::sim {
namespace {

// Two rank classes (the second slower) over 4 steps; two dp collectives and
// one tp collective.
Report TwoClassReport() {
  Report r;
  r.world_size = 8;
  r.step.steps = 4;
  r.step.predicted_us = 2500;
  RankStats fast;
  fast.step_ns = 8'000'000;
  fast.compute_ns = 6'000'000;
  fast.exposed_comm_ns = 400'000;
  RankStats slow;
  slow.step_ns = 10'000'000;
  slow.compute_ns = 7'000'000;
  slow.exposed_comm_ns = 2'000'000;
  r.ranks = {fast, slow};
  CollectiveRow dp1{"ALL_REDUCE", "dp", 1 << 20, 4, 4, 1'000'000, 0, 0, false};
  CollectiveRow dp2{"ALL_REDUCE", "dp", 1 << 10, 4, 4, 600'000, 0, 0, false};
  CollectiveRow tp{"ALL_GATHER", "tp", 1 << 12, 2, 8, 4'000'000, 0, 0, false};
  r.collectives = {dp1, tp, dp2};
  r.memory =
      MemorySummary{3LL << 30, 2LL << 30, "--device-memory-gib", false, "", ""};
  return r;
}

TEST(SweepReportTest, RowIsTheSlowestRankPerStep) {
  scaleout::ParallelLayout layout;
  layout.of(scaleout::Dim::kDp) = 4;
  layout.of(scaleout::Dim::kTp) = 2;
  const SweepRow row = SweepRowOf(TwoClassReport(), layout, 4);
  EXPECT_EQ(row.value, 4);
  EXPECT_EQ(row.world, 8);
  EXPECT_DOUBLE_EQ(row.step_us, 2500);
  EXPECT_DOUBLE_EQ(row.compute_us, 7'000'000 / 1e3 / 4);
  EXPECT_DOUBLE_EQ(row.exposed_comm_us, 2'000'000 / 1e3 / 4);
  EXPECT_DOUBLE_EQ(row.other_us, 2500 - 1750 - 500);
  ASSERT_EQ(row.groups.size(), 2u);
  EXPECT_EQ(row.groups[0].name, "tp");  // 1 ms a step before dp's 0.4
  EXPECT_DOUBLE_EQ(row.groups[0].time_us, 1000);
  EXPECT_EQ(row.groups[1].name, "dp");
  EXPECT_DOUBLE_EQ(row.groups[1].time_us, 400);
  EXPECT_EQ(row.groups[1].group_size, 4);
  EXPECT_EQ(row.peak_bytes, 3LL << 30);
  EXPECT_FALSE(row.fits);
  EXPECT_FALSE(row.measured_us.has_value());
}

TEST(SweepReportTest, TextJsonAndChartSayWhatTheRowsHold) {
  scaleout::ParallelLayout layout;
  layout.of(scaleout::Dim::kDp) = 4;
  SweepResult result;
  result.trace = "step.et";
  result.recorded_layout = "dp=1";
  result.rows.push_back(SweepRowOf(TwoClassReport(), layout, 4));
  Report recorded = TwoClassReport();
  recorded.step.measured_us = 2000;
  recorded.step.error_pct = 25;
  recorded.memory->fits = true;
  result.rows.push_back(SweepRowOf(recorded, layout, 1));

  const std::string text = FormatSweepText(result);
  EXPECT_TRUE(absl::StrContains(text, "3.000 NOFIT")) << text;
  EXPECT_TRUE(absl::StrContains(text, "+25.0%")) << text;
  EXPECT_TRUE(absl::StrContains(text, "dp=1 is the recorded job")) << text;
  EXPECT_TRUE(absl::StrContains(text, "against 2.00 GiB per device")) << text;

  const nlohmann::json json = nlohmann::json::parse(FormatSweepJson(result));
  const nlohmann::json& points = json["sweep"]["points"];
  ASSERT_EQ(points.size(), 2u) << json;
  EXPECT_EQ(points[0]["fits"], false) << json;
  EXPECT_TRUE(points[0]["error_pct"].is_null()) << json;
  EXPECT_DOUBLE_EQ(points[1]["error_pct"].get<double>(), 25) << json;

  const std::string svg = StepChartSvg(result);
  EXPECT_TRUE(absl::StartsWith(svg, "<?xml") || absl::StartsWith(svg, "<svg"))
      << svg.substr(0, 80);
  EXPECT_TRUE(absl::StrContains(svg, "step.et")) << svg.substr(0, 400);
}

// The memory line has an axis of its own whose top holds every peak, the
// step labels are drawn over the line (after it, with a halo), and the x
// axis says what the swept dimension counts.
TEST(SweepReportTest, ChartMemoryLineHasItsAxisAndSparesTheLabels) {
  scaleout::ParallelLayout layout;
  layout.of(scaleout::Dim::kTp) = 2;
  SweepResult result;
  result.dim = scaleout::Dim::kTp;
  result.recorded_layout = "dp=1";
  for (int tp : {1, 2, 4}) {
    result.rows.push_back(SweepRowOf(TwoClassReport(), layout, tp));
  }
  const std::string svg = StepChartSvg(result);
  EXPECT_TRUE(absl::StrContains(svg, "tp (tensor-parallel ranks)")) << svg;
  EXPECT_FALSE(absl::StrContains(svg, "data-parallel replicas")) << svg;
  ASSERT_TRUE(absl::StrContains(svg, "class=\"memory-axis\"")) << svg;
  // The axis's highest tick label is at or above the largest peak.
  double top_tick = 0;
  std::string unit;
  for (size_t at = svg.find("class=\"memory-axis\""); at != std::string::npos;
       at = svg.find(" fill=\"#59a14f\">", at + 1)) {
    double value = 0;
    char name[8] = {0};
    const size_t text = svg.find('>', at + 1);
    if (std::sscanf(svg.c_str() + text + 1, "%lf %7[A-Za-z]", &value, name) ==
            2 &&
        std::string(name).find("iB") != std::string::npos) {
      top_tick = std::max(top_tick, value);
      unit = name;
    }
  }
  const double unit_bytes = unit == "GiB"   ? 1024.0 * 1024 * 1024
                            : unit == "MiB" ? 1024.0 * 1024
                                            : 1024.0;
  for (const SweepRow& row : result.rows) {
    EXPECT_GE(top_tick * unit_bytes, static_cast<double>(row.peak_bytes))
        << svg;
  }
  const size_t line = svg.find("class=\"memory\"");
  const size_t label = svg.find("class=\"step-label\"");
  ASSERT_NE(line, std::string::npos);
  ASSERT_NE(label, std::string::npos);
  EXPECT_LT(line, label) << "labels are drawn over the memory line";
  EXPECT_TRUE(absl::StrContains(svg, "paint-order=\"stroke\"")) << svg;
}

TEST(SweepReportTest, NoPointMeasuredMeansNoTruth) {
  SweepResult result;
  result.rows.push_back(SweepRowOf(TwoClassReport(), {}, 2));
  EXPECT_TRUE(absl::StrContains(SweepTruthNote(result),
                                "no measured truth, no error reported"));
}

}  // namespace
}  // namespace et::sim
