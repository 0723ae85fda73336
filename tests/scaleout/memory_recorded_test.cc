// The memory model against the memory truth of real runs
// (tests/data/memory/README.md): each rank's predicted peak must be within 5%
// of the peak its allocator held in a step run without a profiler, and the
// one-rank trace of each model taken to dp=N (DDP, and ZeRO-1) must predict
// the peaks of the real N-rank runs within 5%.
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/dp_sync.h"
#include "scaleout/memory_at_layout.h"
#include "step/library_workspaces.h"
#include "step/memory_timeline.h"
#include "step/storage_lives.h"

namespace et::scaleout {
namespace {

constexpr double kTolerance = 0.05;

std::string Data(const std::string& name, const std::string& dir = "memory") {
  return absl::StrCat(ET_TEST_DATA, "/", dir, "/", name, ".json.gz");
}

// Converts one recorded rank (ET + its profiler trace, which holds the truth).
std::string Convert(const std::string& et, const std::string& kineto,
                    const std::string& dir = "memory") {
  convert::ConvertOptions options;
  options.kineto_path = Data(kineto, dir);
  const std::string out =
      absl::StrCat(::testing::TempDir(), "/", getpid(), "_", et, ".et");
  auto report = convert::ConvertFile(Data(et, dir), out, options);
  EXPECT_TRUE(report.ok()) << et << ": " << report.status();
  return out;
}

struct Loaded {
  NodeModel model;
  std::string path;
};

Loaded Load(const std::string& et, const std::string& kineto,
            const std::string& dir = "memory") {
  const std::string path = Convert(et, kineto, dir);
  ModelOptions options;
  options.keep_io = false;
  options.keep_tensors = true;
  auto model = NodeModel::Load(path, options);
  EXPECT_TRUE(model.ok()) << model.status();
  return {model.ok() ? *std::move(model)
                     : NodeModel::FromGraph(Graph::Build({}, {})),
          path};
}

int64_t Peak(const NodeModel& model, const std::vector<StorageLife>& lives,
             const std::string& what) {
  const MemoryTimelineResult t = BuildMemoryTimeline(lives, model.size());
  const DeviceMemory* d = t.main();
  if (d == nullptr) return 0;
  std::string parts;
  for (int k = 0; k < kMemoryKinds; ++k)
    absl::StrAppend(&parts, " ", MemoryKindName(static_cast<MemoryKind>(k)),
                    "=", d->peak_parts[k]);
  std::cout << what << ": peak " << d->peak_bytes << " at node "
            << model.id(d->peak_node) << " (" << model.name(d->peak_node)
            << "), baseline " << d->baseline_bytes << ";" << parts << "\n";
  return d->peak_bytes;
}

void ExpectNear(int64_t predicted, int64_t recorded, const std::string& what) {
  ASSERT_GT(recorded, 0) << what << ": no memory truth recorded";
  const double error =
      static_cast<double>(predicted - recorded) / static_cast<double>(recorded);
  std::cout << absl::StrFormat("%s: predicted %d, recorded %d: %+.2f%%\n", what,
                               predicted, recorded, 100 * error);
  EXPECT_LE(std::abs(error), kTolerance)
      << what << ": predicted " << predicted << " recorded " << recorded;
}

int64_t Recorded(const NodeModel& model) {
  std::optional<RecordedMemory> r = RecordedMemoryOf(model);
  return r ? r->peak_bytes : 0;
}

class MemoryRecordedTest : public ::testing::TestWithParam<const char*> {};

TEST_P(MemoryRecordedTest, EveryRecordedRankWithinFivePercent) {
  const std::string m = GetParam();
  std::vector<std::pair<std::string, std::string>> runs = {
      {m + "_1r_et", m + "_1r_kineto"}};
  for (const char* kind : {"ddp", "zero"}) {
    for (int n : {2, 4}) {
      for (int r = 0; r < n; ++r) {
        const std::string stem = absl::StrCat(m, "_", kind, n);
        runs.push_back({absl::StrCat(stem, "_et_r", r),
                        absl::StrCat(stem, "_kineto_r", r)});
      }
    }
  }
  for (const auto& [et, kineto] : runs) {
    Loaded l = Load(et, kineto);
    const StorageLivesResult lives = FindStorageLives(l.model);
    ExpectNear(Peak(l.model, lives.lives, et), Recorded(l.model), et);
  }
}

TEST_P(MemoryRecordedTest, OneRankAtDpPredictsTheRealRuns) {
  const std::string m = GetParam();
  Loaded one = Load(m + "_1r_et", m + "_1r_kineto");
  const StorageLivesResult lives = FindStorageLives(one.model);
  auto graph = LoadGraph(one.path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int n : {2, 4}) {
    DpSyncOptions sync;
    sync.dp_size = n;
    auto synced = AddDpSync(*graph, sync);
    ASSERT_TRUE(synced.ok()) << synced.status();
    LayoutMemoryOptions layout;
    layout.dp = n;
    layout.ddp_buckets = true;
    for (const Bucket& b : synced->buckets)
      layout.bucket_bytes.push_back(b.bytes);
    for (const char* kind : {"ddp", "zero"}) {
      layout.stage = std::string(kind) == "ddp" ? ShardStage::kNone
                                                : ShardStage::kOptimizer;
      for (int r = 0; r < n; ++r) {
        layout.dp_index = r;
        const std::string what =
            absl::StrCat(m, " one rank at dp=", n, " ", kind, " rank ", r);
        const int64_t predicted =
            Peak(one.model, LivesAtLayout(lives.lives, layout), what);
        Loaded real = Load(absl::StrCat(m, "_", kind, n, "_et_r", r),
                           absl::StrCat(m, "_", kind, n, "_kineto_r", r));
        ExpectNear(predicted, Recorded(real.model), what);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, MemoryRecordedTest,
                         ::testing::Values("mlp", "gpt", "conv"));

// PyTorch 2.11 (tests/data/h100-gpu-session, tests/data/torch2-cpu): what 1.13
// did not show. The gradients `zero_grad(set_to_none=True)` frees at the next
// step, cuBLAS's workspaces on the H100 (64 MiB of the conv net's 375 MiB),
// the temporaries inside ops the converter folds (softmax's backward: 128 MiB
// of the GPT's 882 MiB), max-pool indices at the same address every step.
struct Recording {
  const char* dir;
  const char* et;
  const char* kineto;
};

class MemoryRecordedTorch2Test : public ::testing::TestWithParam<Recording> {};

TEST_P(MemoryRecordedTorch2Test, PeakWithinFivePercent) {
  const Recording& r = GetParam();
  Loaded l = Load(r.et, r.kineto, r.dir);
  const StorageLivesResult lives = FindStorageLives(l.model);
  ExpectNear(Peak(l.model, lives.lives, r.et), Recorded(l.model), r.et);
}

// The two mechanisms the H100 recordings needed, seen directly: the converter
// stamps the compute capability and the peak of softmax backward's inner
// buffer; the forward (Python thread) and backward (autograd thread) GEMMs
// give two 32 MiB cuBLAS workspaces.
TEST(MemoryRecordedTorch2, H100WorkspacesAndFoldedTemporaries) {
  Loaded l = Load("gpt_et", "gpt_kineto", "h100-gpu-session");
  EXPECT_EQ(l.model.info().device_compute_capability, 90);
  const std::vector<StorageLife> workspaces = CublasWorkspaceLives(l.model);
  ASSERT_EQ(workspaces.size(), 2u);
  for (const StorageLife& w : workspaces) {
    EXPECT_EQ(w.device, 0);
    EXPECT_EQ(w.bytes, int64_t{32} << 20);
    EXPECT_TRUE(w.persistent);
  }
  int softmax_backward = 0;
  for (NodeIndex i = 0; i < l.model.size(); ++i) {
    if (l.model.name(i) != "aten::_softmax_backward_data") continue;
    ++softmax_backward;
    // grad * output, [8, 16, 512, 512] fp32
    EXPECT_EQ(l.model.folded_peak_bytes(i), int64_t{128} << 20);
  }
  EXPECT_EQ(softmax_backward, 3);  // one per profiled step
}

INSTANTIATE_TEST_SUITE_P(
    Recordings, MemoryRecordedTorch2Test,
    ::testing::Values(
        Recording{"h100-gpu-session", "conv_et", "conv_kineto"},
        Recording{"h100-gpu-session", "moe_et", "moe_kineto"},
        Recording{"h100-gpu-session", "gpt_et", "gpt_kineto"},
        Recording{"torch2-cpu", "cpu_conv_w16_et", "cpu_conv_w16_kineto"},
        Recording{"torch2-cpu", "cpu_gpt_w256_et", "cpu_gpt_w256_kineto"},
        Recording{"torch2-cpu", "cpu_mlp_w256_et", "cpu_mlp_w256_kineto"},
        Recording{"torch2-cpu", "cpu_moe_w128_et", "cpu_moe_w128_kineto"},
        Recording{"torch2-cpu", "ddp4_et_r0", "ddp4_kineto_r0"},
        Recording{"torch2-cpu", "ddp4_et_r1", "ddp4_kineto_r1"},
        Recording{"torch2-cpu", "ddp4_et_r2", "ddp4_kineto_r2"},
        Recording{"torch2-cpu", "ddp4_et_r3", "ddp4_kineto_r3"},
        Recording{"torch2-cpu", "tp2dp2_et_r0", "tp2dp2_kineto_r0"},
        Recording{"torch2-cpu", "tp2dp2_et_r1", "tp2dp2_kineto_r1"},
        Recording{"torch2-cpu", "tp2dp2_et_r2", "tp2dp2_kineto_r2"},
        Recording{"torch2-cpu", "tp2dp2_et_r3", "tp2dp2_kineto_r3"}),
    [](const ::testing::TestParamInfo<Recording>& info) {
      return std::string(info.param.et);
    });

}  // namespace
}  // namespace et::scaleout

namespace et::scaleout {
namespace {

// What no op of the trace shows (docs/memory-model.md): a tensor only a
// container reads (IndexAddBackward0 saves index_add's source; its
// expand_as reads it for the shape, and expand_as's children never name it),
// and the optimizer's loop local (AdamW's `denom`, freed when the next
// parameter binds its own). Without them the real ep=2 rank of
// tests/data/ep-synth was -8.4% and the tp MLP -5.4%.
TEST(MemoryRecordedHidden, SavedSourcesAndOptimizerLoopLocals) {
  Loaded moe = Load("moe2_et_r0", "moe2_kineto_r0", "ep-synth");
  int64_t held = 0;
  for (NodeIndex i = 0; i < moe.model.size(); ++i)
    held += static_cast<int64_t>(moe.model.held_tensors(i).size());
  EXPECT_GT(held, 0) << "no container_inputs on the expert-parallel rank";
  const StorageLivesResult moe_lives = FindStorageLives(moe.model);
  const int64_t moe_peak = Peak(moe.model, moe_lives.lives, "moe2_r0");
  const int64_t moe_truth = Recorded(moe.model);
  ASSERT_GT(moe_truth, 0);
  // -6.2%: the rest is the recorder's all-to-all buffers, held by Python.
  EXPECT_GT(moe_peak, 0.93 * moe_truth);
  EXPECT_LE(moe_peak, moe_truth);

  Loaded tp = Load("tpmlp1_et", "tpmlp1_kineto", "tp-synth");
  const StorageLivesResult tp_lives = FindStorageLives(tp.model);
  const int64_t tp_peak = Peak(tp.model, tp_lives.lives, "tpmlp1");
  EXPECT_LT(std::abs(tp_peak - Recorded(tp.model)), 0.01 * Recorded(tp.model));
}

}  // namespace
}  // namespace et::scaleout
