// A real two-stage pipeline recording (tests/data/pp: stage 0 sends its
// activations to stage 1, which sends their gradient back; torch 1.13 CPU +
// gloo) taken to --layout pp=2,dp=4: every rank of the written job sends to
// and receives from the other stage of its own data-parallel replica, not
// the recorded rank (before: every one of the 8 files named rank 1, a stage-0
// rank of replica 1 on the new job), and the simulation of the scaled job
// runs. A trace that records no rank of its own cannot place its peers.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/node_model.h"
#include "scaleout/layout_job.h"
#include "scaleout/rank_job_writer.h"
#include "simulator/simulation.h"

namespace {

namespace fs = std::filesystem;

std::string Out(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_pp_" + name;
}

// Rank `rank` of tests/data/pp converted with its profiler trace; `with_rank`
// false converts it as a file of unknown rank.
std::string ConvertRank(int rank, bool with_rank = true) {
  const std::string data = std::string(ET_TEST_DATA) + "/pp/";
  const std::string out =
      Out(absl::StrFormat("pp2.%d%s.et", rank, with_rank ? "" : "_norank"));
  et::convert::ConvertOptions options;
  if (with_rank) {
    options.rank = rank;
    options.kineto_path =
        data + absl::StrFormat("pp2_2r_kineto_r%d.json.gz", rank);
  }
  auto report = et::convert::ConvertFile(
      data + absl::StrFormat("pp2_2r_et_r%d.json.gz", rank), out, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return out;
}

// The other stage's rank in `rank`'s replica on pp=2,dp=4 (pp stride 4).
int64_t OtherStage(int64_t rank) { return (rank + 4) % 8; }

std::unique_ptr<et::sim::Simulation> RunLayout(const std::string& path) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("pp=2,dp=4");
  options.keep_graph = true;
  auto sim = et::sim::Simulation::Run({path, 0}, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? std::move(*sim) : nullptr;
}

TEST(PpLayoutTest, WrittenRanksTalkToTheirOwnReplica) {
  for (int recorded_rank : {0, 1}) {
    SCOPED_TRACE(recorded_rank);
    auto sim = RunLayout(ConvertRank(recorded_rank));
    ASSERT_NE(sim, nullptr);
    EXPECT_EQ(sim->recorded_layout()->layout.ToString(), "pp=2");
    EXPECT_EQ(sim->world_size(), 8);
    EXPECT_EQ(sim->report().step.steps, 3);

    const std::string dir = Out(absl::StrCat("job", recorded_rank));
    fs::remove_all(dir);
    auto source = et::scaleout::LayoutRankSource(
        *sim->layout_graph(), *sim->recorded_layout(),
        *et::scaleout::ParseLayout("pp=2,dp=4"));
    ASSERT_TRUE(source.ok()) << source.status();
    auto job = et::scaleout::WriteRankJob({dir, "pp2", 8}, *source);
    ASSERT_TRUE(job.ok()) << job.status();
    for (int64_t rank = 0; rank < 8; ++rank) {
      SCOPED_TRACE(rank);
      auto model = et::NodeModel::Load(job->rank_paths[rank]);
      ASSERT_TRUE(model.ok()) << model.status();
      int sends = 0, recvs = 0;
      for (et::NodeIndex i = 0; i < model->size(); ++i) {
        const et::NodeKind kind = model->kind(i);
        if (kind != et::NodeKind::kSend && kind != et::NodeKind::kRecv)
          continue;
        (kind == et::NodeKind::kSend ? sends : recvs) += 1;
        EXPECT_EQ(model->comm(i)->peer, OtherStage(rank)) << model->id(i);
        EXPECT_EQ(model->comm(i)->bytes, 16 * 256 * 4);
      }
      EXPECT_EQ(sends, 3);
      EXPECT_EQ(recvs, 3);
    }
  }
}

TEST(PpLayoutTest, TraceWithoutItsRankCannotPlacePeers) {
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("pp=2,dp=4");
  options.recorded_layout = *et::scaleout::ParseLayout("pp=2");
  auto sim = et::sim::Simulation::Run({ConvertRank(0, false), 0}, options);
  ASSERT_FALSE(sim.ok());
  const std::string message(sim.status().message());
  EXPECT_TRUE(absl::StrContains(message,
                                "talks to rank 1 but the trace "
                                "records no rank of its own"))
      << message;
  EXPECT_TRUE(absl::StrContains(message, "c10d::")) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

}  // namespace
