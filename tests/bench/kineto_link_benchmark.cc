// Benchmarks of Kineto linking on the largest real pair: param/resnet_kineto (111,631
// events, 9,628 kernels, 30 iterations) + resnet_et.1.0.1 (1,313 host ops).
#include <benchmark/benchmark.h>

#include <string>

#include "converter/kineto/kineto_link.h"
#include "proto/file_util.h"
#include "tests/converter/kineto_test_loader.h"

namespace et::kineto {
namespace {

const char kKineto[] = "param/resnet_kineto.json.gz";
const char kEt[] = "param/resnet_et.1.0.1.json.gz";

// Parsing the decompressed JSON text (gunzip excluded).
void BM_ParseResnetKineto(benchmark::State& state) {
  std::string text;
  if (!ReadFileMaybeGzip(testing::DataPath(kKineto), &text).ok()) {
    state.SkipWithError("cannot read resnet_kineto");
    return;
  }
  size_t events = 0;
  for (auto _ : state) {
    auto trace = KinetoTrace::Parse(text, "resnet_kineto");
    if (!trace.ok()) {
      state.SkipWithError(std::string(trace.status().message()).c_str());
      return;
    }
    events = trace->events().size();
  }
  state.counters["events"] = static_cast<double>(events);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseResnetKineto)->Unit(benchmark::kMillisecond);

// LinkKineto alone: matching, GPU ops, sync edges, steps.
void BM_LinkResnet(benchmark::State& state) {
  auto trace = KinetoTrace::Load(testing::DataPath(kKineto));
  testing::LoadedEt et = testing::LoadEtHostOps(testing::DataPath(kEt));
  if (!trace.ok() || et.ops.empty()) {
    state.SkipWithError("cannot load the resnet pair");
    return;
  }
  for (auto _ : state) {
    auto result = LinkKineto(*trace, et.ops, LinkOptions());
    benchmark::DoNotOptimize(result);
  }
  state.counters["host_ops"] = static_cast<double>(et.ops.size());
}
BENCHMARK(BM_LinkResnet)->Unit(benchmark::kMillisecond);

// What --kineto adds to a conversion: read + gunzip + parse + link.
void BM_LoadAndLinkResnet(benchmark::State& state) {
  testing::LoadedEt et = testing::LoadEtHostOps(testing::DataPath(kEt));
  for (auto _ : state) {
    auto trace = KinetoTrace::Load(testing::DataPath(kKineto));
    if (!trace.ok()) {
      state.SkipWithError("cannot load resnet_kineto");
      return;
    }
    auto result = LinkKineto(*trace, et.ops, LinkOptions());
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_LoadAndLinkResnet)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace et::kineto

BENCHMARK_MAIN();
