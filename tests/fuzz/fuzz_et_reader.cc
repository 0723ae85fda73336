// libFuzzer target: the .et reader, the graph loader and the node model every
// tool loads (length-delimited protobuf, plain or gzip), with the per-node
// checks and the decoding of every fact.
#include <cstdint>
#include <string>

#include "fuzz_input_file.h"
#include "model/graph.h"
#include "model/node_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = et::fuzz::WriteFuzzInput(data, size, ".et");
  auto graph = et::LoadGraph(in);
  if (graph.ok()) {
    // Walks the loaded graph as the tools do; must not crash on any graph the
    // loader accepted.
    (void)graph->TopologicalOrder(et::DepSelection::kAll);
  }
  // What et-sim, et-replay and et-viz load: the model with its IO table.
  auto model = et::NodeModel::Load(in);
  if (model.ok()) (void)model->notes();
  return 0;
}
