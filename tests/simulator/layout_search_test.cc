// et-sim --search world=N on a real recording (tests/data/tp-synth: the
// Megatron MLP on one rank, and rank 0 of the same model recorded at tp=2):
// the space is what the trace allows (tp divides the pairs' widths, pp at
// most the layer blocks, a recorded tp kept), every layout of the world is
// there once and ranked by step, each row equals the --layout run of that
// layout, NOFIT marks exactly the peaks over the device with how much over,
// the best is the fastest that fits, and the CLI's refusals, JSON, chart and
// page.
#include "simulator/layout_search.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "scaleout/tensor_parallel.h"
#include "simulator/report/search_report.h"

namespace {

using et::scaleout::Dim;

std::string Out(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_search_" +
         name;
}

std::string Convert(const std::string& stem, const std::string& kineto,
                    int rank) {
  const std::string data = std::string(ET_TEST_DATA) + "/tp-synth/";
  const std::string out = Out(stem + ".et");
  et::convert::ConvertOptions options;
  options.rank = rank;
  options.kineto_path = data + kineto;
  auto report = et::convert::ConvertFile(data + stem, out, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return out;
}

const std::string& OneRank() {
  static const std::string path =
      Convert("tpmlp1_et.json.gz", "tpmlp1_kineto.json.gz", -1);
  return path;
}

const std::string& RecordedTp2Rank0() {
  static const std::string path =
      Convert("tpmlp2_et_r0.json.gz", "tpmlp2_kineto_r0.json.gz", 0);
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs et-sim with `args`; returns its exit status, stdout in `out`.
int EtSim(const std::string& args, std::string* out) {
  const std::string cmd = absl::StrCat(ET_SIM_BIN, " ", args, " 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  return WEXITSTATUS(pclose(p));
}

TEST(LayoutSearchTest, SpaceIsWhatTheTraceAllows) {
  auto graph = et::LoadGraph(OneRank());
  ASSERT_TRUE(graph.ok());
  // The README's model: 2 pairs 256 -> 1024 -> 256 per step, 2 steps.
  const et::scaleout::TpWidths widths =
      et::scaleout::TensorParallelWidths(*graph);
  EXPECT_EQ(widths.pairs, 4);
  EXPECT_EQ(widths.width_gcd, 1024);
  const et::sim::SearchSpace space =
      et::sim::FindSearchSpace(*graph, 4096, std::nullopt);
  ASSERT_FALSE(space.tp.empty());
  for (int64_t tp : space.tp) EXPECT_EQ(1024 % tp, 0) << tp;
  EXPECT_EQ(space.tp.back(), 1024);
  EXPECT_GE(space.pp.size(), 2u);  // 2 linear pairs: at least 2 blocks
  const std::vector<et::scaleout::ParallelLayout> layouts =
      et::sim::SearchLayouts(space, 4096);
  EXPECT_EQ(layouts.size(), space.tp.size() * space.pp.size());
  std::set<std::string> seen;
  for (const auto& l : layouts) {
    EXPECT_EQ(l.world(), 4096);
    EXPECT_TRUE(seen.insert(l.ToString()).second) << l.ToString();
  }
  // A world pp does not divide keeps only the pp that do.
  for (const auto& l : et::sim::SearchLayouts(space, 7))
    EXPECT_EQ(l.ToString(), "dp=7");
}

TEST(LayoutSearchTest, RecordedTpIsKept) {
  auto graph = et::LoadGraph(RecordedTp2Rank0());
  ASSERT_TRUE(graph.ok());
  const et::sim::SearchSpace space =
      et::sim::FindSearchSpace(*graph, 8, std::nullopt);
  EXPECT_EQ(space.recorded.of(Dim::kTp), 2);
  EXPECT_EQ(space.tp, std::vector<int64_t>{2});
  // An odd world has no layout with the recorded tp=2: refused in one line.
  auto result = et::sim::RunLayoutSearch({RecordedTp2Rank0(), 0}, {},
                                         et::sim::LayoutSearch{7});
  ASSERT_FALSE(result.ok());
  EXPECT_TRUE(
      absl::StrContains(result.status().message(), "no layout of 7 ranks"))
      << result.status();
  EXPECT_EQ(std::string(result.status().message()).find('\n'),
            std::string::npos);
}

TEST(LayoutSearchTest, RankedRowsEqualTheirLayoutRuns) {
  et::sim::SimOptions base;
  auto result =
      et::sim::RunLayoutSearch({OneRank(), 0}, base, et::sim::LayoutSearch{16});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_GE(result->rows.size(), 4u);
  for (size_t i = 0; i < result->rows.size(); ++i) {
    const et::sim::SweepRow& row = result->rows[i];
    EXPECT_EQ(row.world, 16);
    EXPECT_EQ(row.value, static_cast<int64_t>(i) + 1);
    if (i > 0) {
      EXPECT_LE(result->rows[i - 1].step_us, row.step_us);
    }
  }
  // The first, the last and a tp row, each against its own --layout run
  // (read from the file, not the search's shared graph).
  std::vector<const et::sim::SweepRow*> check = {&result->rows.front(),
                                                 &result->rows.back()};
  for (const et::sim::SweepRow& row : result->rows)
    if (row.layout.of(Dim::kTp) > 1 && row.layout.of(Dim::kPp) == 1)
      check.push_back(&row);
  for (const et::sim::SweepRow* row : check) {
    et::sim::SimOptions options = base;
    options.layout = row->layout;
    auto sim = et::sim::Simulation::Run({OneRank(), 0}, options);
    ASSERT_TRUE(sim.ok()) << sim.status();
    EXPECT_DOUBLE_EQ((*sim)->report().step.predicted_us, row->step_us)
        << row->layout.ToString();
    ASSERT_TRUE((*sim)->report().memory.has_value());
    EXPECT_EQ((*sim)->report().memory->peak_bytes, row->peak_bytes)
        << row->layout.ToString();
  }
  // tp splits the weights: the tp=2 peak is below the tp=1 one.
  int64_t tp1 = 0, tp2 = 0;
  for (const et::sim::SweepRow& row : result->rows) {
    if (row.layout.of(Dim::kPp) != 1) continue;
    if (row.layout.of(Dim::kTp) == 1) tp1 = row.peak_bytes;
    if (row.layout.of(Dim::kTp) == 2) tp2 = row.peak_bytes;
  }
  EXPECT_GT(tp1, 0);
  EXPECT_LT(tp2, tp1);
}

TEST(LayoutSearchTest, NoFitMarksThePeaksOverTheDevice) {
  auto first =
      et::sim::RunLayoutSearch({OneRank(), 0}, {}, et::sim::LayoutSearch{16});
  ASSERT_TRUE(first.ok()) << first.status();
  int64_t low = INT64_MAX, high = 0;
  for (const auto& row : first->rows) {
    low = std::min(low, row.peak_bytes);
    high = std::max(high, row.peak_bytes);
  }
  ASSERT_LT(low, high);
  et::sim::SimOptions base;
  base.device_memory_gib = static_cast<double>(low + high) / 2 / (1 << 30);
  auto result =
      et::sim::RunLayoutSearch({OneRank(), 0}, base, et::sim::LayoutSearch{16});
  ASSERT_TRUE(result.ok()) << result.status();
  const et::sim::SweepRow* best = et::sim::BestFittingRow(*result);
  ASSERT_NE(best, nullptr);
  bool best_seen = false;
  int nofit = 0;
  for (const auto& row : result->rows) {
    ASSERT_GT(row.capacity_bytes, 0);
    EXPECT_EQ(row.fits, row.peak_bytes <= row.capacity_bytes)
        << row.layout.ToString();
    const std::string reason = et::sim::NoFitReason(row);
    EXPECT_EQ(reason.empty(), row.fits);
    if (!row.fits) {
      ++nofit;
      EXPECT_TRUE(
          absl::StrContains(reason, absl::StrCat("rank ", row.peak_rank)));
    }
    if (&row == best) best_seen = true;
    if (!best_seen) {
      EXPECT_FALSE(row.fits) << row.layout.ToString();
    }
  }
  EXPECT_GT(nofit, 0);
  const std::string text = et::sim::FormatSearchText(*result);
  EXPECT_TRUE(
      absl::StrContains(text, absl::StrCat("best: ", best->layout.ToString())))
      << text;
  auto json = nlohmann::json::parse(et::sim::FormatSearchJson(*result));
  EXPECT_EQ(json["search"]["best"], best->layout.ToString());
  for (const auto& row : json["search"]["layouts"]) {
    const int64_t over = row["over_bytes"];
    EXPECT_EQ(over > 0, !row["fits"].get<bool>());
    if (over > 0) {
      EXPECT_EQ(over, row["peak_allocated_bytes"].get<int64_t>() -
                          row["capacity_bytes"].get<int64_t>());
    }
  }
}

TEST(LayoutSearchTest, MegatronTp8PublicTraceSaysWhatIsMissing) {
  // tests/data/public: rank 0 of a Megatron-LM tp=8 job whose one recorded
  // step is a forward pass: its linears are there, its parameters are not
  // (no optimizer or backward op reads them).
  const std::string data = std::string(ET_TEST_DATA) + "/public/";
  const std::string path = Out("megatron.et");
  et::convert::ConvertOptions convert;
  convert.kineto_path = data + "megatron_kineto_0.json.gz";
  ASSERT_TRUE(
      et::convert::ConvertFile(data + "megatron_et_0.json.gz", path, convert)
          .ok());
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("tp=8,dp=64");
  auto sim = et::sim::Simulation::Run({path, 0}, options);
  ASSERT_FALSE(sim.ok());
  const std::string message(sim.status().message());
  EXPECT_TRUE(absl::StrContains(message, "no parameter to split")) << message;
  EXPECT_TRUE(absl::StrContains(message, "0 optimizer ops")) << message;
  EXPECT_FALSE(absl::StrContains(message, " 0 2-D GEMMs")) << message;
  auto graph = et::LoadGraph(path);
  ASSERT_TRUE(graph.ok());
  const et::sim::SearchSpace space =
      et::sim::FindSearchSpace(*graph, 64, std::nullopt);
  EXPECT_EQ(space.tp, std::vector<int64_t>{1});
  EXPECT_TRUE(absl::StrContains(space.notes[0], "no parameter to split"))
      << space.notes[0];
}

TEST(LayoutSearchTest, CommandLine) {
  std::string out;
  const std::string trace = OneRank();
  EXPECT_EQ(EtSim(trace + " --search world=0", &out), 2);
  EXPECT_TRUE(absl::StrContains(out, "at least one rank")) << out;
  EXPECT_EQ(EtSim(trace + " --search world=8 --layout dp=8", &out), 2);
  EXPECT_TRUE(absl::StrContains(out, "does not take --layout")) << out;
  EXPECT_EQ(EtSim(trace + " --search world=8 --sweep dp=1,2", &out), 2);
  EXPECT_TRUE(absl::StrContains(out, "does not take --sweep")) << out;
  EXPECT_EQ(EtSim(trace + " --search nodes=8", &out), 2);
  const std::string chart = Out("search.svg"), page = Out("search.html");
  ASSERT_EQ(EtSim(trace + " --search world=8 --json --chart " + chart +
                      " --html " + page,
                  &out),
            0)
      << out;
  auto json = nlohmann::json::parse(out.substr(out.find('{')));
  const auto& layouts = json["search"]["layouts"];
  ASSERT_GE(layouts.size(), 2u);
  const std::string svg = ReadAll(chart);
  const std::string html = ReadAll(page);
  for (const auto& row : layouts) {
    const std::string layout = row["layout"];
    EXPECT_TRUE(absl::StrContains(svg, "data-layout=\"" + layout + "\""))
        << layout;
    EXPECT_TRUE(absl::StrContains(html, layout)) << layout;
  }
  EXPECT_TRUE(absl::StrContains(html, "A layout search"));
  EXPECT_TRUE(absl::StrContains(
      html, "Best that fits: <b>" + json["search"]["best"].get<std::string>()))
      << html.substr(0, 200);
}

}  // namespace
