// libFuzzer target: the whole PyTorch ET JSON import (tokenizer, node parser,
// graph builder, .et writer) on one input file. Any outcome but a crash,
// sanitizer report, hang or blow-up is fine; a success must leave its output.
#include <cstdint>
#include <cstdio>
#include <string>

#include "converter/converter.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = et::fuzz::WriteFuzzInput(data, size, ".json");
  const std::string out = in + ".et";
  et::convert::ConvertOptions options;
  options.force_schema = true;  // reach the node parser with any schema
  auto summary = et::convert::ConvertFile(in, out, options);
  if (summary.ok() != (std::fopen(out.c_str(), "rb") != nullptr)) abort();
  std::remove(out.c_str());
  return 0;
}
