// The real tp=4 x dp=2 recording (tests/data/tp-dp, torch 1.13, gloo: each
// collective marked with its group by examples/record_trace.py) replayed on 8
// CPU ranks under MPI: every rank runs its activation all-reduces in its
// tensor-parallel group of 4 and its DDP bucket in its data-parallel group of
// 2, as recorded, not on the whole world. Each rank's trace lists only its own
// groups (rank 0: 1 = {0..3}, 3 = {0,4}; rank 5: 2 = {4..7}, 4 = {1,5}), so the
// replay forms sibling communicators from tables that differ by rank.
#include <string>

#include "absl/strings/str_format.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "mpi_launch.h"
#include "replay_test_graphs.h"

namespace et::replay {
namespace {

constexpr int kRanks = 8;
constexpr int64_t kActivationBytes = 16 * 64 * 4;  // batch x width, float32
// Each rank's gradients at tp=4, one bucket: per layer pair a column-parallel
// 64 -> 64 layer with bias, a row-parallel 64 -> 64 one without, and the row
// bias of 64; float32.
constexpr int64_t kBucketBytes = 2 * (64 * 64 + 64 + 64 * 64 + 64) * 4;

TEST(TpDpReplayTest, EightRanksRunEachCollectiveInItsGroup) {
  for (int rank = 0; rank < kRanks; ++rank) {
    const std::string in =
        std::string(ET_TEST_DATA) +
        absl::StrFormat("/tp-dp/tp4dp2_et_r%d.json.gz", rank);
    auto summary = et::convert::ConvertFile(
        in, testing::TempEtPath(absl::StrFormat("tp4dp2.%d.et", rank)),
        et::convert::ConvertOptions{});
    ASSERT_TRUE(summary.ok()) << summary.status();
    for (const std::string& w : summary->warnings)
      EXPECT_EQ(w.find("smaller than the world"), std::string::npos) << w;
  }
  const std::string pattern = testing::TempEtPath("tp4dp2.%d.et");
  const std::string json = testing::TempEtPath("tp4dp2.replay.%d.json");
  auto run = testing::LaunchReplay(
      kRanks, "'" + pattern + "' --device cpu --iters 1 --json '" + json + "'");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (int rank = 0; rank < kRanks; ++rank) {
    SCOPED_TRACE(rank);
    nlohmann::json report = testing::ReadJsonFile(
        testing::TempEtPath(absl::StrFormat("tp4dp2.replay.%d.json", rank)));
    ASSERT_FALSE(report.is_discarded());
    int tp = 0, dp = 0;
    for (const auto& op : report["ops"]) {
      if (op.value("comm_type", "") != "ALL_REDUCE") continue;
      if (op["comm_bytes"] == kActivationBytes) {
        EXPECT_EQ(op["ranks"], 4);
        ++tp;
      } else {
        EXPECT_EQ(op["comm_bytes"], kBucketBytes);
        EXPECT_EQ(op["ranks"], 2);
        ++dp;
      }
    }
    EXPECT_EQ(tp, 6);  // 3 per step, 2 steps
    EXPECT_EQ(dp, 2);  // one bucket per step
  }
}

}  // namespace
}  // namespace et::replay
