// One-pass reader of tensor tuples (tensor_scan.h). It accepts exactly what
// io_shapes.cc's literal parser accepts for these forms, so the two agree on
// every text it reads; anything else is kUnsure.
#include "model/tensor_scan.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace et {
namespace {

constexpr int kMaxDepth = 64;  // the literal parser's limit

// An open list: how many items it has and whether they still make a tensor.
// No member initializers: the scanner's stack is not cleared per call, a
// frame is set when pushed (Push).
struct Frame {
  int items;
  bool tuple;       // items so far fit [int>=0 x 5, string]
  bool after_item;  // an item ended; ',' or ']' must follow
  uint64_t v[5];
  absl::string_view device;
};

class Scanner {
 public:
  explicit Scanner(absl::string_view text) : t_(text) {}

  TensorScan Run(std::vector<IoTensor>* out) {
    out->clear();
    out_ = out;
    Skip();
    if (p_ >= t_.size() || t_[p_] != '[') return Unsure();
    ++p_;
    Push();
    while (true) {
      Skip();
      if (p_ >= t_.size()) break;
      if (depth_ == 0) return Unsure();  // text after the document
      const char c = t_[p_];
      Frame& f = stack_[depth_ - 1];
      // A list may close when just opened, after an item, or after the
      // comma that followed one ("[1,]", as Python writes "(1,)").
      if (c == ']') {
        ++p_;
        Close();
        continue;
      }
      if (c == ',') {
        if (!f.after_item) return Unsure();
        f.after_item = false;
        ++p_;
        continue;
      }
      if (f.after_item || !Value(c)) return Unsure();
    }
    return depth_ == 0 ? TensorScan::kRead : Unsure();
  }

 private:
  TensorScan Unsure() {
    out_->clear();
    return TensorScan::kUnsure;
  }

  void Push() {
    Frame& f = stack_[depth_++];
    f.items = 0;
    f.tuple = true;
    f.after_item = false;
    f.device = {};
  }

  void Skip() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' ||
                              t_[p_] == '\t' || t_[p_] == '\r'))
      ++p_;
  }

  bool Consume(absl::string_view word) {
    if (t_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  // One value at p_ inside the open list.
  bool Value(char c) {
    if (depth_ > kMaxDepth) return false;  // the literal parser's depth
    if (c == '[') {
      ++p_;
      Push();
      return true;
    }
    if (c == '"' || c == '\'') return String(c);
    if ((c >= '0' && c <= '9') || c == '-') return Number();
    if (Consume("true") || Consume("True") || Consume("false") ||
        Consume("False") || Consume("null") || Consume("None") ||
        Consume("nan") || Consume("NaN")) {
      Item(false, 0, {});
      return true;
    }
    return false;  // '(', '{', '+5', inf, ...: the full parser decides
  }

  bool String(char quote) {
    const size_t start = ++p_;
    while (p_ < t_.size()) {
      const char c = t_[p_++];
      if (c == '\\') {
        if (p_ >= t_.size()) return false;
        ++p_;
      } else if (c == quote) {
        Item(false, 0, t_.substr(start, p_ - 1 - start), true);
        return true;
      }
    }
    return false;
  }

  // As the literal parser reads numbers: digits, and '.', 'e', 'E', '+' or
  // a later '-' make it a non-integer that strtod must take whole.
  bool Number() {
    const size_t start = p_;
    const bool negative = t_[p_] == '-';
    if (negative) ++p_;
    const size_t digits_start = p_;
    bool integral = true;
    p_ = NumberTokenEnd(t_, digits_start, &integral);
    if (p_ == digits_start) return false;  // "-inf", "-": the full parser
    if (integral) {
      if (p_ - digits_start > 18) return false;  // near int64's limit
      uint64_t value = 0;
      for (size_t k = digits_start; k < p_; ++k)
        value = value * 10 + static_cast<uint64_t>(t_[k] - '0');
      Item(!negative || value == 0, value, {});
      return true;
    }
    std::string token(t_.substr(start, p_ - start));
    char* end = nullptr;
    std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size()) return false;
    Item(false, 0, {});
    return true;
  }

  // An item of the innermost list ended: a count, and whether it keeps the
  // list a tensor tuple (items 0-4 integers >= 0, item 5 a string).
  void Item(bool non_negative_int, uint64_t value, absl::string_view text,
            bool is_string = false) {
    Frame& f = stack_[depth_ - 1];
    const int k = f.items++;
    if (k < 5) {
      if (non_negative_int) {
        f.v[k] = value;
      } else {
        f.tuple = false;
      }
    } else if (k == 5 && is_string) {
      f.device = text;
    } else {
      f.tuple = false;
    }
    f.after_item = true;
  }

  // The innermost list ends: a tensor if its items fit, and a non-scalar
  // item of its parent.
  void Close() {
    const Frame& f = stack_[--depth_];
    if (f.tuple && f.items == 6) {
      out_->push_back(
          {f.v[0], f.v[1], f.v[2], f.v[3], f.v[4], TensorDeviceOf(f.device)});
    }
    if (depth_ == 0) return;
    Frame& parent = stack_[depth_ - 1];
    parent.items++;
    parent.tuple = false;
    parent.after_item = true;
  }

  absl::string_view t_;
  size_t p_ = 0;
  Frame stack_[kMaxDepth + 2];
  int depth_ = 0;
  std::vector<IoTensor>* out_ = nullptr;
};

}  // namespace

size_t NumberTokenEnd(absl::string_view text, size_t digits_start,
                      bool* integral) {
  size_t p = digits_start;
  while (p < text.size()) {
    const char c = text[p];
    if (c >= '0' && c <= '9') {
      ++p;
    } else if (c == '.' || c == 'e' || c == 'E' || c == '+' ||
               (c == '-' && p > digits_start)) {
      *integral = false;
      ++p;
    } else {
      break;
    }
  }
  return p;
}

TensorScan ScanTensorTuples(absl::string_view text,
                            std::vector<IoTensor>* tensors) {
  return Scanner(text).Run(tensors);
}

}  // namespace et
