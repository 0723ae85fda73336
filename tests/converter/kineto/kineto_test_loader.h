// Test-only loaders for the Kineto linking tests and benchmark: reads a PyTorch
// ET JSON (plain or gzip) with nlohmann::json into HostOpView records, the way
// the converter would hand them to LinkKineto, and reads raw Kineto events for
// independent checks. Header-only; not for production (nlohmann loads the whole
// DOM).
#ifndef TESTS_CONVERTER_KINETO_KINETO_TEST_LOADER_H_
#define TESTS_CONVERTER_KINETO_KINETO_TEST_LOADER_H_

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/gzip_input.h"
#include "converter/kineto/link_types.h"

namespace et::kineto::testing {

inline std::string DataPath(const std::string& relative) {
  return std::string(ET_TEST_DATA) + "/" + relative;
}

inline nlohmann::json ReadJson(const std::string& path) {
  std::string text;
  if (!et::ReadFileMaybeGzip(path, &text).ok()) return nlohmann::json();
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Host ops of an ET file; names are owned by `names` (stable addresses).
struct LoadedEt {
  std::deque<std::string> names;
  std::vector<HostOpView> ops;
};

inline LoadedEt LoadEtHostOps(const std::string& path) {
  LoadedEt et;
  const nlohmann::json doc = ReadJson(path);
  if (!doc.is_object() || !doc.contains("nodes")) return et;
  for (const auto& node : doc["nodes"]) {
    HostOpView op;
    op.et_id = node.value("id", uint64_t{0});
    if (node.contains("parent")) {
      op.parent_et_id = node["parent"].get<uint64_t>();
    } else if (node.contains("ctrl_deps")) {
      op.parent_et_id = node["ctrl_deps"].get<uint64_t>();
    }
    if (op.parent_et_id == op.et_id) op.parent_et_id = 0;
    et.names.push_back(node.value("name", std::string()));
    op.name = et.names.back();
    op.tid = node.value("tid", int64_t{0});
    op.rf_id = node.contains("rf_id") ? node["rf_id"].get<int64_t>() : -1;
    op.order = op.rf_id >= 0 ? op.rf_id : static_cast<int64_t>(op.et_id);
    et.ops.push_back(op);
  }
  return et;
}

// The Kineto events array of a trace (object with traceEvents, or a bare
// array).
inline nlohmann::json KinetoEvents(const std::string& path) {
  nlohmann::json doc = ReadJson(path);
  if (doc.is_array()) return doc;
  if (doc.is_object() && doc.contains("traceEvents")) return doc["traceEvents"];
  return nlohmann::json::array();
}

// Durations only: a double holds a 1.7e18 ns timestamp to just 256 ns.
inline int64_t DurationMicrosToNanos(const nlohmann::json& value) {
  return static_cast<int64_t>(value.get<double>() * 1000.0 + 0.5);
}

}  // namespace et::kineto::testing

#endif  // TESTS_CONVERTER_KINETO_KINETO_TEST_LOADER_H_
