// Parses the JSON text of one ET node into a HostOp, for both layouts: the
// flat 1.0.1 layout (`parent`, `inputs` + `input_shapes` + `input_types`, ...)
// and the nested 1.0.2+ layout (`ctrl_deps`, `inputs: {values, shapes, types[,
// strides]}`, `attrs`), including the fields a trace linker adds (ts,
// durations, cat, stream, deps). One parser is reused for every node (simdjson
// keeps its buffers). Not thread-safe.
#ifndef CONVERTER_ET_ET_NODE_PARSER_H_
#define CONVERTER_ET_ET_NODE_PARSER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "converter/common/host_op.h"

namespace et::convert {

class EtNodeParser {
 public:
  EtNodeParser(std::string path, StringPool* pool);
  ~EtNodeParser();

  // `json` must have kSpanPadding readable bytes after its end. `index` is the
  // node's position in the file, used in errors when the node has no usable id.
  // Its tensors are appended to `tensors` (op->tensors_begin points there).
  absl::Status Parse(absl::string_view json, int64_t index, HostOp* op,
                     std::vector<TensorRef>* tensors);

  // Node-level keys we did not recognise, with counts (kept as string
  // attributes).
  const absl::flat_hash_map<std::string, int64_t>& unknown_keys() const {
    return unknown_keys_;
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  absl::flat_hash_map<std::string, int64_t> unknown_keys_;
};

}  // namespace et::convert

#endif  // CONVERTER_ET_ET_NODE_PARSER_H_
