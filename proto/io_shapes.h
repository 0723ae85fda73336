// Typed view of a node's IOInfo strings. The converter stores the ET's
// `shapes`, `types` and `values` lists verbatim as JSON text
// ("[[32,64],[64],[],[[2,3],[4]]]",
// "[\"Tensor(float)\",\"Int\",\"GenericList[Tensor(c10::Half)]\"]"); this
// parses them once into per-position entries (tensor dims, tensor-list dims,
// dtype, scalar values) so that cost models never regex strings. Parsing never
// throws and never aborts: a value that does not parse is counted in
// IoParseResult::bad_values and its entry is left kUnknown. Everything here is
// a pure function of its arguments (thread-safe).
#ifndef PROTO_IO_SHAPES_H_
#define PROTO_IO_SHAPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace et {

// An element type: canonical name ("float32", "bfloat16", "int64", ...) and its
// size.
struct DtypeInfo {
  absl::string_view name;  // points into a static table; empty when unknown
  int elem_bytes = 0;      // 0 when unknown
  bool known() const { return elem_bytes > 0; }
};

// Maps the spellings PyTorch uses for an element type to a DtypeInfo:
//   ET type strings  "Tensor(float)", "Tensor(c10::Half)", "Tensor(long int)",
//   ... ScalarType names "Float", "Half", "BFloat16", "Long", "Byte"
//   (record_param_comms dtype), torch names      "torch.float16", "float16",
//   "bf16", "fp8_e4m3", ...
// Returns nullopt for anything else (including "Int", "Bool" scalars without
// Tensor()).
std::optional<DtypeInfo> DtypeFromName(absl::string_view name);

// What one input/output position holds.
enum class IoKind : uint8_t {
  kTensor,      // dims + dtype
  kTensorList,  // list_dims + dtype (of the first element; lists are
                // homogeneous in practice)
  kNullTensor,  // "Tensor(nullptr (uninitialized))": an undefined optional
                // tensor
  kScalar,   // Int, Double, Bool, ...: scalar holds the value when values were
             // given
  kList,     // GenericList of scalars: int_list holds the values when given
  kOther,    // None, Device, String, Object, Tuple[...], Storage...
  kUnknown,  // its shape/type text did not parse
};

struct IoEntry {
  IoKind kind = IoKind::kUnknown;
  DtypeInfo dtype;            // kTensor, kTensorList
  std::vector<int64_t> dims;  // kTensor
  std::vector<std::vector<int64_t>>
      list_dims;                  // kTensorList: every leaf tensor's dims
  std::optional<double> scalar;   // kScalar, from values (bool -> 0/1)
  std::vector<int64_t> int_list;  // kList, from values (bools -> 0/1)

  bool is_tensor() const { return kind == IoKind::kTensor; }
  // Elements of the tensor, or of all tensors of a list; 0 for non-tensors.
  int64_t NumElements() const;
  // NumElements() * element size; 0 when the dtype is unknown.
  int64_t Bytes() const;
};

struct IoParseResult {
  std::vector<IoEntry> entries;  // one per position of the longest of the lists
  int bad_values = 0;  // positions or whole lists that failed to parse
  std::string
      first_error;  // the first problem, for a diagnostic (empty if none)

  int64_t TotalBytes() const;  // sum of Bytes() over entries
};

// Parses the JSON texts of one IOInfo. Empty strings are allowed (no entries
// from them). `values_json` is optional: with it, scalar and int-list positions
// get their values.
IoParseResult ParseIoInfo(absl::string_view shapes_json,
                          absl::string_view types_json,
                          absl::string_view values_json = {});

// Product of dims (1 for a 0-d tensor); negative dims count as 0.
int64_t NumElementsOf(const std::vector<int64_t>& dims);

}  // namespace et

#endif  // PROTO_IO_SHAPES_H_
