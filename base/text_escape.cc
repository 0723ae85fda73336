// Escaping of input text for printing; see text_escape.h.
#include "base/text_escape.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace et {
namespace {

// Length of the well-formed UTF-8 sequence at text[i], or 0 when the bytes
// there are not one (RFC 3629, table 3-7 of the Unicode standard).
size_t Utf8SequenceLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string EscapeForPrint(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    const auto c = static_cast<uint8_t>(text[i]);
    if (n > 1) {
      // C1 controls (U+0080..U+009F) steer terminals as ESC does.
      const bool c1 =
          n == 2 && c == 0xC2 && static_cast<uint8_t>(text[i + 1]) < 0xA0;
      if (!c1) {
        out.append(text.data() + i, n);
        i += n;
        continue;
      }
    }
    if (n == 1 && c >= 0x20 && c != 0x7F) {
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out.append("\\n");
    } else if (c == '\t') {
      out.append("\\t");
    } else if (c == '\r') {
      out.append("\\r");
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", c);
    }
    ++i;
  }
  return out;
}

}  // namespace et
