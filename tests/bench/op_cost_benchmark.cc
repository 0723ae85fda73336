// Benchmark of ParseIoInfo + EstimateOpCost over every node of a real trace
// (tfm_small_et: 10,817 nodes of a 2-layer transformer), the per-node work the
// converter and the simulator do for shape-derived costs.
#include <string>
#include <vector>

#include "base/gzip_input.h"
#include "benchmark/benchmark.h"
#include "model/op_cost.h"
#include "nlohmann/json.hpp"

namespace {

struct NodeStrings {
  std::string name, in_shapes, in_types, out_shapes, out_types;
};

const std::vector<NodeStrings>& TransformerNodes() {
  static const std::vector<NodeStrings>* nodes = [] {
    auto* out = new std::vector<NodeStrings>;
    std::string text;
    if (!et::ReadFileMaybeGzip(std::string(ET_TEST_DATA) +
                                   "/pytorch-1.13-cpu/tfm_small_et.json.gz",
                               &text)
             .ok()) {
      return out;
    }
    nlohmann::json et = nlohmann::json::parse(text, nullptr, false);
    if (!et.is_object()) return out;
    for (const nlohmann::json& n : et["nodes"]) {
      out->push_back({n.value("name", ""), n["input_shapes"].dump(),
                      n["input_types"].dump(), n["output_shapes"].dump(),
                      n["output_types"].dump()});
    }
    return out;
  }();
  return *nodes;
}

void BM_ParseAndEstimate(benchmark::State& state) {
  const std::vector<NodeStrings>& nodes = TransformerNodes();
  int64_t bytes = 0;
  for (const NodeStrings& n : nodes) {
    bytes += n.in_shapes.size() + n.in_types.size() + n.out_shapes.size() +
             n.out_types.size();
  }
  for (auto _ : state) {
    int64_t flops = 0;
    for (const NodeStrings& n : nodes) {
      et::OpCost cost =
          et::EstimateOpCost(n.name, et::ParseIoInfo(n.in_shapes, n.in_types),
                             et::ParseIoInfo(n.out_shapes, n.out_types));
      flops += cost.num_ops;
    }
    benchmark::DoNotOptimize(flops);
  }
  state.SetItemsProcessed(state.iterations() * nodes.size());
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_ParseAndEstimate)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
