// Parsing of IOInfo JSON texts into IoEntry values; see io_shapes.h.
//
// The texts are small (tens of bytes) and there is one per node and direction,
// so the parser below is a minimal allocation-light recursive-descent reader of
// JSON arrays, numbers, strings, booleans and null (objects are skipped). A
// general JSON library would build a DOM per call; at 300k nodes x 3 strings x
// 2 directions that dominated a profile.
#include "proto/io_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace et {
namespace {

struct DtypeAlias {
  const char* spelling;
  const char* name;
  int bytes;
};

// Every spelling we have seen in ETs (inside "Tensor(...)"), in c10::ScalarType
// names (record_param_comms' dtype) and in torch dtype names. "c10::" and
// "torch." prefixes are stripped before the lookup.
constexpr DtypeAlias kDtypeAliases[] = {
    {"float", "float32", 4},
    {"Float", "float32", 4},
    {"float32", "float32", 4},
    {"fp32", "float32", 4},
    {"double", "float64", 8},
    {"Double", "float64", 8},
    {"float64", "float64", 8},
    {"fp64", "float64", 8},
    {"Half", "float16", 2},
    {"half", "float16", 2},
    {"float16", "float16", 2},
    {"fp16", "float16", 2},
    {"BFloat16", "bfloat16", 2},
    {"bfloat16", "bfloat16", 2},
    {"bf16", "bfloat16", 2},
    {"long", "int64", 8},
    {"long int", "int64", 8},
    {"long long", "int64", 8},
    {"int64_t", "int64", 8},
    {"Long", "int64", 8},
    {"int64", "int64", 8},
    {"int", "int32", 4},
    {"Int", "int32", 4},
    {"int32", "int32", 4},
    {"short", "int16", 2},
    {"Short", "int16", 2},
    {"int16", "int16", 2},
    {"signed char", "int8", 1},
    {"Char", "int8", 1},
    {"int8", "int8", 1},
    {"unsigned char", "uint8", 1},
    {"Byte", "uint8", 1},
    {"uint8", "uint8", 1},
    {"unsigned short", "uint16", 2},
    {"UInt16", "uint16", 2},
    {"uint16", "uint16", 2},
    {"unsigned int", "uint32", 4},
    {"UInt32", "uint32", 4},
    {"uint32", "uint32", 4},
    {"unsigned long", "uint64", 8},
    {"UInt64", "uint64", 8},
    {"uint64", "uint64", 8},
    {"bool", "bool", 1},
    {"Bool", "bool", 1},
    {"complex<c10::Half>", "complex32", 4},
    {"ComplexHalf", "complex32", 4},
    {"complex32", "complex32", 4},
    {"complex<float>", "complex64", 8},
    {"ComplexFloat", "complex64", 8},
    {"complex64", "complex64", 8},
    {"complex<double>", "complex128", 16},
    {"ComplexDouble", "complex128", 16},
    {"complex128", "complex128", 16},
    {"Float8_e4m3fn", "float8_e4m3fn", 1},
    {"float8_e4m3fn", "float8_e4m3fn", 1},
    {"fp8_e4m3", "float8_e4m3fn", 1},
    {"Float8_e5m2", "float8_e5m2", 1},
    {"float8_e5m2", "float8_e5m2", 1},
    {"fp8_e5m2", "float8_e5m2", 1},
    {"Float8_e4m3fnuz", "float8_e4m3fnuz", 1},
    {"float8_e4m3fnuz", "float8_e4m3fnuz", 1},
    {"Float8_e5m2fnuz", "float8_e5m2fnuz", 1},
    {"float8_e5m2fnuz", "float8_e5m2fnuz", 1},
    {"qint8", "qint8", 1},
    {"QInt8", "qint8", 1},
    {"quint8", "quint8", 1},
    {"QUInt8", "quint8", 1},
    {"qint32", "qint32", 4},
    {"QInt32", "qint32", 4},
};

// ---- A minimal JSON reader
// -------------------------------------------------------------

struct JsonLite {
  enum class Type : uint8_t { kNumber, kString, kBool, kNull, kArray, kObject };
  Type type = Type::kNull;
  double number = 0;
  bool integral = false;  // number had no fraction/exponent and fits int64
  int64_t integer = 0;
  std::vector<JsonLite> items;  // kArray
};

class JsonLiteParser {
 public:
  explicit JsonLiteParser(absl::string_view text) : text_(text) {}

