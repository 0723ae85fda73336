// et-sim --sweep on a real recording (tests/data/pytorch-1.13-cpu ddp_mlp,
// a 4-rank DDP run, rank 0): rows in the given order with world = dp and the
// recorded all-reduce on dp ranks, exposed communication growing with dp, a
// point equal to the --layout run of the same job, the chart well-formed and
// self-contained with one bar per point, and the CLI's one-line errors.
#include "simulator/layout_sweep.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "simulator/report/step_chart.h"

namespace {

std::string Out(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_sweep_" +
         name;
}

// ddp_mlp rank 0 as .et (PyTorch 1.13: no group table, recorded as dp=4).
const std::string& DdpMlpRank0() {
  static const std::string path = [] {
    const std::string data =
        std::string(ET_TEST_DATA) + "/pytorch-1.13-cpu/ddp_mlp_";
    const std::string out = Out("ddp_mlp.0.et");
    et::convert::ConvertOptions options;
    options.rank = 0;
    options.kineto_path = data + "trace_r0.json.gz";
    auto report =
        et::convert::ConvertFile(data + "et_r0.json.gz", out, options);
    EXPECT_TRUE(report.ok()) << report.status();
    return out;
  }();
  return path;
}

et::sim::SimOptions RecordedDp4() {
  et::sim::SimOptions options;
  options.recorded_layout = *et::scaleout::ParseLayout("dp=4");
  return options;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string RunSim(const std::string& args, int* exit_code) {
  FILE* pipe =
      popen((std::string(ET_SIM_BIN) + " " + args + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  *exit_code = pipe ? WEXITSTATUS(pclose(pipe)) : -1;
  return out;
}

TEST(LayoutSweepTest, RowsFollowDpOnDdpMlp) {
  auto sweep = et::scaleout::ParseSweep("dp=1,2,4,8");
  ASSERT_TRUE(sweep.ok());
  auto result =
      et::sim::RunLayoutSweep({DdpMlpRank0(), 0}, RecordedDp4(), *sweep);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->recorded_layout, "dp=4");
  ASSERT_EQ(result->rows.size(), 4u);
  const int64_t dps[] = {1, 2, 4, 8};
  for (size_t i = 0; i < 4; ++i) {
    const et::sim::SweepRow& row = result->rows[i];
    EXPECT_EQ(row.value, dps[i]);
    EXPECT_EQ(row.world, dps[i]);  // dp x tp, tp = 1
    EXPECT_EQ(row.layout.ToString(), absl::StrCat("dp=", dps[i]));
    EXPECT_GT(row.compute_us, 0);
    EXPECT_GE(row.step_us + 1e-6,
              row.compute_us + row.exposed_comm_us + row.other_us);
    // The DDP all-reduce is on the recorded world, which is dp.
    ASSERT_FALSE(row.groups.empty());
    EXPECT_EQ(row.groups[0].group_size, dps[i]);
    if (i > 0) {
      EXPECT_GE(row.exposed_comm_us, result->rows[i - 1].exposed_comm_us);
      EXPECT_GE(row.step_us, result->rows[i - 1].step_us);
    }
  }
  // One replica has nobody to sync with; eight do.
  EXPECT_EQ(result->rows[0].exposed_comm_us, 0);
  EXPECT_GT(result->rows[3].exposed_comm_us, 0);
  EXPECT_GT(result->rows[3].groups[0].time_us,
            result->rows[1].groups[0].time_us);
  // A point is the --layout run of its job, read off the same report.
  et::sim::SimOptions at4 = RecordedDp4();
  at4.layout = *et::scaleout::ParseLayout("dp=4");
  auto sim = et::sim::Simulation::Run({DdpMlpRank0(), 0}, at4);
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_DOUBLE_EQ(result->rows[2].step_us, (*sim)->report().step.predicted_us);
}

TEST(LayoutSweepTest, ChartIsSelfContainedSvgWithABarPerPoint) {
  int rc = 0;
  const std::string chart = Out("chart.svg");
  const std::string out = RunSim(DdpMlpRank0() +
                                     " --recorded-layout dp=4 --sweep "
                                     "dp=1,2,4,8 --chart " +
                                     chart,
                                 &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "no measured truth")) << out;
  EXPECT_EQ(std::system(("xmllint --noout " + chart).c_str()), 0);
  const std::string svg = ReadAll(chart);
  EXPECT_FALSE(absl::StrContains(svg, "<script"));
  EXPECT_FALSE(absl::StrContains(svg, "href"));
  EXPECT_FALSE(absl::StrContains(svg, "url("));
  EXPECT_FALSE(absl::StrContains(svg, "@import"));
  int points = 0;
  for (size_t at = svg.find("<g class=\"point\""); at != std::string::npos;
       at = svg.find("<g class=\"point\"", at + 1)) {
    ++points;
  }
  EXPECT_EQ(points, 4);
  for (const char* label : {"dp=1", "dp=8", "8 ranks", "(ms)", "compute",
                            "exposed communication", "ddp_mlp.0.et"}) {
    EXPECT_TRUE(absl::StrContains(svg, label)) << label;
  }
}

TEST(LayoutSweepTest, JsonHasAPointPerValueAndNoTruth) {
  int rc = 0;
  const std::string out = RunSim(
      DdpMlpRank0() + " --recorded-layout dp=4 --sweep dp=2,16 --json", &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"dimension\": \"dp\"")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"measured_us\": null")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"world\": 16")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\"group_size\": 16")) << out;
}

