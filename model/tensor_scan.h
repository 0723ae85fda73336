// A fast reader of the tensor tuples in an IOInfo `values` text, for the
// memory model's walk over every node (docs/memory-model.md): one pass over
// the characters, no tree of literals. It reads the common forms (lists,
// integers, decimals, quoted strings, True/False/None and their JSON
// spellings) and says when it meets anything else, so that
// CollectIoTensors (io_shapes.h) can hand the text to its full parser.
// Pure functions; thread-safe.
#ifndef MODEL_TENSOR_SCAN_H_
#define MODEL_TENSOR_SCAN_H_

#include <cstddef>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/io_shapes.h"

namespace et {

enum class TensorScan {
  kRead,    // `text` is one well-formed list; its tuples are in `tensors`
  kUnsure,  // something this reader does not take (tuples, objects, inf,
            // a malformed text): `tensors` is cleared, use the full parser
};

// The end of the number token whose digits start at `digits_start` in
// `text`, as the literal parser reads one: digits, and '.', 'e', 'E', '+' or
// a '-' after the first character, which make `*integral` false. Shared by
// both readers so that they split numbers alike.
size_t NumberTokenEnd(absl::string_view text, size_t digits_start,
                      bool* integral);

// Appends, in order, every [tensor_id, storage_id, offset, numel, elem_bytes,
// device] tuple (five non-negative integers and a string) of the list `text`,
// at any depth: what CollectIoTensors reads, when it returns kRead.
TensorScan ScanTensorTuples(absl::string_view text,
                            std::vector<IoTensor>* tensors);

}  // namespace et

#endif  // MODEL_TENSOR_SCAN_H_
