// The pipeline schedules' pass orders (scaleout/pipeline_order.h): every
// rank runs each micro-batch's forward and backward through each of its
// chunks once, a backward after its forward; 1F1B warms up with P - s - 1
// forwards, GPipe with M; interleaved:V with Megatron-LM's 2 (P - s - 1) +
// (V - 1) P (all M V when M = P), groups of P micro-batches per chunk, the
// backwards through the chunks in reverse; and the order is one a pipeline
// can run: replaying every rank's order with each pass waiting for the pass
// of the chunk before it (forward) or after it (backward) finishes, all
// ranks reach the end (no pass waits forever).
#include <set>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "scaleout/pipeline_order.h"

namespace {

using et::scaleout::PassOrder;
using et::scaleout::PipelinePass;
using et::scaleout::PpSchedule;

// Runs every rank's order with its data dependencies, one pass a round per
// rank when its input is done; true when all passes ran.
bool Runs(PpSchedule schedule, int64_t pp, int64_t mb, int64_t v) {
  std::vector<std::vector<PipelinePass>> orders;
  for (int64_t s = 0; s < pp; ++s)
    orders.push_back(PassOrder(schedule, pp, mb, v, s));
  const int64_t chunks = pp * v;
  // done[(backward, micro-batch, model chunk)]
  std::set<std::tuple<bool, int64_t, int64_t>> done;
  std::vector<size_t> next(pp, 0);
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<std::tuple<bool, int64_t, int64_t>> finished;
    for (int64_t s = 0; s < pp; ++s) {
      if (next[s] == orders[s].size()) continue;
      const PipelinePass& p = orders[s][next[s]];
      const int64_t g = p.chunk * pp + s;
      bool ready = true;
      if (!p.backward && g > 0)
        ready = done.count({false, p.micro_batch, g - 1}) > 0;
      if (p.backward)
        ready =
            done.count({false, p.micro_batch, g}) > 0 &&
            (g + 1 == chunks || done.count({true, p.micro_batch, g + 1}) > 0);
      if (!ready) continue;
      finished.push_back({p.backward, p.micro_batch, g});
      ++next[s];
      moved = true;
    }
    done.insert(finished.begin(), finished.end());
  }
  for (int64_t s = 0; s < pp; ++s)
    if (next[s] != orders[s].size()) return false;
  return true;
}

TEST(PpOrder, EveryPassOnceForwardBeforeBackward) {
  for (auto [schedule, v] :
       {std::make_pair(PpSchedule::k1F1B, int64_t{1}),
        std::make_pair(PpSchedule::kGpipe, int64_t{1}),
        std::make_pair(PpSchedule::kInterleaved, int64_t{2}),
        std::make_pair(PpSchedule::kInterleaved, int64_t{3})}) {
    for (int64_t pp : {2, 4}) {
      for (int64_t mb : {pp, 2 * pp, 4 * pp}) {
        for (int64_t s = 0; s < pp; ++s) {
          SCOPED_TRACE(testing::Message() << "v=" << v << " pp=" << pp
                                          << " mb=" << mb << " s=" << s);
          const auto order = PassOrder(schedule, pp, mb, v, s);
          ASSERT_EQ(order.size(), static_cast<size_t>(2 * mb * v));
          std::set<std::tuple<bool, int64_t, int64_t>> seen;
          for (const PipelinePass& p : order) {
            EXPECT_GE(p.chunk, 0);
            EXPECT_LT(p.chunk, v);
            EXPECT_TRUE(
                seen.insert({p.backward, p.micro_batch, p.chunk}).second);
            if (p.backward) {
              EXPECT_TRUE(seen.count({false, p.micro_batch, p.chunk}));
            }
          }
          EXPECT_EQ(seen.size(), order.size());
        }
        EXPECT_TRUE(Runs(schedule, pp, mb, v));
      }
    }
  }
}

TEST(PpOrder, WarmUpAsMegatronLm) {
  for (int64_t s = 0; s < 4; ++s) {
    EXPECT_EQ(et::scaleout::WarmupForwards(PpSchedule::k1F1B, 4, 8, 1, s),
              3 - s);
    EXPECT_EQ(et::scaleout::WarmupForwards(PpSchedule::kGpipe, 4, 8, 1, s), 8);
    // 2 (P - s - 1) + (V - 1) P with P = 4, V = 2: 10, 8, 6, 4.
    EXPECT_EQ(
        et::scaleout::WarmupForwards(PpSchedule::kInterleaved, 4, 8, 2, s),
        2 * (3 - s) + 4);
    // M = P: every forward first.
    EXPECT_EQ(
        et::scaleout::WarmupForwards(PpSchedule::kInterleaved, 4, 4, 2, s), 8);
  }
  // Interleaved P = 2, V = 2, M = 4 on stage 0: warm-up 4 forwards, chunk 0
  // of micro-batches 0 and 1, then chunk 1 of the same; the first backward
  // runs chunk 1 of micro-batch 0.
  const auto order = PassOrder(PpSchedule::kInterleaved, 2, 4, 2, 0);
  const std::vector<std::tuple<bool, int64_t, int64_t>> head = {
      {false, 0, 0}, {false, 1, 0}, {false, 0, 1}, {false, 1, 1},
      {false, 2, 0}, {true, 0, 1},  {false, 3, 0}, {true, 1, 1}};
  for (size_t k = 0; k < head.size(); ++k)
    EXPECT_EQ(std::make_tuple(order[k].backward, order[k].micro_batch,
                              order[k].chunk),
              head[k])
        << k;
  EXPECT_EQ(order.back().backward, true);
  EXPECT_EQ(order.back().chunk, 0);
  EXPECT_EQ(order.back().micro_batch, 3);
}

TEST(PpOrder, ParsesTheSchedules) {
  auto interleaved = et::scaleout::ParsePpSchedule("interleaved:3");
  ASSERT_TRUE(interleaved.ok());
  EXPECT_EQ(interleaved->schedule, PpSchedule::kInterleaved);
  EXPECT_EQ(interleaved->chunks, 3);
  EXPECT_EQ(et::scaleout::PpScheduleText(PpSchedule::kInterleaved, 3),
            "interleaved:3");
  EXPECT_EQ(et::scaleout::ParsePpSchedule("gpipe")->chunks, 1);
  for (const char* bad :
       {"interleaved:1", "interleaved:", "interleaved:x", "pipedream"})
    EXPECT_FALSE(et::scaleout::ParsePpSchedule(bad).ok()) << bad;
  EXPECT_FALSE(et::scaleout::CheckInterleaved(4, 6, 2).ok());
  EXPECT_TRUE(et::scaleout::CheckInterleaved(4, 8, 2).ok());
}

}  // namespace
