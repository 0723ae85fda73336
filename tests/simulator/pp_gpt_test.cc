// Pipeline parallelism against real recordings (issue 53): tests/data/pp-gpt
// holds a 4-block GPT stack recorded on one rank with 4 micro-batches of
// gradient accumulation and as a real 2-stage 1F1B pipeline over gloo with
// the same 4 micro-batches. The real pp=2 files simulate without a deadlock
// (each exchange posts its send and receive together), their memory peak per
// rank within 5% of the recorder's exact truth; the one-rank file's peak
// within 5% (accumulation adds no activations: each micro-batch's are freed
// by its backward); `--layout pp=2 --micro-batches 4` from the one-rank file
// cuts where the real run did (embeddings and blocks 0-1 | blocks 2-3 and the
// head), sends and receives what the real run sent (type, bytes, group size,
// count), and its peak per rank lies within 5% of the real ranks' (the
// recordings' step times are no truth: a loaded VM, README); every
// activation is stashed by exactly one model chunk, whatever the cut.
#include <unistd.h>

#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "scaleout/parallel_layout.h"
#include "simulator/simulation.h"
#include "tests/simulator/layout_fixture.h"

namespace {

std::string Data(const std::string& name) {
  return std::string(ET_TEST_DATA) + "/pp-gpt/" + name;
}

using et::testing::MustRun;

std::string OneRank() {
  return et::testing::ConvertRecording("pp-gpt", "gpt1");
}

// The real pipeline's files as a %d pattern.
std::string RealPattern() {
  return et::testing::ConvertRecordedJob("pp-gpt", "gpt2", 2);
}

// The recorder's exact peaks (README), bytes.
constexpr int64_t kOneRankPeak = 26'254'080;
constexpr int64_t kRealPeak[2] = {18'326'664, 14'256'264};

double Error(int64_t predicted, int64_t truth) {
  return static_cast<double>(predicted - truth) / static_cast<double>(truth);
}

// +3.5% (27,160,640 bytes against 26,254,080; +19.7% before the one-step
// backward-only rule of storage_lives.cc).
TEST(PpGpt, OneRankAccumulationPeakWithinFivePercent) {
  auto sim = MustRun({OneRank(), 0}, {});
  ASSERT_NE(sim, nullptr);
  ASSERT_EQ(sim->report().ranks.size(), 1u);
  const auto& memory = sim->report().ranks[0].memory;
  ASSERT_TRUE(memory.has_value());
  EXPECT_EQ(memory->recorded_peak_bytes, kOneRankPeak);
  EXPECT_LT(std::abs(Error(memory->peak_bytes, kOneRankPeak)), 0.05)
      << memory->peak_bytes;
}

// et-convert's summary counts the bytes of sends and receives (it said
// "RECV 4 (0 bytes), SEND 4 (0 bytes)"): 4 of 131,072 bytes each way a rank.
TEST(PpGpt, ConvertSummaryCountsSendAndRecvBytes) {
  for (int r = 0; r < 2; ++r) {
    et::convert::ConvertOptions options;
    options.kineto_path = Data(absl::StrCat("gpt2_kineto_r", r, ".json.gz"));
    auto report =
        et::convert::ConvertFile(Data(absl::StrCat("gpt2_et_r", r, ".json.gz")),
                                 absl::StrCat(::testing::TempDir(), "/",
                                              getpid(), "_ppgpt_sum", r, ".et"),
                                 options);
    ASSERT_TRUE(report.ok()) << report.status();
    for (const char* type : {"SEND", "RECV"}) {
      EXPECT_EQ(report->collectives_by_type[type], 4) << type;
      EXPECT_EQ(report->collective_bytes_by_type[type], 4 * 131'072) << type;
    }
  }
}

TEST(PpGpt, RealPipelineSimulatesWithPeaksWithinFivePercent) {
  auto sim = MustRun({RealPattern(), 2}, {});
  ASSERT_NE(sim, nullptr);
  ASSERT_EQ(sim->report().ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const auto& memory = sim->report().ranks[r].memory;
    ASSERT_TRUE(memory.has_value()) << "rank " << r;
    EXPECT_EQ(memory->recorded_peak_bytes, kRealPeak[r]);
    EXPECT_LT(std::abs(Error(memory->peak_bytes, kRealPeak[r])), 0.05)
        << "rank " << r << ": " << memory->peak_bytes;
  }
}

TEST(PpGpt, SynthesizedPipelineMatchesTheRealOne) {
  auto real = MustRun({RealPattern(), 2}, {});
  et::sim::SimOptions options;
  options.layout = *et::scaleout::ParseLayout("pp=2");
  options.micro_batches = 4;
  auto synth = MustRun({OneRank(), 0}, options);
  ASSERT_NE(real, nullptr);
  ASSERT_NE(synth, nullptr);
  ASSERT_TRUE(synth->pipeline().has_value());
  const auto& plan = synth->pipeline()->plan;
  EXPECT_EQ(plan.recorded_micro_batches, 4);
  // The real run's cut: stage 0 ends with block 1's second MLP linear (2
  // embeddings + 2 blocks of 6 parameter-reading ops), the activation of a
  // micro-batch of 4 x 64 x 128 float32 crossing it.
  ASSERT_EQ(plan.stages.size(), 2u);
  EXPECT_EQ(plan.stages[0].last_layer, 13);
  EXPECT_EQ(plan.stages[0].send_bytes, 4 * 64 * 128 * 4);
  // The sends and receives, as the real run's: per step and rank 4 of each,
  // of the same bytes, on a group of 2.
  const auto real_comms = et::testing::CollectiveCalls(real->report());
  const auto synth_comms = et::testing::CollectiveCalls(synth->report());
  ASSERT_EQ(real_comms.size(), 1u) << "one kind of message";
  EXPECT_EQ(std::get<1>(real_comms.begin()->first), 4u * 64 * 128 * 4);
  EXPECT_EQ(std::get<2>(real_comms.begin()->first), 2);
  EXPECT_EQ(synth_comms, real_comms);
  // Peak memory per rank against the real ranks' exact peaks: -2.2% and
  // -1.9% (17,923,988 and 13,985,464 bytes against 18,326,664 and
  // 14,256,264; the memory model on the real files: -2.3% / -1.0%). Before
  // the activations made inside folded forward ops (attention's matmul
  // copies, the loss's log-softmax) were stashed with the chunk whose
  // forward made them: -9.4% / -5.6%.
  ASSERT_EQ(synth->report().ranks.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    const auto& memory = synth->report().ranks[r].memory;
    ASSERT_TRUE(memory.has_value()) << "rank " << r;
    EXPECT_LT(std::abs(Error(memory->peak_bytes, kRealPeak[r])), 0.05)
        << "rank " << r << ": " << memory->peak_bytes;
  }
}

// Each activation of the analysed micro-batch is in exactly one chunk's
// stash, the one whose forward made it: the chunks' stashes add up to the
// same bytes at pp=2, pp=4 and interleaved:2 (none lost or counted twice
// when the cut moves), each chunk stashing some.
TEST(PpGpt, EveryActivationStashedOnce) {
  std::vector<int64_t> totals;
  for (const auto& [layout, schedule] :
       std::vector<std::pair<const char*, et::scaleout::PpSchedule>>{
           {"pp=2", et::scaleout::PpSchedule::k1F1B},
           {"pp=4", et::scaleout::PpSchedule::k1F1B},
           {"pp=2", et::scaleout::PpSchedule::kInterleaved}}) {
    et::sim::SimOptions options;
    options.layout = *et::scaleout::ParseLayout(layout);
    options.micro_batches = 4;
    options.pp_schedule = schedule;
    if (schedule == et::scaleout::PpSchedule::kInterleaved)
      options.pp_chunks = 2;
    auto sim = MustRun({OneRank(), 0}, options);
    ASSERT_NE(sim, nullptr) << layout;
    ASSERT_TRUE(sim->pipeline().has_value());
    int64_t total = 0;
    for (const auto& c : sim->pipeline()->plan.chunks) {
      EXPECT_GT(c.activation_bytes, 0) << layout;
      total += c.activation_bytes;
    }
    totals.push_back(total);
  }
  EXPECT_EQ(totals[1], totals[0]);
  EXPECT_EQ(totals[2], totals[0]);
}

}  // namespace
