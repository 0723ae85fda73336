// libFuzzer target: the Nsight Systems import on one SQLite file (the guarded
// database access, the table readers, the graph builder and the .et writer of
// every graph). Outputs are staged; each staged file is removed after the run.
#include <cstdint>
#include <cstdio>
#include <string>

#include "converter/graph/rank_outputs.h"
#include "converter/nsys/nsys_import.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = et::fuzz::WriteFuzzInput(data, size, ".sqlite");
  auto results = et::convert::ConvertNsysExport(in, in + ".%d.et", {});
  if (results.ok()) {
    for (const auto& r : *results) std::remove(r.staged.c_str());
  }
  return 0;
}
