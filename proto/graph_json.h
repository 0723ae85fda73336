// One valid JSON document for a .et file, for inspection and diffing:
// {"metadata": {...}, "nodes": [ {...}, ... ]}, fields named as in et_def.proto
// (protobuf's JSON mapping, 64-bit integers as strings as that mapping
// requires). Streams node by node: memory does not grow with the file.
#ifndef PROTO_GRAPH_JSON_H_
#define PROTO_GRAPH_JSON_H_

#include <string>

#include "absl/status/status.h"

namespace et {

absl::Status EtToJsonFile(const std::string& et_path,
                          const std::string& json_path);

}  // namespace et

#endif  // PROTO_GRAPH_JSON_H_
