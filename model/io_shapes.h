// Typed view of a node's IOInfo strings: the one parser of the `shapes`,
// `types` and `values` lists for every tool. The texts come in two quotings:
// our converter stores the ET's lists verbatim as JSON
// ("[[32,64],[64],[],[[2,3],[4]]]",
// "[\"Tensor(float)\",\"Int\",\"GenericList[Tensor(c10::Half)]\"]"), while
// Chakra's reference converter writes Python's str() of the same lists
// ("['Tensor(float)', 'Int']", "[[5, 6, 0, 1, 4, 'cuda:0'], True, None]").
// Both are accepted everywhere: either quote character, true/True, false/False,
// null/None, tuples "(1, 2)" as lists, trailing commas, inf/nan.
//
// This parses them once into per-position entries (tensor dims, tensor-list
// dims, dtype, scalar values, the recorded tensors of `values`) so that cost
// models and the replay never regex strings. Parsing never throws and never
// aborts: a value that does not parse is counted in IoParseResult::bad_values
// and its entry is left kUnknown. Everything here is a pure function of its
// arguments (thread-safe).
#ifndef MODEL_IO_SHAPES_H_
#define MODEL_IO_SHAPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/dtype.h"  // DtypeInfo, DtypeFromName: part of this API

namespace et {

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

// Where a recorded tensor lives: kHostDevice for "cpu", N for "cuda:N" (0 for
// a bare "cuda"), kOtherDevice for anything else ("meta", "xpu:0", ...).
inline constexpr int32_t kHostDevice = -1;
inline constexpr int32_t kOtherDevice = -2;
int32_t TensorDeviceOf(absl::string_view text);

// One tensor as a `values` list records it: the tuple [tensor_id, storage_id,
// offset (elements), num_elem, elem_bytes, device].
struct IoTensor {
  uint64_t tensor_id = 0;
  uint64_t storage_id = 0;
  uint64_t offset_elems = 0;
  uint64_t num_elems = 0;
  uint64_t elem_bytes = 0;
  int32_t device = kHostDevice;

  uint64_t bytes() const { return num_elems * elem_bytes; }
  // Bytes the storage must hold for this view: (offset + num_elem) *
  // elem_bytes.
  uint64_t extent_bytes() const {
    return (offset_elems + num_elems) * elem_bytes;
  }
};

struct IoEntry {
  IoKind kind = IoKind::kUnknown;
  DtypeInfo dtype;            // kTensor, kTensorList
  std::vector<int64_t> dims;  // kTensor
  std::vector<std::vector<int64_t>>
      list_dims;                  // kTensorList: every leaf tensor's dims
  std::optional<double> scalar;   // kScalar, from values (bool -> 0/1)
  std::vector<int64_t> int_list;  // kList, from values (bools -> 0/1)
  std::vector<IoTensor> tensors;  // kTensor, kTensorList: from values, in order

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

// Parses the texts of one IOInfo (JSON or Python quoting, see above). Empty
// strings are allowed (no entries from them). `values_json` is optional: with
// it, scalar and int-list positions get their values and tensor positions their
// recorded tensors.
IoParseResult ParseIoInfo(absl::string_view shapes_json,
                          absl::string_view types_json,
                          absl::string_view values_json = {});

// The strings of a types list: "['Tensor(float)', 'Int']" or
// "[\"Tensor(float)\",\"Int\"]" -> {"Tensor(float)", "Int"}. False (and
// `types` cleared) when the text is not a list of strings.
bool ParseTypeList(absl::string_view text, std::vector<std::string>* types);

// Every tensor tuple anywhere in a values list (nested lists included), in
// order, whatever the types say. False (and `tensors` cleared) when the text
// does not parse.
bool CollectIoTensors(absl::string_view values_text,
                      std::vector<IoTensor>* tensors);

}  // namespace et

#endif  // MODEL_IO_SHAPES_H_
