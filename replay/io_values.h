// Reads the three strings of a Chakra IOInfo (values, shapes, types), which
// PyTorch's execution trace writes as Python literals: shapes "[[64, 32],
// [32]]", values with tensor tuples "[[5, 6, 0, 2048, 4, 'cuda:0'], 1.0]",
// types "['Tensor(float)', 'Int']". Parsed once when the replay plan is built;
// the plan keeps only typed fields.
#ifndef REPLAY_IO_VALUES_H_
#define REPLAY_IO_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace et::replay {

using Shape = std::vector<int64_t>;

// One tensor as the execution trace records it: [tensor_id, storage_id, offset
// (elements), num_elem, elem_bytes, device].
struct TensorRef {
  uint64_t tensor_id = 0;
  uint64_t storage_id = 0;
  uint64_t offset_elems = 0;
  uint64_t num_elems = 0;
  uint64_t elem_bytes = 0;

  // Bytes the storage must hold for this view: (offset + num_elem) *
  // elem_bytes.
  uint64_t extent_bytes() const {
    return (offset_elems + num_elems) * elem_bytes;
  }
};

// Shapes of the top-level arguments. A tensor argument gives its shape, a
// scalar an empty shape, a list of tensors (GenericList) the shape of its first
// tensor. Returns false on text that is not a Python list literal.
bool ParseShapes(absl::string_view text, std::vector<Shape>* shapes);

// The quoted strings of a types list: "['Tensor(float)', 'Int']" ->
// {"Tensor(float)", "Int"}. Returns false on malformed text.
bool ParseTypes(absl::string_view text, std::vector<std::string>* types);

// Every tensor tuple anywhere in a values list (nested lists included), in
// order. Returns false on malformed text.
bool CollectTensorRefs(absl::string_view text, std::vector<TensorRef>* tensors);

}  // namespace et::replay

#endif  // REPLAY_IO_VALUES_H_