// ZeRO-3 shards each replica's parameters and gradients (the recording's SGD
// keeps no optimizer state) as dp grows: with a device
// between the peaks at dp=1 and dp=8, the sweep crosses the capacity, and the
// table, the JSON and the chart say which points do not fit.
TEST(LayoutSweepTest, ASweepAcrossTheCapacityMarksThePointsThatDoNotFit) {
  auto sweep = et::scaleout::ParseSweep("dp=1,2,4,8");
  ASSERT_TRUE(sweep.ok());
  et::sim::SimOptions options = RecordedDp4();
  options.shard_stage = et::scaleout::ShardStage::kParameters;
  auto free_run = et::sim::RunLayoutSweep({DdpMlpRank0(), 0}, options, *sweep);
  ASSERT_TRUE(free_run.ok()) << free_run.status();
  const int64_t at1 = free_run->rows[0].peak_bytes;
  const int64_t at8 = free_run->rows[3].peak_bytes;
  ASSERT_GT(at1, at8);
  for (size_t i = 1; i < 4; ++i)
    EXPECT_LE(free_run->rows[i].peak_bytes, free_run->rows[i - 1].peak_bytes);
  const double gib = static_cast<double>(at1 + at8) / 2 / (1 << 30);
  options.device_memory_gib = gib;
  auto capped = et::sim::RunLayoutSweep({DdpMlpRank0(), 0}, options, *sweep);
  ASSERT_TRUE(capped.ok()) << capped.status();
  int no_fit = 0;
  for (const et::sim::SweepRow& row : capped->rows) {
    EXPECT_EQ(row.fits, row.peak_bytes <= row.capacity_bytes);
    no_fit += row.fits ? 0 : 1;
  }
  EXPECT_FALSE(capped->rows[0].fits);
  EXPECT_TRUE(capped->rows[3].fits);
  EXPECT_TRUE(absl::StrContains(et::sim::FormatSweepText(*capped), "NOFIT"));

  int rc = 0;
  const std::string chart = Out("memory_chart.svg");
  const std::string out = RunSim(
      absl::StrCat(DdpMlpRank0(),
                   " --recorded-layout dp=4 --dp-sync zero3 --sweep dp=1,2,4,8 "
                   "--device-memory-gib ",
                   absl::StrFormat("%.12f", gib), " --chart ", chart),
      &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(std::system(("xmllint --noout " + chart).c_str()), 0);
  const std::string svg = ReadAll(chart);
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = svg.find(what); at != std::string::npos;
         at = svg.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("class=\"memory-point"), 4);
  EXPECT_EQ(count("class=\"memory-point no-fit\""), no_fit);
  EXPECT_EQ(count("class=\"no-fit-label\""), no_fit);
  EXPECT_EQ(count("<line class=\"capacity\""), 1);
  EXPECT_EQ(count("<polyline class=\"memory\""), 1);
}

TEST(LayoutSweepTest, BadSweepsAreOneLineUsageErrors) {
  const std::string rank0 = DdpMlpRank0() + " --recorded-layout dp=4 ";
  const std::string chart = Out("never.svg");
  for (const std::string& args :
       {std::string("--sweep ep=1,0"), std::string("--sweep dp=1,0"),
        std::string("--sweep dp=2,x"), std::string("--sweep dp=2,2"),
        std::string("--sweep dp=2 --layout dp=4"),
        std::string("--sweep dp=2 --world 2"), "--chart " + chart,
        "--sweep dp=" + [] {
          std::string v = "1";
          for (int i = 2; i <= 65; ++i) v += "," + std::to_string(i);
          return v;
        }()}) {
    int rc = 0;
    const std::string out = RunSim(rank0 + args, &rc);
    EXPECT_EQ(rc, 2) << args << ": " << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1)
        << args << ": " << out;
    EXPECT_TRUE(absl::StartsWith(out, "et-sim: error: ")) << out;
  }
  EXPECT_NE(access(chart.c_str(), F_OK), 0);  // nothing written
  // A trace that does not say how it was recorded: the point's error, exit 1.
  int rc = 0;
  const std::string out =
      RunSim(DdpMlpRank0() + " --sweep dp=2 --chart " + chart, &rc);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_TRUE(absl::StrContains(out, "--recorded-layout")) << out;
  EXPECT_NE(access(chart.c_str(), F_OK), 0);
}

}  // namespace
