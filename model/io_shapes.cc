// Parsing of IOInfo texts (JSON or Python repr) into IoEntry values; see
// io_shapes.h.
//
// The texts are small (tens of bytes) and there is one per node and direction,
// so the parser below is a minimal allocation-light recursive-descent reader of
// lists, numbers, strings, booleans and null in either spelling (objects are
// skipped, strings kept as views into the text). A general JSON library would
// build a DOM per call and reject Python's quoting; at 300k nodes x 3 strings x
// 2 directions the DOM alone dominated a profile.
#include "model/io_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/checked_math.h"
#include "model/tensor_scan.h"

namespace et {
namespace {

// ---- A minimal reader of JSON and Python literals ----

struct Literal {
  enum class Type : uint8_t { kNumber, kString, kBool, kNull, kArray, kObject };
  Type type = Type::kNull;
  double number = 0;
  bool integral = false;  // number had no fraction/exponent and fits int64
  int64_t integer = 0;
  absl::string_view raw;  // kString: between the quotes, escapes unresolved
  std::vector<Literal> items;  // kArray (a JSON/Python list or a Python tuple)
};

// A string's text with escapes resolved (types lists have no escapes in
// practice, but a quote or backslash in an Object type name must not derail
// us).
std::string Unescape(absl::string_view raw) {
  std::string s;
  s.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\\' && i + 1 < raw.size()) {
      char e = raw[++i];
      c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
    }
    s.push_back(c);
  }
  return s;
}

class LiteralParser {
 public:
  explicit LiteralParser(absl::string_view text) : text_(text) {}

  // Parses exactly one value followed by optional whitespace. False on any
  // error.
  bool ParseDocument(Literal* out) {
    if (!ParseValue(out, 0)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }

  // Parses a document that is a list of strings, appending each with escapes
  // resolved. Types lists are read this way, without a Literal per item:
  // building one made ParseIoInfo 10-15% slower over tfm_small's 21,634
  // IOInfos.
  bool ParseStringList(std::vector<std::string>* out) {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '[') return false;
    ++pos_;
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size()) return false;
      const char c = text_[pos_];
      if (c == ']') break;
      Literal item;
      if ((c != '"' && c != '\'') || !ParseString(&item, c)) return false;
      out->push_back(Unescape(item.raw));
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
      } else if (pos_ >= text_.size() || text_[pos_] != ']') {
        return false;
      }
    }
    ++pos_;  // ']'
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

  bool ParseValue(Literal* out, int depth) {
    if (depth > kMaxDepth) return false;
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '[') return ParseSequence(out, depth, ']');
    if (c == '(') return ParseSequence(out, depth, ')');  // Python tuple
    if (c == '{') return SkipObject(out, depth);
    if (c == '"' || c == '\'') return ParseString(out, c);
    if ((c >= '0' && c <= '9') || c == '-') return ParseNumber(out);
    if (Consume("true") || Consume("True")) {
      out->type = Literal::Type::kBool;
      out->number = 1;
      return true;
    }
    if (Consume("false") || Consume("False")) {
      out->type = Literal::Type::kBool;
      out->number = 0;
      return true;
    }
    if (Consume("null") || Consume("None")) {
      out->type = Literal::Type::kNull;
      return true;
    }
    if (Consume("nan") || Consume("NaN")) {
      out->type = Literal::Type::kNumber;
      out->number = std::numeric_limits<double>::quiet_NaN();
      return true;
    }
    return ParseNumber(out);
  }

  // A list "[...]" or tuple "(...)"; a trailing comma is allowed ("(1,)").
  bool ParseSequence(Literal* out, int depth, char close) {
    out->type = Literal::Type::kArray;
    ++pos_;  // '[' or '('
    while (true) {
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == close) {
        ++pos_;
        return true;
      }
      out->items.emplace_back();
      if (!ParseValue(&out->items.back(), depth + 1)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return false;
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == close) {
        ++pos_;
        return true;
      }
      return false;
    }
  }

  // Objects do not occur in shapes or types; in values we only need to step
  // over them (Python dicts may have non-string keys: any value is accepted).
  bool SkipObject(Literal* out, int depth) {
    out->type = Literal::Type::kObject;
    ++pos_;  // '{'
    while (true) {
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      Literal ignored;
      if (!ParseValue(&ignored, depth + 1)) return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return false;
      ++pos_;
      ignored = Literal{};
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

  // "..." (JSON, Python) or '...' (Python): a backslash escapes the next
  // character.
  bool ParseString(Literal* out, char quote) {
    out->type = Literal::Type::kString;
    const size_t start = ++pos_;  // after the opening quote
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) return false;
        ++pos_;
      } else if (c == quote) {
        out->raw = text_.substr(start, pos_ - 1 - start);
        return true;
      }
    }
    return false;
  }

  bool ParseNumber(Literal* out) {
    size_t start = pos_;
    bool integral = true;
    const bool negative = pos_ < text_.size() && text_[pos_] == '-';
    if (negative) ++pos_;
    if (Consume("inf") || Consume("Infinity")) {  // Python / Python's json
      out->type = Literal::Type::kNumber;
      out->number = negative ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::infinity();
      return true;
    }
    const size_t digits_start = pos_;
    pos_ = NumberTokenEnd(text_, digits_start, &integral);
    if (pos_ == digits_start) return false;
    // strtod needs a terminated buffer; numbers are short, so copy.
    std::string token(text_.substr(start, pos_ - start));
    char* end = nullptr;
    double value = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size()) return false;
    out->type = Literal::Type::kNumber;
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

