// The end-to-end CPU + MPI test: convert the real 4-rank DDP (gloo)
// trace with our converter, then `mpirun -np 4 et-replay 'ddp_mlp.%d.et'
// --device cpu` and check that each rank really ran the recorded communication.
// Expected values come from the recording script
// (tests/data/pytorch-1.13-cpu/ddp.py): an MLP Linear(64,256) + Linear(256,256)
// + Linear(256,1) has 16,640 + 65,792 + 257 = 82,689 float parameters = 330,756
// bytes, the one DDP bucket all-reduced once per step for 3 steps; DDP's
// start-up broadcasts twice.
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "mpi_launch.h"
#include "replay_test_graphs.h"

namespace et::replay {
namespace {

constexpr int64_t kBucketBytes = 330756;

class DdpReplayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (int rank = 0; rank < 4; ++rank) {
      const std::string in = std::string(ET_TEST_DATA) +
                             "/pytorch-1.13-cpu/ddp_mlp_et_r" +
                             std::to_string(rank) + ".json.gz";
      const std::string out =
          testing::TempEtPath("ddp_mlp." + std::to_string(rank) + ".et");
      auto summary =
          et::convert::ConvertFile(in, out, et::convert::ConvertOptions{});
      ASSERT_TRUE(summary.ok()) << summary.status();
    }
  }
};

TEST_F(DdpReplayTest, FourRanksRunTheRecordedAllReducesAndBroadcasts) {
  const std::string pattern = testing::TempEtPath("ddp_mlp.%d.et");
  const std::string json = testing::TempEtPath("ddp_mlp.replay.%d.json");
  const std::string trace = testing::TempEtPath("ddp_mlp.replay.%d.trace.json");
  auto run = testing::LaunchReplay(4, "'" + pattern +
                                          "' --device cpu --iters 2 --json '" +
                                          json + "' --trace '" + trace + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("ALL_REDUCE: 3 ops"), std::string::npos)
      << run.output;
  for (int rank = 0; rank < 4; ++rank) {
    nlohmann::json report = testing::ReadJsonFile(testing::TempEtPath(
        "ddp_mlp.replay." + std::to_string(rank) + ".json"));
    ASSERT_FALSE(report.is_discarded()) << "rank " << rank;
    EXPECT_EQ(report["ranks"], 4);
    EXPECT_EQ(report["collectives"]["ALL_REDUCE"]["count"], 3)
        << "rank " << rank;
    EXPECT_EQ(report["collectives"]["ALL_REDUCE"]["bytes"], 3 * kBucketBytes);
    EXPECT_EQ(report["collectives"]["BROADCAST"]["count"], 2)
        << "rank " << rank;
    EXPECT_EQ(report["comm_calls_per_iteration"],
              5);  // all five really called MPI
    int all_reduces = 0;
    for (const auto& op : report["ops"]) {
      if (op.value("comm_type", "") != "ALL_REDUCE") continue;
      ++all_reduces;
      EXPECT_EQ(op["comm_bytes"], kBucketBytes);
      EXPECT_EQ(op["ranks"], 4);
      EXPECT_GT(op["busbw_gbps"].get<double>(), 0.0);
    }
    EXPECT_EQ(all_reduces, 3);
    nlohmann::json chrome = testing::ReadJsonFile(testing::TempEtPath(
        "ddp_mlp.replay." + std::to_string(rank) + ".trace.json"));
    ASSERT_FALSE(chrome.is_discarded());
    EXPECT_GT(chrome["traceEvents"].size(), 0u);
  }
}

}  // namespace
}  // namespace et::replay

namespace et::replay {
namespace {

// One rank's recording run on --world 2 is another job: its measured step is
// no truth for the replay, which says so (issue 36: a prediction for another
// scale says it has no truth); run as recorded, the same trace is compared.
TEST(WorldReplayTest, AnotherWorldHasNoTruth) {
  const std::string data = std::string(ET_TEST_DATA) + "/two-truths/";
  const std::string et = testing::TempEtPath("mlp_w64_one_rank.et");
  et::convert::ConvertOptions options;
  options.kineto_path = data + "cpu_mlp_w64_kineto.json.gz";
  auto summary =
      et::convert::ConvertFile(data + "cpu_mlp_w64_et.json.gz", et, options);
  ASSERT_TRUE(summary.ok()) << summary.status();

  const std::string json = testing::TempEtPath("mlp_w64_world2.%d.json");
  auto run = testing::LaunchReplay(
      2, "'" + et + "' --world 2 --device cpu --iters 1 --json '" + json + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("the trace's measured step is of 1 rank, not the "
                            "2 replayed (--world 2)"),
            std::string::npos)
      << run.output;
  nlohmann::json report =
      testing::ReadJsonFile(testing::TempEtPath("mlp_w64_world2.0.json"));
  ASSERT_FALSE(report.is_discarded());
  EXPECT_TRUE(report["step"]["measured_us"].is_null());

  auto alone = testing::LaunchReplay(1, "'" + et + "' --device cpu --iters 1");
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_NE(alone.output.find("(unprofiled-run): error"), std::string::npos)
      << alone.output;
}

}  // namespace
}  // namespace et::replay
