// Dtype spellings, names and sizes; see dtype.h.
#include "model/dtype.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace et {
namespace {

// string_view, not const char*: a lookup compares sizes first and never calls
// strlen (7% of a ParseIoInfo profile with const char*).
struct DtypeRow {
  Dtype id;
  absl::string_view name;
  int bytes;
};

// Indexed by Dtype (checked in DtypeInfoOf).
constexpr DtypeRow kDtypes[] = {
    {Dtype::kUnknown, "", 0},
    {Dtype::kFloat32, "float32", 4},
    {Dtype::kFloat64, "float64", 8},
    {Dtype::kFloat16, "float16", 2},
    {Dtype::kBFloat16, "bfloat16", 2},
    {Dtype::kInt64, "int64", 8},
    {Dtype::kInt32, "int32", 4},
    {Dtype::kInt16, "int16", 2},
    {Dtype::kInt8, "int8", 1},
    {Dtype::kUInt8, "uint8", 1},
    {Dtype::kUInt16, "uint16", 2},
    {Dtype::kUInt32, "uint32", 4},
    {Dtype::kUInt64, "uint64", 8},
    {Dtype::kBool, "bool", 1},
    {Dtype::kComplex32, "complex32", 4},
    {Dtype::kComplex64, "complex64", 8},
    {Dtype::kComplex128, "complex128", 16},
    {Dtype::kFloat8E4M3Fn, "float8_e4m3fn", 1},
    {Dtype::kFloat8E5M2, "float8_e5m2", 1},
    {Dtype::kFloat8E4M3Fnuz, "float8_e4m3fnuz", 1},
    {Dtype::kFloat8E5M2Fnuz, "float8_e5m2fnuz", 1},
    {Dtype::kQInt8, "qint8", 1},
    {Dtype::kQUInt8, "quint8", 1},
    {Dtype::kQInt32, "qint32", 4},
};
static_assert(sizeof(kDtypes) / sizeof(kDtypes[0]) ==
                  static_cast<size_t>(Dtype::kQInt32) + 1,
              "one row per Dtype, in enum order");

struct DtypeAlias {
  absl::string_view spelling;  // compared ignoring case
  Dtype id;
};

// Every spelling we have seen in ETs (inside "Tensor(...)"), in c10::ScalarType
// names (record_param_comms' dtype) and in torch dtype names, besides the
// canonical names of kDtypes, which match too. Case is ignored, so "Float" and
// "float", "Half" and "half" are one row.
constexpr DtypeAlias kAliases[] = {
    {"float", Dtype::kFloat32},
    {"fp32", Dtype::kFloat32},
    {"double", Dtype::kFloat64},
    {"fp64", Dtype::kFloat64},
    {"half", Dtype::kFloat16},
    {"fp16", Dtype::kFloat16},
    {"bf16", Dtype::kBFloat16},
    {"long", Dtype::kInt64},
    {"long int", Dtype::kInt64},
    {"long long", Dtype::kInt64},
    {"int64_t", Dtype::kInt64},
    {"int", Dtype::kInt32},
    {"short", Dtype::kInt16},
    {"signed char", Dtype::kInt8},
    {"char", Dtype::kInt8},  // c10::ScalarType::Char is int8
    {"unsigned char", Dtype::kUInt8},
    {"byte", Dtype::kUInt8},
    {"unsigned short", Dtype::kUInt16},
    {"unsigned int", Dtype::kUInt32},
    {"unsigned long", Dtype::kUInt64},
    {"complex<c10::Half>", Dtype::kComplex32},
    {"complexhalf", Dtype::kComplex32},
    {"complex<float>", Dtype::kComplex64},
    {"complexfloat", Dtype::kComplex64},
    {"complex<double>", Dtype::kComplex128},
    {"complexdouble", Dtype::kComplex128},
    {"fp8_e4m3", Dtype::kFloat8E4M3Fn},
    {"fp8_e5m2", Dtype::kFloat8E5M2},
};

bool ConsumePrefixIgnoreCase(absl::string_view* s, absl::string_view prefix) {
  if (!absl::StartsWithIgnoreCase(*s, prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

}  // namespace

DtypeInfo DtypeInfoOf(Dtype dtype) {
  const size_t i = static_cast<size_t>(dtype);
  if (dtype == Dtype::kUnknown || i >= sizeof(kDtypes) / sizeof(kDtypes[0]) ||
      kDtypes[i].id != dtype) {
    return DtypeInfo{};
  }
  return DtypeInfo{kDtypes[i].name, kDtypes[i].bytes, dtype};
}

absl::string_view DtypeName(Dtype dtype) { return DtypeInfoOf(dtype).name; }

int ElementBytes(Dtype dtype) { return DtypeInfoOf(dtype).elem_bytes; }

std::optional<DtypeInfo> DtypeFromName(absl::string_view name) {
  absl::string_view s = absl::StripAsciiWhitespace(name);
  if (ConsumePrefixIgnoreCase(&s, "Tensor(")) absl::ConsumeSuffix(&s, ")");
  ConsumePrefixIgnoreCase(&s, "torch.");
  ConsumePrefixIgnoreCase(&s, "c10::");
  ConsumePrefixIgnoreCase(&s, "at::");
  if (s.empty()) return std::nullopt;
  // Aliases first: they hold the common ET spellings ("float", "c10::Half").
  for (const DtypeAlias& alias : kAliases) {
    if (absl::EqualsIgnoreCase(s, alias.spelling)) return DtypeInfoOf(alias.id);
  }
  for (const DtypeRow& row : kDtypes) {
    if (absl::EqualsIgnoreCase(s, row.name)) return DtypeInfoOf(row.id);
  }
  return std::nullopt;
}

}  // namespace et