// Reads a list of strings; false when the text is anything else.
bool ParseStringArray(absl::string_view text, std::vector<std::string>* out) {
  return LiteralParser(text).ParseStringList(out);
}

// [tensor_id, storage_id, offset, num_elem, elem_bytes, device]: five
// non-negative integers and a string.
bool IsTensorTuple(const Literal& v) {
  if (v.type != Literal::Type::kArray || v.items.size() != 6) return false;
  for (int i = 0; i < 5; ++i) {
    const Literal& x = v.items[i];
    if (x.type != Literal::Type::kNumber || !x.integral || x.integer < 0)
      return false;
  }
  return v.items[5].type == Literal::Type::kString;
}

// Appends every tensor tuple in `root` (itself, or nested in lists at any
// depth), in order. Iterative: the parser caps depth, but a walk needs no
// recursion at all.
void CollectTensors(const Literal& root, std::vector<IoTensor>* out) {
  std::vector<const Literal*> stack = {&root};
  while (!stack.empty()) {
    const Literal* cur = stack.back();
    stack.pop_back();
    if (IsTensorTuple(*cur)) {
      const auto& t = cur->items;
      out->push_back({static_cast<uint64_t>(t[0].integer),
                      static_cast<uint64_t>(t[1].integer),
                      static_cast<uint64_t>(t[2].integer),
                      static_cast<uint64_t>(t[3].integer),
                      static_cast<uint64_t>(t[4].integer),
                      TensorDeviceOf(t[5].raw)});
      continue;
    }
    if (cur->type != Literal::Type::kArray) continue;
    for (auto it = cur->items.rbegin(); it != cur->items.rend(); ++it)
      stack.push_back(&*it);
  }
}

// ---- Interpreting entries ----

bool IsDimsArray(const Literal& v) {
  if (v.type != Literal::Type::kArray) return false;
  for (const Literal& d : v.items) {
    if (d.type != Literal::Type::kNumber || !d.integral) return false;
  }
  return true;
}

std::vector<int64_t> DimsOf(const Literal& v) {
  std::vector<int64_t> dims;
  dims.reserve(v.items.size());
  for (const Literal& d : v.items) dims.push_back(d.integer);
  return dims;
}

