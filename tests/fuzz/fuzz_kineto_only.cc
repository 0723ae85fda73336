// libFuzzer target: a Kineto trace given alone (parse, CPU-op nesting, the
// synthesized host ops, linking and the .et writer). Any outcome but a crash,
// sanitizer report, hang or blow-up is fine; a success must leave its output.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "converter/kineto_only/kineto_only_import.h"
#include "fuzz_input_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = et::fuzz::WriteFuzzInput(data, size, ".kineto.json");
  const std::string out = in + ".et";
  auto report = et::convert::ConvertKinetoOnly(in, out, {});
  if (report.ok() != (access(out.c_str(), F_OK) == 0)) abort();
  std::remove(out.c_str());
  return 0;
}
