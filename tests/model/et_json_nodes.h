// Test-only access to the nodes of a real PyTorch ET JSON file: finds a node by
// id and returns its IOInfo lists as the JSON texts the converter stores in a
// .et node, for both the flat 1.0.1 layout (input_shapes, input_types) and the
// nested 1.0.2+ layout (inputs: {values, shapes, types}).
#ifndef TESTS_PROTO_ET_JSON_NODES_H_
#define TESTS_PROTO_ET_JSON_NODES_H_

#include <cstdint>
#include <string>

#include "base/gzip_input.h"
#include "nlohmann/json.hpp"

namespace et::testing {

struct JsonNodeIo {
  std::string name;
  std::string in_values, in_shapes, in_types;
  std::string out_values, out_shapes, out_types;
};

// Loads and parses an ET JSON (plain or gzip); a discarded value on failure.
inline nlohmann::json LoadEtJson(const std::string& path) {
  std::string text;
  if (!ReadFileMaybeGzip(path, &text).ok())
    return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

inline JsonNodeIo IoOf(const nlohmann::json& node) {
  JsonNodeIo io;
  io.name = node.value("name", "");
  if (node.contains("input_shapes")) {  // 1.0.1
    io.in_values = node["inputs"].dump();
    io.in_shapes = node["input_shapes"].dump();
    io.in_types = node["input_types"].dump();
    io.out_values = node["outputs"].dump();
    io.out_shapes = node["output_shapes"].dump();
    io.out_types = node["output_types"].dump();
  } else {
    io.in_values = node["inputs"]["values"].dump();
    io.in_shapes = node["inputs"]["shapes"].dump();
    io.in_types = node["inputs"]["types"].dump();
    io.out_values = node["outputs"]["values"].dump();
    io.out_shapes = node["outputs"]["shapes"].dump();
    io.out_types = node["outputs"]["types"].dump();
  }
  return io;
}

// The node with `id`; an empty name when there is none.
inline JsonNodeIo FindNodeIo(const nlohmann::json& et, int64_t id) {
  if (!et.is_object() || !et.contains("nodes")) return {};
  for (const nlohmann::json& node : et["nodes"]) {
    if (node.value("id", int64_t{-1}) == id) return IoOf(node);
  }
  return {};
}

}  // namespace et::testing

#endif  // TESTS_PROTO_ET_JSON_NODES_H_
