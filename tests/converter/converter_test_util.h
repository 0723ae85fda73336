// Test helpers for converter tests: convert a file from tests/data into a temp
// .et and load it back as a Graph.
#ifndef TESTS_CONVERTER_CONVERTER_TEST_UTIL_H_
#define TESTS_CONVERTER_CONVERTER_TEST_UTIL_H_

#include <unistd.h>

#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"

namespace et::convert {

inline std::string DataPath(const std::string& rel) {
  return std::string(ET_TEST_DATA) + "/" + rel;
}

inline std::string TempOut(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

struct Converted {
  ConvertReport summary;
  Graph graph;
};

inline absl::StatusOr<Converted> ConvertAndLoad(const std::string& rel,
                                                ConvertOptions options = {}) {
  std::string out = TempOut(rel.substr(rel.rfind('/') + 1) + ".et");
  auto summary = ConvertFile(DataPath(rel), out, options);
  if (!summary.ok()) return summary.status();
  auto graph = LoadGraph(out);
  if (!graph.ok()) return graph.status();
  return Converted{*summary, std::move(*graph)};
}

}  // namespace et::convert

#endif  // TESTS_CONVERTER_CONVERTER_TEST_UTIL_H_
