// Multi-rank recordings of one SPMD program (tests/data/recorded/ddp_gpt_*:
// DDP over gloo, recorded with examples/record_trace.py on a 2-core CPU),
// converted with their Kineto traces and simulated, records nothing new.
// Ranks of one program must convert to graphs of the same shape, and no step
// may come out as 0 ms. Before the call-tree repair (converter/
// nesting_repair.h), rank 0 of the 2-rank recording converted to 1,087 nodes
// against rank 1's 1,323 (its optimizer step folded into a gloo:all_reduce)
// and the cross-rank check said all was well; such recordings also gave
// steps of 0 ms. The DDP pair of tests/data/dp-sync (wide_ddp2) must pair
// every collective across its two ranks, in the converter's check and in the
// simulation of both.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/rank_files.h"
#include "converter/converter.h"
#include "converter/cross_rank_check.h"
#include "gtest/gtest.h"
#include "model/node_model.h"
#include "simulator/simulation.h"

namespace {

struct Recording {
  std::string tag;  // file prefix in tests/data/recorded
  int ranks;
  int steps;               // ProfilerStep#N spans recorded
  int damaged_rank;        // the rank whose ET the observer nested wrongly
  int64_t graph_nodes;     // every rank's converted graph
  int64_t nodes_per_step;  // of them, in each step
};

const Recording kRecordings[] = {
    {"ddp_gpt_2r", 2, 3, 0, 1323, 440},
    {"ddp_gpt_4r", 4, 2, 0, 882, 440},
};

std::string Data(const std::string& rel) {
  return std::string(ET_TEST_DATA) + "/recorded/" + rel;
}

std::string Out(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

// Converts every rank of `r`; returns the .et pattern ("...%d.et").
std::string ConvertRecording(const Recording& r) {
  const std::string pattern = Out(r.tag + ".%d.et");
  for (int rank = 0; rank < r.ranks; ++rank) {
    SCOPED_TRACE(absl::StrFormat("%s rank %d", r.tag, rank));
    et::convert::ConvertOptions options;
    options.rank = rank;
    options.kineto_path =
        Data(absl::StrFormat("%s_kineto_r%d.json.gz", r.tag, rank));
    auto report = et::convert::ConvertFile(
        Data(absl::StrFormat("%s_et_r%d.json.gz", r.tag, rank)),
        et::ExpandRankPattern(pattern, rank), options);
    EXPECT_TRUE(report.ok()) << report.status();
    if (!report.ok()) continue;
    EXPECT_EQ(report->written_nodes, r.graph_nodes);
    // The damaged rank converts to the same graph because its tree was
    // rebuilt, and says so.
    bool repaired = false;
    for (const std::string& w : report->warnings)
      repaired |= absl::StrContains(w, "call tree repaired");
    EXPECT_EQ(repaired, rank == r.damaged_rank);
  }
  return pattern;
}

TEST(RankRecordingsTest, RanksOfOneProgramConvertToGraphsOfOneShape) {
  for (const Recording& r : kRecordings) {
    SCOPED_TRACE(r.tag);
    const std::string pattern = ConvertRecording(r);
    std::vector<et::convert::RankTrace> ranks;
    for (int rank = 0; rank < r.ranks; ++rank)
      ranks.push_back({rank, et::ExpandRankPattern(pattern, rank)});
    auto check = et::convert::CheckRanksAgree(ranks);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_TRUE(check->collective_mismatches.empty());
    EXPECT_EQ(check->shape_mismatch, "");
    std::string by_step;
    for (int s = 0; s < r.steps; ++s)
      by_step += absl::StrFormat(" %d", r.nodes_per_step);
    EXPECT_TRUE(absl::StrContains(check->shape, "by step" + by_step))
        << check->shape;
  }
}

// Every rank's every step takes time, simulated together (the pattern) and
// each rank alone on a larger world, in both host-time modes: the issue saw
// `steps 349.168 0.000 ms` with --world 1024 and --host-time recorded.
TEST(RankRecordingsTest, NoStepOfZero) {
  for (const Recording& r : kRecordings) {
    SCOPED_TRACE(r.tag);
    const std::string pattern = ConvertRecording(r);
    std::vector<et::sim::SimInput> inputs = {{pattern, r.ranks}};
    for (int rank = 0; rank < r.ranks; ++rank)
      inputs.push_back({et::ExpandRankPattern(pattern, rank), 0});
    for (const et::sim::SimInput& input : inputs) {
      for (et::HostTimeMode mode :
           {et::HostTimeMode::kUnprofiled, et::HostTimeMode::kRecorded}) {
        SCOPED_TRACE(input.path);
        et::sim::SimOptions options;
        options.host_time = mode;
        if (input.pattern_ranks == 0) options.world_size = 1024;
        auto sim = et::sim::Simulation::Run(input, options);
        ASSERT_TRUE(sim.ok()) << sim.status();
        const et::StepReport& steps = (*sim)->report().step;
        EXPECT_EQ(steps.steps, r.steps);
        for (const et::RankSteps& rs : steps.ranks) {
          ASSERT_EQ(rs.step_us.size(), static_cast<size_t>(r.steps));
          for (double us : rs.step_us) EXPECT_GT(us, 1000.0);  // > 1 ms
        }
      }
    }
  }
}

// tests/data/dp-sync/wide_ddp2 (DDP over gloo, 2 ranks, 3 steps): each rank
// issued 7 all-reduces (step 0 one bucket of everything, steps 1 and 2 the
// rebuilt buckets) and 2 broadcasts. Rank 1's observer hung two bucket
// gloo:all_reduce records under a ReluBackward0 that started before their
// c10d::allreduce_ calls; the converter matched work records only to earlier
// calls, so they became two more collectives on rank 1 alone, and simulating
// both ranks ended in "collective #9 ... issued by rank 1 (node 2570); never
// issued by rank(s) 0". Now both ranks convert to the same collectives and
// the simulation of both runs to the end.
TEST(RankRecordingsTest, WideDdpRanksPairEveryCollective) {
  const std::string pattern = Out("wide_ddp2.%d.et");
  const std::vector<int64_t> all_reduce_bytes = {
      33857540, 4202500, 29388800, 266240, 4202500, 29388800, 266240};
  std::vector<et::convert::RankTrace> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    et::convert::ConvertOptions options;
    options.rank = rank;
    const std::string path = et::ExpandRankPattern(pattern, rank);
    auto report = et::convert::ConvertFile(
        absl::StrFormat("%s/dp-sync/wide_ddp2_et_r%d.json.gz", ET_TEST_DATA,
                        rank),
        path, options);
    ASSERT_TRUE(report.ok()) << report.status();
    ranks.push_back({rank, path});
    auto model = et::NodeModel::Load(path);
    ASSERT_TRUE(model.ok()) << model.status();
    std::vector<int64_t> bytes;
    int broadcasts = 0;
    for (size_t i = 0; i < model->size(); ++i) {
      if (model->kind(i) != et::NodeKind::kCollective) continue;
      const et::CommSpec* c = model->comm(i);
      if (c->type == ChakraProtoMsg::ALL_REDUCE) bytes.push_back(c->bytes);
      broadcasts += c->type == ChakraProtoMsg::BROADCAST;
    }
    EXPECT_EQ(bytes, all_reduce_bytes);
    EXPECT_EQ(broadcasts, 2);
  }
  auto check = et::convert::CheckRanksAgree(ranks);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->collective_mismatches.empty())
      << check->collective_mismatches.front();
  EXPECT_EQ(check->shape_mismatch, "");

  auto sim = et::sim::Simulation::Run({pattern, 2}, et::sim::SimOptions{});
  ASSERT_TRUE(sim.ok()) << sim.status();
  EXPECT_EQ((*sim)->report().step.steps, 3);
  int64_t calls = 0;
  for (const et::sim::CollectiveRow& c : (*sim)->report().collectives)
    calls += c.calls;
  EXPECT_EQ(calls, 9);
}

}  // namespace