  // Parses exactly one value followed by optional whitespace. False on any
  // error.
  bool ParseDocument(JsonLite* out) {
    if (!ParseValue(out, 0)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  static constexpr int kMaxDepth = 64;

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Consume(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  bool ParseValue(JsonLite* out, int depth) {
    if (depth > kMaxDepth) return false;
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '[') return ParseArray(out, depth);
    if (c == '{') return SkipObject(out, depth);
    if (c == '"') {
      out->type = JsonLite::Type::kString;
      return SkipString();
    }
    if (Consume("true")) {
      out->type = JsonLite::Type::kBool;
      out->number = 1;
      return true;
    }
    if (Consume("false")) {
      out->type = JsonLite::Type::kBool;
      out->number = 0;
      return true;
    }
    if (Consume("null")) {
      out->type = JsonLite::Type::kNull;
      return true;
    }
    return ParseNumber(out);
  }

  bool ParseArray(JsonLite* out, int depth) {
    out->type = JsonLite::Type::kArray;
    ++pos_;  // '['
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      out->items.emplace_back();
      if (!ParseValue(&out->items.back(), depth + 1)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return false;
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return false;
    }
  }

  // Objects do not occur in shapes or types; in values we only need to step
  // over them.
  bool SkipObject(JsonLite* out, int depth) {
    out->type = JsonLite::Type::kObject;
    ++pos_;  // '{'
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"' || !SkipString())
        return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return false;
      ++pos_;
      JsonLite ignored;
      if (!ParseValue(&ignored, depth + 1)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return false;
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return false;
    }
  }

  bool SkipString() {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) return false;
        ++pos_;
      } else if (c == '"') {
        return true;
      }
    }
    return false;
  }

  bool ParseNumber(JsonLite* out) {
    size_t start = pos_;
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    size_t digits_start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c >= '0' && c <= '9') {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' ||
                 (c == '-' && pos_ > digits_start)) {
        integral = false;
        ++pos_;
      } else {
        break;
      }
    }
    if (pos_ == digits_start) return false;
    // strtod needs a terminated buffer; numbers are short, so copy.
    std::string token(text_.substr(start, pos_ - start));
    char* end = nullptr;
    double value = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size()) return false;
    out->type = JsonLite::Type::kNumber;
    out->number = value;
    if (integral) {
      long long as_int = std::strtoll(token.c_str(), &end, 10);
      out->integral =
          end == token.c_str() + token.size() &&
          std::fabs(value) < 9.2e18;  // strtoll saturates past int64
      out->integer = as_int;
    }
    return true;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// Reads a JSON array of strings with escapes resolved (types lists have no
// escapes in practice, but a quote or backslash in an Object type name must not
// derail us).
bool ParseStringArray(absl::string_view text, std::vector<std::string>* out) {
  size_t pos = 0;
  auto skip_space = [&] {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n' ||
                                 text[pos] == '\t' || text[pos] == '\r')) {
      ++pos;
    }
  };
  skip_space();
  if (pos >= text.size() || text[pos] != '[') return false;
  ++pos;
  skip_space();
  if (pos < text.size() && text[pos] == ']') {
    ++pos;
    skip_space();
    return pos == text.size();
  }
  while (true) {
    skip_space();
    if (pos >= text.size() || text[pos] != '"') return false;
    ++pos;
    std::string s;
    bool closed = false;
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"') {
        closed = true;
        break;
      }
      if (c == '\\') {
        if (pos >= text.size()) return false;
        char e = text[pos++];
        s.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
      } else {
        s.push_back(c);
      }
    }
    if (!closed) return false;
    out->push_back(std::move(s));
    skip_space();
    if (pos >= text.size()) return false;
    if (text[pos] == ',') {
      ++pos;
      continue;
    }
    if (text[pos] != ']') return false;
    ++pos;
    skip_space();
    return pos == text.size();
  }
}

// ---- Interpreting entries
// --------------------------------------------------------------

bool IsDimsArray(const JsonLite& v) {
  if (v.type != JsonLite::Type::kArray) return false;
  for (const JsonLite& d : v.items) {
    if (d.type != JsonLite::Type::kNumber || !d.integral) return false;
  }
  return true;
}

