// Element-type names and sizes; see data_type.h.
#include "replay/data_type.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace et::replay {

int ElementBytes(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return 4;
    case DataType::kFloat16:
      return 2;
    case DataType::kBFloat16:
      return 2;
    case DataType::kFloat64:
      return 8;
    case DataType::kInt8:
      return 1;
    case DataType::kUInt8:
      return 1;
    case DataType::kInt32:
      return 4;
    case DataType::kInt64:
      return 8;
    case DataType::kBool:
      return 1;
  }
  return 4;
}

absl::string_view DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kFloat64:
      return "float64";
    case DataType::kInt8:
      return "int8";
    case DataType::kUInt8:
      return "uint8";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kBool:
      return "bool";
  }
  return "float32";
}

bool ParseDataType(absl::string_view text, DataType* type) {
  std::string t = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  absl::string_view v = t;
  // "Tensor(float)" -> "float"; "torch.float16" -> "float16"; "c10::half" ->
  // "half".
  if (absl::ConsumePrefix(&v, "tensor(")) absl::ConsumeSuffix(&v, ")");
  absl::ConsumePrefix(&v, "torch.");
  absl::ConsumePrefix(&v, "c10::");
  struct Spelling {
    const char* name;
    DataType type;
  };
  static constexpr Spelling kSpellings[] = {
      {"float32", DataType::kFloat32},   {"float", DataType::kFloat32},
      {"fp32", DataType::kFloat32},      {"float16", DataType::kFloat16},
      {"half", DataType::kFloat16},      {"fp16", DataType::kFloat16},
      {"bfloat16", DataType::kBFloat16}, {"bf16", DataType::kBFloat16},
      {"float64", DataType::kFloat64},   {"double", DataType::kFloat64},
      {"int8", DataType::kInt8},         {"signed char", DataType::kInt8},
      {"uint8", DataType::kUInt8},       {"unsigned char", DataType::kUInt8},
      {"int32", DataType::kInt32},       {"int", DataType::kInt32},
      {"int64", DataType::kInt64},       {"long", DataType::kInt64},
      {"long int", DataType::kInt64},    {"bool", DataType::kBool},
  };
  for (const Spelling& s : kSpellings) {
    if (v == s.name) {
      *type = s.type;
      return true;
    }
  }
  return false;
}

}  // namespace et::replay
