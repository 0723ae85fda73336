// Element types of tensors, the one place that maps PyTorch's spellings of a
// dtype to a canonical value. Traces spell the same type many ways: ET type
// strings "Tensor(float)", "Tensor(c10::Half)", "Tensor(long int)";
// c10::ScalarType names "Float", "Half", "BFloat16", "Long", "Byte"
// (record_param_comms' `dtype`); torch names "torch.float16", "float16",
// "bf16", "fp8_e4m3". Everything is parsed once into a `Dtype` so that later
// stages switch on an enum (the replay's NCCL/MPI/cuBLAS mappings are switches
// over it) and never match strings. Pure functions over static tables
// (thread-safe).
#ifndef MODEL_DTYPE_H_
#define MODEL_DTYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace et {

// Canonical element types. kUnknown is what an unparsed spelling leaves.
enum class Dtype : uint8_t {
  kUnknown,
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt64,
  kInt32,
  kInt16,
  kInt8,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
  kComplex32,
  kComplex64,
  kComplex128,
  kFloat8E4M3Fn,
  kFloat8E5M2,
  kFloat8E4M3Fnuz,
  kFloat8E5M2Fnuz,
  kQInt8,
  kQUInt8,
  kQInt32,
};

// An element type with its canonical name ("float32", "bfloat16", "int64",
// ...) and its size.
struct DtypeInfo {
  absl::string_view name;  // points into a static table; empty when unknown
  int elem_bytes = 0;      // 0 when unknown
  Dtype id = Dtype::kUnknown;
  bool known() const { return elem_bytes > 0; }
};

// Maps any spelling listed at the top of this file to its DtypeInfo. Prefixes
// "Tensor(...)", "torch.", "c10::" and "at::" are stripped, surrounding spaces
// ignored and case does not matter ("HALF" is float16). Returns nullopt for
// anything else (including "Tensor(nullptr (uninitialized))", "Device", "").
std::optional<DtypeInfo> DtypeFromName(absl::string_view name);

// Name and size of an enum value; an empty DtypeInfo for kUnknown.
DtypeInfo DtypeInfoOf(Dtype dtype);

// "float32", "float16", ...; "" for kUnknown.
absl::string_view DtypeName(Dtype dtype);

// Bytes per element (bool: 1); 0 for kUnknown.
int ElementBytes(Dtype dtype);

}  // namespace et

#endif  // MODEL_DTYPE_H_
