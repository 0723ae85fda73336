// Test-only loaders for the Kineto linking tests and benchmark: reads a PyTorch
// ET JSON (plain or gzip) with nlohmann::json into HostOpView records, the way
// the converter would hand them to LinkKineto, and reads raw Kineto events for
// independent checks. Header-only; not for production (nlohmann loads the whole
// DOM).
#ifndef TESTS_CONVERTER_KINETO_KINETO_TEST_LOADER_H_
#define TESTS_CONVERTER_KINETO_KINETO_TEST_LOADER_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
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

// A host event of a trace: a cpu_op or a user_annotation (record_function
// range), read straight from the JSON.
struct HostSpan {
  int64_t start_ns = 0, end_ns = 0;
  bool cpu_op = false;
  std::string name;
};

// Per (pid, tid), the trace's host events sorted by start, outer first: what
// an independent nesting walk needs.
inline std::map<std::pair<int64_t, int64_t>, std::vector<HostSpan>>
HostSpansByThread(const std::string& path) {
  std::map<std::pair<int64_t, int64_t>, std::vector<HostSpan>> by_thread;
  const nlohmann::json doc = ReadJson(path);
  for (const auto& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") != "X" ||
        (cat != "cpu_op" && cat != "user_annotation"))
      continue;
    const int64_t start = std::llround(e["ts"].get<double>() * 1000);
    const int64_t dur = std::llround(e["dur"].get<double>() * 1000);
    by_thread[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back(
        {start, start + dur, cat == "cpu_op", e.value("name", "")});
  }
  for (auto& [thread, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(),
              [](const HostSpan& a, const HostSpan& b) {
                return std::make_tuple(a.start_ns, -a.end_ns) <
                       std::make_tuple(b.start_ns, -b.end_ns);
              });
  }
  return by_thread;
}

}  // namespace et::kineto::testing

#endif  // TESTS_CONVERTER_KINETO_KINETO_TEST_LOADER_H_
