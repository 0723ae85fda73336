// et-sim speed: one 1 MiB all-reduce at 1024 and 4096 ranks (ASTRA-sim's
// analytical backend needs 3.4 s and 74 s), in our ASTRA-compatible mode
// (chunk-by-chunk ring simulation) and with the closed-form model; and a real
// 10,817-node trace (tfm_small, converted) at 4096 ranks, end to end from the
// .et file.
#include <filesystem>
#include <string>

#include "benchmark/benchmark.h"
#include "converter/converter.h"
#include "model/graph.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "simulator/simulation.h"

namespace {

const std::string kDir = std::string(ET_BINARY_DIR) + "/sim_bench";

std::string AllReduceEt() {
  const std::string path = kDir + "/all_reduce_1MiB.et";
  if (std::filesystem::exists(path)) return path;
  std::filesystem::create_directories(kDir);
  ChakraProtoMsg::Node n;
  n.set_id(0);
  n.set_name("all_reduce_1MiB");
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  et::SetInt64(n.mutable_attr(), et::attr::kCommType,
               ChakraProtoMsg::ALL_REDUCE);
  et::SetInt64(n.mutable_attr(), et::attr::kCommSize, 1 << 20);
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  absl::Status s = et::SaveGraph(et::Graph::Build(meta, {n}), path);
  if (!s.ok()) std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
  return path;
}

std::string RingTopology(int64_t ranks) {
  std::filesystem::create_directories(kDir);
  const std::string path = kDir + "/ring_" + std::to_string(ranks) + ".yml";
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fprintf(f,
               "topology: [ Ring ]\nnpus_count: [ %ld ]\nbandwidth: [ 50.0 "
               "]\nlatency: [ 500.0 ]\n",
               static_cast<long>(ranks));
  std::fclose(f);
  return path;
}

// The whole Simulation::Run (read, compile, simulate, report) once per
// iteration.
void TimeSimulation(benchmark::State& state, const std::string& et,
                    const et::sim::SimOptions& options) {
  for (auto _ : state) {
    auto sim = et::sim::Simulation::Run({et, 0}, options);
    if (!sim.ok())
      state.SkipWithError(std::string(sim.status().message()).c_str());
    benchmark::DoNotOptimize(sim);
  }
}

void BM_AllReduce1MiB_AstraCompat(benchmark::State& state) {
  const int64_t ranks = state.range(0);
  et::sim::SimOptions o;
  o.world_size = ranks;
  o.scheduling = et::sim::SchedulingMode::kAstraCompat;
  o.comm_model = et::sim::CommModel::kAstra;
  o.topology = RingTopology(ranks);
  o.astra_system = std::string(ET_TEST_DATA) +
                   "/astra-sim/configs/"
                   "examples__system__native_collectives__Ring_4chunks.json";
  const std::string et = AllReduceEt();
  TimeSimulation(state, et, o);
}
BENCHMARK(BM_AllReduce1MiB_AstraCompat)
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond);

void BM_AllReduce1MiB_Model(benchmark::State& state) {
  et::sim::SimOptions o;
  o.world_size = state.range(0);
  const std::string et = AllReduceEt();
  TimeSimulation(state, et, o);
}
BENCHMARK(BM_AllReduce1MiB_Model)
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond);

void BM_TfmSmallTrace(benchmark::State& state) {
  const std::string et = kDir + "/tfm_small.et";
  if (!std::filesystem::exists(et)) {
    std::filesystem::create_directories(kDir);
    // Every ET node (10,817), not the 1,308 the default simulation granularity
    // keeps.
    et::convert::ConvertOptions every_node;
    every_node.granularity = et::convert::Granularity::kAll;
    auto s = et::convert::ConvertFile(
        std::string(ET_TEST_DATA) + "/pytorch-1.13-cpu/tfm_small_et.json.gz",
        et, every_node);
    if (!s.ok()) {
      state.SkipWithError(std::string(s.status().message()).c_str());
      return;
    }
  }
  et::sim::SimOptions o;
  o.world_size = state.range(0);
  int64_t nodes = 0;
  for (auto _ : state) {
    auto sim = et::sim::Simulation::Run({et, 0}, o);
    if (!sim.ok()) {
      state.SkipWithError(std::string(sim.status().message()).c_str());
      break;
    }
    nodes =
        static_cast<int64_t>((*sim)->result().timelines[0].finish_ns.size());
  }
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_TfmSmallTrace)->Arg(8)->Arg(4096)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
