// libFuzzer target: the .et reader and graph loader (length-delimited
// protobuf, plain or gzip), plus the per-node checks every tool relies on.
#include <cstdint>
#include <string>

#include "fuzz_input_file.h"
#include "proto/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = et::fuzz::WriteFuzzInput(data, size, ".et");
  auto graph = et::LoadGraph(in);
  if (graph.ok()) {
    // Walks the loaded graph as the tools do; must not crash on any graph the
    // loader accepted.
    (void)graph->TopologicalOrder(et::DepSelection::kAll);
  }
  return 0;
}