std::vector<int64_t> DimsOf(const JsonLite& v) {
  std::vector<int64_t> dims;
  dims.reserve(v.items.size());
  for (const JsonLite& d : v.items) dims.push_back(d.integer);
  return dims;
}

// Collects every leaf dims array of a (possibly nested) tensor-list shape.
// False when a leaf is not an integer array.
bool CollectListDims(const JsonLite& v, int depth,
                     std::vector<std::vector<int64_t>>* out) {
  if (v.type != JsonLite::Type::kArray || depth > 8) return false;
  bool all_arrays = !v.items.empty();
  for (const JsonLite& item : v.items) {
    if (item.type != JsonLite::Type::kArray) all_arrays = false;
  }
  if (!all_arrays) {
    if (!IsDimsArray(v)) return false;
    out->push_back(DimsOf(v));
    return true;
  }
  for (const JsonLite& item : v.items) {
    // [[2,3],[4]] : items are leaves; [[[2,3],[4]]] : nested list.
    if (IsDimsArray(item) &&
        (item.items.empty() || item.items[0].type == JsonLite::Type::kNumber)) {
      out->push_back(DimsOf(item));
    } else if (!CollectListDims(item, depth + 1, out)) {
      return false;
    }
  }
  return true;
}

// Classifies a type string and fills kind and dtype.
void ClassifyType(absl::string_view type, IoEntry* entry) {
  if (absl::StartsWith(type, "Tensor(")) {
    absl::string_view inner = type.substr(7);
    absl::ConsumeSuffix(&inner, ")");
    if (absl::StartsWith(inner, "nullptr")) {
      entry->kind = IoKind::kNullTensor;
      return;
    }
    entry->kind = IoKind::kTensor;
    entry->dtype = DtypeFromName(inner).value_or(DtypeInfo{});
    return;
  }
  if (type == "Tensor") {
    entry->kind = IoKind::kTensor;
    return;
  }
  if (absl::StartsWith(type, "GenericList[") ||
      absl::StartsWith(type, "TensorList")) {
    size_t tensor_pos = type.find("Tensor(");
    if (tensor_pos == absl::string_view::npos) {
      entry->kind = absl::StartsWith(type, "TensorList") ? IoKind::kTensorList
                                                         : IoKind::kList;
      return;
    }
    entry->kind = IoKind::kTensorList;
    absl::string_view inner = type.substr(tensor_pos + 7);
    size_t close = inner.find(')');
    if (close != absl::string_view::npos) inner = inner.substr(0, close);
    entry->dtype = DtypeFromName(inner).value_or(DtypeInfo{});
    return;
  }
  if (type == "Int" || type == "SymInt" || type == "Double" || type == "Bool" ||
      type == "Float" || type == "Long" || type == "Scalar" ||
      type == "ComplexDouble") {
    entry->kind = IoKind::kScalar;
    return;
  }
  entry->kind = IoKind::kOther;
}

// Applies a shape to a classified entry (or infers the kind when no type was
// given).
bool ApplyShape(const JsonLite& shape, bool has_type, IoEntry* entry) {
  if (!has_type) {
    if (IsDimsArray(shape) && !shape.items.empty()) {
      entry->kind = IoKind::kTensor;
    } else if (shape.type == JsonLite::Type::kArray && !shape.items.empty()) {
      entry->kind = IoKind::kTensorList;
    } else {
      entry->kind = IoKind::kOther;
      return true;
    }
  }
  switch (entry->kind) {
    case IoKind::kTensor:
      if (!IsDimsArray(shape)) return false;
      entry->dims = DimsOf(shape);
      return true;
    case IoKind::kTensorList:
      return shape.type == JsonLite::Type::kArray &&
             (shape.items.empty() ||
              CollectListDims(shape, 0, &entry->list_dims));
    default:
      return true;  // scalars and others carry [] or [[],[]]: nothing to keep
  }
}

