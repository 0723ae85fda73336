// Python-literal parsing for IOInfo strings; see io_values.h.
#include "replay/io_values.h"

#include <cctype>
#include <cstdlib>

namespace et::replay {
namespace {

// A parsed Python literal: a list, an integer, a string, or anything else
// (floats, None, True/False) kept as kOther because replay never needs its
// value.
struct Literal {
  enum class Kind { kList, kInt, kString, kOther };
  Kind kind = Kind::kOther;
  int64_t int_value = 0;
  std::string text;
  std::vector<Literal> items;
};

// Recursive descent over a literal; depth is the nesting of lists (a handful),
// not the size of the graph, and is capped so hostile input cannot overflow the
// stack.
class LiteralParser {
 public:
  explicit LiteralParser(absl::string_view text) : text_(text) {}

  bool ParseDocument(Literal* out) {
    if (!Parse(out, 0)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  static constexpr int kMaxDepth = 32;

  void SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  bool Parse(Literal* out, int depth) {
    if (depth > kMaxDepth) return false;
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '[' || c == '(')
      return ParseList(out, depth, c == '[' ? ']' : ')');
    if (c == '\'' || c == '"') return ParseString(out, c);
    return ParseAtom(out);
  }

  bool ParseList(Literal* out, int depth, char close) {
    out->kind = Literal::Kind::kList;
    ++pos_;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == close) {
      ++pos_;
      return true;
    }
    while (true) {
      out->items.emplace_back();
      if (!Parse(&out->items.back(), depth + 1)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return false;
      if (text_[pos_] == ',') {
        ++pos_;
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == close) {  // trailing comma
          ++pos_;
          return true;
        }
        continue;
      }
      if (text_[pos_] != close) return false;
      ++pos_;
      return true;
    }
  }

  bool ParseString(Literal* out, char quote) {
    out->kind = Literal::Kind::kString;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out->text.push_back(text_[pos_++]);
    }
    if (pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }

  bool ParseAtom(Literal* out) {
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != ']' &&
           text_[pos_] != ')') {
      ++pos_;
    }
    std::string atom(text_.substr(start, pos_ - start));
    while (!atom.empty() &&
           std::isspace(static_cast<unsigned char>(atom.back()))) {
      atom.pop_back();
    }
    if (atom.empty()) return false;
    char* end = nullptr;
    long long v = std::strtoll(atom.c_str(), &end, 10);
    if (end != nullptr && *end == '\0') {
      out->kind = Literal::Kind::kInt;
      out->int_value = v;
    } else {
      out->kind = Literal::Kind::kOther;
      out->text = atom;
    }
    return true;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

bool IsShape(const Literal& lit) {
  if (lit.kind != Literal::Kind::kList) return false;
  for (const Literal& item : lit.items) {
    if (item.kind != Literal::Kind::kInt) return false;
  }
  return true;
}

// The shape of an argument: itself if a list of ints, else its first nested
// shape.
Shape ShapeOf(const Literal& arg) {
  const Literal* cur = &arg;
  while (cur->kind == Literal::Kind::kList && !IsShape(*cur)) {
    if (cur->items.empty()) return {};
    cur = &cur->items.front();
  }
  if (!IsShape(*cur)) return {};
  Shape shape;
  shape.reserve(cur->items.size());
  for (const Literal& item : cur->items) shape.push_back(item.int_value);
  return shape;
}

bool IsTensorTuple(const Literal& lit) {
  if (lit.kind != Literal::Kind::kList || lit.items.size() != 6) return false;
  for (int i = 0; i < 5; ++i) {
    if (lit.items[i].kind != Literal::Kind::kInt || lit.items[i].int_value < 0)
      return false;
  }
  return lit.items[5].kind == Literal::Kind::kString;
}

}  // namespace

bool ParseShapes(absl::string_view text, std::vector<Shape>* shapes) {
  shapes->clear();
  Literal doc;
  if (!LiteralParser(text).ParseDocument(&doc) ||
      doc.kind != Literal::Kind::kList) {
    return false;
  }
  shapes->reserve(doc.items.size());
  for (const Literal& arg : doc.items) shapes->push_back(ShapeOf(arg));
  return true;
}

bool ParseTypes(absl::string_view text, std::vector<std::string>* types) {
  types->clear();
  Literal doc;
  if (!LiteralParser(text).ParseDocument(&doc) ||
      doc.kind != Literal::Kind::kList) {
    return false;
  }
  for (const Literal& item : doc.items) types->push_back(item.text);
  return true;
}

bool CollectTensorRefs(absl::string_view text,
                       std::vector<TensorRef>* tensors) {
  tensors->clear();
  Literal doc;
  if (!LiteralParser(text).ParseDocument(&doc)) return false;
  // Iterative walk with an explicit stack (values can nest lists of lists of
  // tensors).
  std::vector<const Literal*> stack = {&doc};
  while (!stack.empty()) {
    const Literal* cur = stack.back();
    stack.pop_back();
    if (IsTensorTuple(*cur)) {
      TensorRef t;
      t.tensor_id = cur->items[0].int_value;
      t.storage_id = cur->items[1].int_value;
      t.offset_elems = cur->items[2].int_value;
      t.num_elems = cur->items[3].int_value;
      t.elem_bytes = cur->items[4].int_value;
      tensors->push_back(t);
      continue;
    }
    if (cur->kind != Literal::Kind::kList) continue;
    for (auto it = cur->items.rbegin(); it != cur->items.rend(); ++it)
      stack.push_back(&*it);
  }
  return true;
}

}  // namespace et::replay
