// The layout cache (simulator/layout_cache.h) against the plain path, on real
// recordings (tests/data/cpu-corpus/cpu_gpt_w64, a GPT-style stack, and
// tests/data/tp-synth/tpmlp1, the Megatron MLP): layouts of 10^5 ranks that
// share a tp split and a DDP sync report byte for byte what each gives on
// its own, in text and JSON, with every --dp-sync mode and a pipeline; and
// the sharing happened (fewer entries computed than layouts run). Not timed:
// docs/benchmarks.md has the speed.
#include "simulator/layout_cache.h"

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "scaleout/dp_sync.h"
#include "scaleout/parallel_layout.h"
#include "simulator/report/report.h"
#include "simulator/simulation.h"

namespace {

using et::sim::LayoutCache;
using et::sim::SimInput;
using et::sim::SimOptions;
using et::sim::Simulation;

std::string Convert(const std::string& stem) {
  const std::string data = std::string(ET_TEST_DATA) + "/";
  const std::string out =
      absl::StrCat(::testing::TempDir(), "/", getpid(), "_cache_",
                   stem.substr(stem.find('/') + 1), ".et");
  et::convert::ConvertOptions options;
  options.kineto_path = data + stem + "_kineto.json.gz";
  auto report =
      et::convert::ConvertFile(data + stem + "_et.json.gz", out, options);
  EXPECT_TRUE(report.ok()) << report.status();
  return out;
}

const std::string& Gpt() {
  static const std::string* path =
      new std::string(Convert("cpu-corpus/cpu_gpt_w64"));
  return *path;
}

const std::string& TpMlp() {
  static const std::string* path = new std::string(Convert("tp-synth/tpmlp1"));
  return *path;
}

// The report's text and JSON, or the error, of `layout` on `input`.
std::string Predict(const SimInput& input, const std::string& layout,
                    SimOptions options) {
  options.layout = *et::scaleout::ParseLayout(layout);
  auto sim = Simulation::Run(input, options);
  if (!sim.ok()) return absl::StrCat("error: ", sim.status().message());
  return absl::StrCat(et::sim::FormatReportText((*sim)->report(), 1000),
                      et::sim::FormatReportJson((*sim)->report()));
}

std::shared_ptr<LayoutCache> CacheOf(const std::string& path) {
  auto graph = et::LoadGraph(path);
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::make_shared<LayoutCache>(
      std::make_shared<const et::Graph>(std::move(*graph)));
}

// Every layout once through one cache and once on its own: the same report.
void ExpectSameAsPlain(const std::string& path,
                       const std::vector<std::string>& layouts,
                       const SimOptions& options,
                       const std::shared_ptr<LayoutCache>& cache) {
  SimInput plain{path};
  SimInput shared{path};
  shared.cache = cache;
  for (const std::string& layout : layouts) {
    const std::string want = Predict(plain, layout, options);
    EXPECT_EQ(want.rfind("error", 0), std::string::npos) << layout << want;
    EXPECT_EQ(Predict(shared, layout, options), want) << layout;
  }
}

// tp=4 at three dp (and two pp): one node model, one split, one sync.
const std::vector<std::string> kTp4 = {"tp=4,dp=25000", "tp=4,dp=12500,pp=2",
                                       "tp=4,dp=5000,pp=5"};

TEST(LayoutCacheTest, SharedDdpSyncReportsWhatEachLayoutAloneDoes) {
  for (const std::string& path : {Gpt(), TpMlp()}) {
    SimOptions options;
    options.micro_batches = 4;
    auto cache = CacheOf(path);
    ExpectSameAsPlain(path, kTp4, options, cache);
    // The base model, the tp=4 split and its DDP sync, each once.
    EXPECT_EQ(cache->computed(), 3) << path;
    ExpectSameAsPlain(path, {"dp=100000", "tp=2,dp=50000", "tp=8,dp=12500"},
                      options, cache);
  }
}

TEST(LayoutCacheTest, EveryDpSyncModeAndNoMemory) {
  // Worlds of whole 4,096-rank nodes: without a sync the tp all-reduces
  // alone pick the host platform (HOST-GLOO), which needs them.
  for (const char* mode : {"zero", "fsdp", "none", "ddp"}) {
    SimOptions options;
    options.dp_sync = *et::scaleout::ParseDpSyncMode(mode);
    ExpectSameAsPlain(Gpt(), {"dp=8192", "tp=4,dp=2048", "tp=4,dp=1024"},
                      options, CacheOf(Gpt()));
  }
  // Without the tensors the trace's layer blocks are unknown: no pp.
  SimOptions no_memory;
  no_memory.memory = false;
  ExpectSameAsPlain(Gpt(), {"tp=4,dp=25000", "tp=4,dp=1024", "dp=100000"},
                    no_memory, CacheOf(Gpt()));
}

TEST(LayoutCacheTest, TheSyncAtAnotherDpTakesItsOwnGroupTable) {
  auto graph = et::LoadGraph(Gpt());
  ASSERT_TRUE(graph.ok()) << graph.status();
  et::scaleout::DpSyncOptions sync;
  sync.dp_size = 8;
  auto at8 = et::scaleout::AddDpSync(*graph, sync);
  sync.dp_size = 100000;
  auto at100k = et::scaleout::AddDpSync(*graph, sync);
  ASSERT_TRUE(at8.ok() && at100k.ok());
  ASSERT_TRUE(at8->graph && at100k->graph);
  const et::NodeModel model8 = et::NodeModel::FromGraph(*at8->graph);
  const et::NodeModel model100k = et::NodeModel::FromGraph(*at100k->graph);
  auto moved = model8.WithGroupTable(at100k->graph->metadata());
  ASSERT_TRUE(moved.ok()) << moved.status();
  ASSERT_EQ(moved->groups().size(), model100k.groups().size());
  for (size_t g = 0; g < moved->groups().size(); ++g) {
    EXPECT_EQ(moved->groups()[g].name, model100k.groups()[g].name);
    EXPECT_EQ(moved->groups()[g].size, model100k.groups()[g].size);
  }
  EXPECT_EQ(moved->metadata().SerializeAsString(),
            model100k.metadata().SerializeAsString());
  EXPECT_EQ(et::scaleout::DpSyncNote(*at8, sync), at100k->note);
  // Metadata that differs elsewhere is refused, not silently taken.
  auto other = at100k->graph->metadata();
  other.set_version("another");
  EXPECT_FALSE(model8.WithGroupTable(other).ok());
}

}  // namespace
