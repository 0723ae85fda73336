// converter/common/ holds what every importer (converter/et, kineto_only, nsys)
// fills and reports; docs/et-convert.md, "Code layout".
//
// The converter's compact record of one ET node, filled by EtNodeParser (or
// HostOpBuilder) and read by every later stage. Strings that repeat across
// nodes (names, schemas) are interned in a StringPool as 32-bit ids; the IOInfo
// texts are kept verbatim in one string per node, since they are written to the
// output unchanged.
#ifndef CONVERTER_COMMON_HOST_OP_H_
#define CONVERTER_COMMON_HOST_OP_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "base/string_pool.h"

namespace et::convert {

// One tensor argument: [tensor_id, storage_id, offset, num_elem, elem_bytes,
// device].
struct TensorRef {
  int64_t tensor_id = 0;
  int64_t storage_id = 0;
  int64_t num_elem = 0;
  int32_t elem_bytes = 0;
  uint16_t arg = 0;     // position of the argument holding it
  bool on_gpu = false;  // device string starts with "cuda" / "hip"
  int64_t bytes() const { return num_elem * elem_bytes; }
};

// An attribute from a nested-format `attrs` list that has no typed field below.
struct ExtraAttr {
  StringPool::Id name = 0;
  enum class Kind : uint8_t { kInt, kUint, kDouble, kBool, kString, kIntList };
  Kind kind = Kind::kString;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::vector<int64_t> list;
};

// Raw JSON texts of a node kept as byte ranges of the trace, not copied: most
// ops are folded and never written, so their text is never read again (style.md
// rule 10).
enum IoPart {
  kInValues,
  kInShapes,
  kInTypes,
  kOutValues,
  kOutShapes,
  kOutTypes,
  kInStrides,
  kOutStrides,
  kIoParts
};

struct HostOp {
  uint64_t id = 0;
  uint64_t parent =
      0;  // enclosing op (1.0.1 `parent`, nested `ctrl_deps`); 0 = none
  StringPool::Id name = 0;
  StringPool::Id op_schema = 0;
  int64_t rf_id = -1;
  int64_t fw_parent = 0;
  int64_t seq_id = -1;
  int64_t scope = 0;
  int64_t tid = 0;
  int64_t fw_tid = 0;

  uint64_t text_offset = 0;  // the node's JSON in the decoded trace
  uint32_t text_length = 0;
  std::array<uint32_t, kIoParts>
      io_begin{};  // each part's range within the node's JSON
  std::array<uint32_t, kIoParts> io_len{};
  // Tensors among the inputs then the outputs, flattened, in a trace-wide arena
  // (one heap block for all ops instead of two per op: a tenth of the parse and
  // teardown time).
  uint32_t tensors_begin = 0;
  uint32_t num_inputs = 0;
  uint32_t num_outputs = 0;

  // Recorded times (linked "ET+" files, Kineto); negative when absent.
  double ts_us = -1;
  double inclusive_dur_us = -1;  // `inclusive_dur`, else `dur`: the op's span
  double exclusive_dur_us = -1;  // self time; derived from the span if absent
  double dur_us = -1;            // GPU nodes: `dur`, else `inclusive_dur`
  int64_t stream = -1;
  int32_t device = -1;  // GPU nodes
  StringPool::Id category =
      0;  // `cat` of GPU nodes ("kernel", "gpu_memcpy", ...)
  std::vector<uint64_t> inter_thread_deps;
  std::vector<uint64_t> sync_deps;

  std::vector<ExtraAttr> extra_attrs;

  // Part `part` of the node's JSON text `node_text` (as loaded by
  // TraceTextSource).
  absl::string_view io(absl::string_view node_text, IoPart part) const {
    return node_text.substr(io_begin[part], io_len[part]);
  }
  bool is_gpu() const { return category != 0 || stream >= 0; }
};

// The host ops of one trace, as an importer hands them to the graph stages
// (parsed from an ET file, or built in memory by HostOpBuilder).
struct ParsedTrace {
  std::vector<HostOp> ops;         // in file order
  std::vector<TensorRef> tensors;  // the ops' tensors (HostOp::tensors_begin)
  std::map<std::string, std::string>
      fields;  // raw top-level fields (schema, pid, ...)
};

}  // namespace et::convert

#endif  // CONVERTER_COMMON_HOST_OP_H_
