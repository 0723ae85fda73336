// The real tp=4 x dp=2 recording (tests/data/tp-dp, torch 1.13, gloo: each
// collective marked with its group by examples/record_trace.py) replayed on 8
// CPU ranks under MPI: every rank runs its activation all-reduces in its
// tensor-parallel group of 4 and its DDP bucket in its data-parallel group of
// 2, as recorded, not on the whole world. Each rank's trace lists only its own
// groups (rank 0: 1 = {0..3}, 3 = {0,4}; rank 5: 2 = {4..7}, 4 = {1,5}), so the
// replay forms sibling communicators from tables that differ by rank. Then
// the PyTorch 2.11 recordings (tests/data/torch2-cpu: tp=2 x dp=2 and DDP on 4
// ranks, with their Kineto traces) replayed to the end, each step compared
// with the recorded truth.
#include <string>

#include "absl/strings/str_format.h"
#include "base/gzip_input.h"
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

// The mean over the ranks of each Kineto trace's unprofiled_step_ms, in us.
double RecordedStepUs(const std::string& tag, int ranks) {
  double sum_ms = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    std::string text;
    EXPECT_TRUE(
        ReadFileMaybeGzip(
            std::string(ET_TEST_DATA) +
                absl::StrFormat("/torch2-cpu/%s_kineto_r%d.json.gz", tag, rank),
            &text)
            .ok());
    sum_ms += nlohmann::json::parse(text).value("unprofiled_step_ms", 0.0);
  }
  return sum_ms * 1000 / ranks;
}

// PyTorch 2.11 on 4 CPU ranks: tp=2 x dp=2 (9 activation all-reduces of
// 16 x 128 float32 per rank in its tp group of 2, 3 DDP buckets in its dp group
// of 2) and DDP (2 buckets per step on all 4). Every rank replays its 3 steps
// and reports them against the recorded truth.
TEST(TpDpReplayTest, Torch2RecordingsReplayToTheEndAgainstTheirTruth) {
  constexpr int kTorch2Ranks = 4;
  for (const std::string tag : {"tp2dp2", "ddp4"}) {
    SCOPED_TRACE(tag);
    for (int rank = 0; rank < kTorch2Ranks; ++rank) {
      const std::string data = std::string(ET_TEST_DATA) + "/torch2-cpu/";
      et::convert::ConvertOptions options;
      options.rank = rank;
      options.kineto_path =
          data + absl::StrFormat("%s_kineto_r%d.json.gz", tag, rank);
      auto summary = et::convert::ConvertFile(
          data + absl::StrFormat("%s_et_r%d.json.gz", tag, rank),
          testing::TempEtPath(absl::StrFormat("t2_%s.%d.et", tag, rank)),
          options);
      ASSERT_TRUE(summary.ok()) << summary.status();
    }
    const std::string pattern = testing::TempEtPath("t2_" + tag + ".%d.et");
    const std::string json =
        testing::TempEtPath("t2_" + tag + ".replay.%d.json");
    auto run = testing::LaunchReplay(
        kTorch2Ranks,
        "'" + pattern + "' --device cpu --iters 1 --json '" + json + "'");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    for (int rank = 0; rank < kTorch2Ranks; ++rank) {
      SCOPED_TRACE(rank);
      nlohmann::json report = testing::ReadJsonFile(testing::TempEtPath(
          absl::StrFormat("t2_%s.replay.%d.json", tag, rank)));
      ASSERT_FALSE(report.is_discarded());
      int activations = 0, buckets = 0;
      for (const auto& op : report["ops"]) {
        if (op.value("comm_type", "") != "ALL_REDUCE") continue;
        if (tag == "ddp4") {
          EXPECT_EQ(op["ranks"], kTorch2Ranks);
          ++buckets;
        } else if (op["comm_bytes"] == 16 * 128 * 4) {
          EXPECT_EQ(op["ranks"], 2);
          ++activations;
        } else {
          EXPECT_EQ(op["ranks"], 2);
          ++buckets;
        }
      }
      EXPECT_EQ(activations, tag == "ddp4" ? 0 : 9);
      EXPECT_EQ(buckets, tag == "ddp4" ? 6 : 3);
      const nlohmann::json& step = report["step"];
      EXPECT_EQ(step["steps"], 3);
      EXPECT_EQ(step["measured_source"], "unprofiled-run");
      EXPECT_NEAR(step["measured_us"].get<double>(),
                  RecordedStepUs(tag, kTorch2Ranks), 0.01);
      EXPECT_NEAR(step["error_pct"].get<double>(),
                  (step["predicted_us"].get<double>() /
                       step["measured_us"].get<double>() -
                   1) *
                      100,
                  1e-6);
    }
  }
}

}  // namespace
}  // namespace et::replay