// Collects every leaf dims array of a (possibly nested) tensor-list shape.
// False when a leaf is not an integer array.
bool CollectListDims(const Literal& v, int depth,
                     std::vector<std::vector<int64_t>>* out) {
  if (v.type != Literal::Type::kArray || depth > 8) return false;
  bool all_arrays = !v.items.empty();
  for (const Literal& item : v.items) {
    if (item.type != Literal::Type::kArray) all_arrays = false;
  }
  if (!all_arrays) {
    if (!IsDimsArray(v)) return false;
    out->push_back(DimsOf(v));
    return true;
  }
  for (const Literal& item : v.items) {
    // [[2,3],[4]] : items are leaves; [[[2,3],[4]]] : nested list.
    if (IsDimsArray(item) &&
        (item.items.empty() || item.items[0].type == Literal::Type::kNumber)) {
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
bool ApplyShape(const Literal& shape, bool has_type, IoEntry* entry) {
  if (!has_type) {
    if (IsDimsArray(shape) && !shape.items.empty()) {
      entry->kind = IoKind::kTensor;
    } else if (shape.type == Literal::Type::kArray && !shape.items.empty()) {
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
      return shape.type == Literal::Type::kArray &&
             (shape.items.empty() ||
              CollectListDims(shape, 0, &entry->list_dims));
    default:
      return true;  // scalars and others carry [] or [[],[]]: nothing to keep
  }
}

void ApplyValue(const Literal& value, IoEntry* entry, int* bad) {
  auto is_scalar = [](const Literal& v) {
    return v.type == Literal::Type::kNumber || v.type == Literal::Type::kBool;
  };
  if (entry->kind == IoKind::kScalar) {
    if (is_scalar(value)) {
      entry->scalar = value.number;
    } else if (value.type != Literal::Type::kNull &&
               value.type != Literal::Type::kString) {
      ++*bad;
    }
  } else if (entry->kind == IoKind::kList &&
             value.type == Literal::Type::kArray) {
    for (const Literal& item : value.items) {
      if (!is_scalar(item) || !std::isfinite(item.number)) {
        entry->int_list.clear();
        return;  // a list of strings or of lists: not an int list, not an error
      }
      entry->int_list.push_back(static_cast<int64_t>(item.number));
    }
  } else if (entry->kind == IoKind::kTensor ||
             entry->kind == IoKind::kTensorList) {
    CollectTensors(value, &entry->tensors);
  }
}

void NoteError(IoParseResult* result, std::string message) {
  ++result->bad_values;
  if (result->first_error.empty()) result->first_error = std::move(message);
}

}  // namespace

int64_t IoEntry::NumElements() const {
  if (kind == IoKind::kTensor) return DimProduct(dims);
  if (kind != IoKind::kTensorList) return 0;
  int64_t n = 0;
  for (const auto& d : list_dims) n = SaturatingAdd(n, DimProduct(d));
  return n;
}

// Saturating, like DimProduct: a hostile shape such as [2^62, 8] must not
// wrap to a small or negative byte count; INT64_MAX is recognisably absurd.
int64_t IoEntry::Bytes() const {
  return SaturatingMul(NumElements(), dtype.elem_bytes);
}

int64_t IoParseResult::TotalBytes() const {
  int64_t total = 0;
  for (const IoEntry& e : entries) total = SaturatingAdd(total, e.Bytes());
  return total;
}

IoParseResult ParseIoInfo(absl::string_view shapes_json,
                          absl::string_view types_json,
                          absl::string_view values_json) {
  IoParseResult result;
  Literal shapes, values;
  std::vector<std::string> types;
  bool have_shapes = false, have_types = false, have_values = false;
  if (!shapes_json.empty()) {
    have_shapes = LiteralParser(shapes_json).ParseDocument(&shapes) &&
                  shapes.type == Literal::Type::kArray;
    if (!have_shapes) NoteError(&result, "shapes are not a list");
  }
  if (!types_json.empty()) {
    have_types = ParseStringArray(types_json, &types);
    if (!have_types) NoteError(&result, "types are not a list of strings");
  }
  if (!values_json.empty()) {
    have_values = LiteralParser(values_json).ParseDocument(&values) &&
                  values.type == Literal::Type::kArray;
    if (!have_values) NoteError(&result, "values are not a list");
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

bool ParseTypeList(absl::string_view text, std::vector<std::string>* types) {
  types->clear();
  if (ParseStringArray(text, types)) return true;
  types->clear();
  return false;
}

int32_t TensorDeviceOf(absl::string_view text) {
  if (text == "cpu") return kHostDevice;
  if (!absl::ConsumePrefix(&text, "cuda")) return kOtherDevice;
  if (text.empty()) return 0;
  int32_t index = 0;
  if (!absl::ConsumePrefix(&text, ":") || !absl::SimpleAtoi(text, &index) ||
      index < 0 || index > 65535)
    return kOtherDevice;
  return index;
}

bool CollectIoTensors(absl::string_view values_text,
                      std::vector<IoTensor>* tensors) {
  tensors->clear();
  if (values_text.empty()) return true;
  // The one-pass reader takes the common texts without building literals
  // (the memory model reads every node's); the parser takes the rest.
  if (ScanTensorTuples(values_text, tensors) == TensorScan::kRead) return true;
  Literal doc;
  if (!LiteralParser(values_text).ParseDocument(&doc)) return false;
  CollectTensors(doc, tensors);
  return true;
}

}  // namespace et
