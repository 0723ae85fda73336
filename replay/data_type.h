// Element types of replayed tensors and collectives, parsed once from the
// trace's spellings ("float32", "Tensor(c10::Half)", "torch.bfloat16", ...)
// into an enum, so the backends switch on a value instead of matching strings
// in the hot loop.
#ifndef REPLAY_DATA_TYPE_H_
#define REPLAY_DATA_TYPE_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace et::replay {

enum class DataType : uint8_t {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kUInt8,
  kInt32,
  kInt64,
  kBool,
};

// Bytes per element (1 for bool).
int ElementBytes(DataType type);

// "float32", "float16", ...: the names our converter writes into attr `dtype`.
absl::string_view DataTypeName(DataType type);

// Parses the spellings found in traces: "float32", "float", "Tensor(float)",
// "c10::Half", "torch.bfloat16", "long", "Tensor(long int)", ... Returns false
// when the text names no known type (the caller keeps its default).
bool ParseDataType(absl::string_view text, DataType* type);

}  // namespace et::replay

#endif  // REPLAY_DATA_TYPE_H_
