// Benchmarks of Kineto linking on the largest real pair: param/resnet_kineto
// (111,631 events, 9,628 kernels, 30 iterations) + resnet_et.1.0.1 (1,313 host
// ops).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/gzip_input.h"
#include "converter/kineto/kineto_link.h"
#include "tests/converter/kineto/kineto_test_loader.h"

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
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * text.size()));
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

// Scaling: the tfm_small pair (10.8k CPU ops each side, one iteration) repeated
// `state.range(0)` times back to back, as one long iteration.
void BM_LinkRepeatedTransformer(benchmark::State& state) {
  auto base = KinetoTrace::Load(
      testing::DataPath("pytorch-1.13-cpu/tfm_small_trace.json.gz"));
  testing::LoadedEt et = testing::LoadEtHostOps(
      testing::DataPath("pytorch-1.13-cpu/tfm_small_et.json.gz"));
  if (!base.ok() || et.ops.empty()) {
    state.SkipWithError("cannot load the tfm_small pair");
    return;
  }
  const int64_t copies = state.range(0);
  KinetoTrace trace;
  int64_t span_ns = 0;
  for (const KinetoEvent& e : base->events())
    span_ns = std::max(span_ns, e.ts_ns + e.dur_ns);
  uint64_t max_id = 0;
  int64_t max_order = 0;
  for (const HostOpView& op : et.ops) {
    max_id = std::max(max_id, op.et_id);
    max_order = std::max(max_order, op.order);
  }
  std::vector<HostOpView> ops;
  for (int64_t c = 0; c < copies; ++c) {
    for (KinetoEvent e : base->events()) {
      e.name = trace.Intern(base->name(e.name));
      e.ts_ns += c * span_ns;
      trace.AddEvent(e);
    }
    for (HostOpView op : et.ops) {
      op.et_id += c * (max_id + 1);
      if (op.parent_et_id != 0) op.parent_et_id += c * (max_id + 1);
      op.order += c * (max_order + 1);
      ops.push_back(op);
    }
  }
  for (auto _ : state) {
    auto result = LinkKineto(trace, ops, LinkOptions());
    benchmark::DoNotOptimize(result);
  }
  state.counters["host_ops"] = static_cast<double>(ops.size());
  state.counters["events"] = static_cast<double>(trace.events().size());
}
BENCHMARK(BM_LinkRepeatedTransformer)
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace et::kineto

BENCHMARK_MAIN();
