// Helper for the fuzz targets whose entry point reads a path (the readers
// stream from files, as the tools do): writes the fuzz input to a per-process
// scratch file and returns its path. Not thread-safe (libFuzzer runs one input
// at a time per process).
#ifndef TESTS_FUZZ_FUZZ_INPUT_FILE_H_
#define TESTS_FUZZ_FUZZ_INPUT_FILE_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace et::fuzz {

inline std::string WriteFuzzInput(const uint8_t* data, size_t size,
                                  const char* suffix) {
  const char* dir = getenv("TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/et_fuzz_" +
                           std::to_string(getpid()) + suffix;
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) abort();  // the harness is broken, not the code under test
  if (size > 0 && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
  return path;
}

}  // namespace et::fuzz

#endif  // TESTS_FUZZ_FUZZ_INPUT_FILE_H_