void ApplyValue(const JsonLite& value, IoEntry* entry, int* bad) {
  auto is_scalar = [](const JsonLite& v) {
    return v.type == JsonLite::Type::kNumber || v.type == JsonLite::Type::kBool;
  };
  if (entry->kind == IoKind::kScalar) {
    if (is_scalar(value)) {
      entry->scalar = value.number;
    } else if (value.type != JsonLite::Type::kNull &&
               value.type != JsonLite::Type::kString) {
      ++*bad;
    }
  } else if (entry->kind == IoKind::kList &&
             value.type == JsonLite::Type::kArray) {
    for (const JsonLite& item : value.items) {
      if (!is_scalar(item)) {
        entry->int_list.clear();
        return;  // a list of strings or of lists: not an int list, not an error
      }
      entry->int_list.push_back(static_cast<int64_t>(item.number));
    }
  }
}

void NoteError(IoParseResult* result, std::string message) {
  ++result->bad_values;
  if (result->first_error.empty()) result->first_error = std::move(message);
}

}  // namespace

std::optional<DtypeInfo> DtypeFromName(absl::string_view name) {
  absl::string_view s = name;
  if (absl::ConsumePrefix(&s, "Tensor(")) absl::ConsumeSuffix(&s, ")");
  absl::ConsumePrefix(&s, "torch.");
  absl::ConsumePrefix(&s, "c10::");
  absl::ConsumePrefix(&s, "at::");
  for (const DtypeAlias& alias : kDtypeAliases) {
    if (s == alias.spelling) return DtypeInfo{alias.name, alias.bytes};
  }
  return std::nullopt;
}

int64_t NumElementsOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    if (n > std::numeric_limits<int64_t>::max() / d)
      return std::numeric_limits<int64_t>::max();
    n *= d;
  }
  return n;
}

int64_t IoEntry::NumElements() const {
  if (kind == IoKind::kTensor) return NumElementsOf(dims);
  if (kind != IoKind::kTensorList) return 0;
  int64_t n = 0;
  for (const auto& d : list_dims) n += NumElementsOf(d);
  return n;
}

int64_t IoEntry::Bytes() const { return NumElements() * dtype.elem_bytes; }

int64_t IoParseResult::TotalBytes() const {
  int64_t total = 0;
  for (const IoEntry& e : entries) total += e.Bytes();
  return total;
}

IoParseResult ParseIoInfo(absl::string_view shapes_json,
                          absl::string_view types_json,
                          absl::string_view values_json) {
  IoParseResult result;
  JsonLite shapes, values;
  std::vector<std::string> types;
  bool have_shapes = false, have_types = false, have_values = false;
  if (!shapes_json.empty()) {
    have_shapes = JsonLiteParser(shapes_json).ParseDocument(&shapes) &&
                  shapes.type == JsonLite::Type::kArray;
    if (!have_shapes) NoteError(&result, "shapes are not a JSON list");
  }
  if (!types_json.empty()) {
    have_types = ParseStringArray(types_json, &types);
    if (!have_types) NoteError(&result, "types are not a JSON list of strings");
  }
  if (!values_json.empty()) {
    have_values = JsonLiteParser(values_json).ParseDocument(&values) &&
                  values.type == JsonLite::Type::kArray;
    if (!have_values) NoteError(&result, "values are not a JSON list");
  }
  size_t num_shapes = have_shapes ? shapes.items.size() : 0;
  size_t num_types = have_types ? types.size() : 0;
  size_t n = std::max(num_shapes, num_types);
  if (have_shapes && have_types && num_shapes != num_types) {
    NoteError(&result,
              absl::StrCat(num_shapes, " shapes but ", num_types, " types"));
  }
  result.entries.resize(n);
  for (size_t i = 0; i < n; ++i) {
    IoEntry& entry = result.entries[i];
    bool has_type = i < num_types;
    if (has_type) ClassifyType(types[i], &entry);
    if (i < num_shapes && !ApplyShape(shapes.items[i], has_type, &entry)) {
      entry = IoEntry{};  // kUnknown
      NoteError(&result,
                absl::StrCat("input ", i, ": shape does not match type ",
                             has_type ? types[i] : "(none)"));
      continue;
    }
    if (have_values && i < values.items.size()) {
      int bad = 0;
      ApplyValue(values.items[i], &entry, &bad);
      if (bad)
        NoteError(&result,
                  absl::StrCat("input ", i, ": value is not a scalar"));
    }
  }
  return result;
}

}  // namespace et
