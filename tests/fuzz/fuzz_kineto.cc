// libFuzzer target: the Kineto / Chrome trace importer on in-memory text.
#include <cstdint>
#include <string>

#include "converter/kineto/kineto_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto trace = et::kineto::KinetoTrace::Parse(
      std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  (void)trace;
  return 0;
}
