// Escaping and human-readable numbers for et-viz's writers; see text_escape.h.
#include "visualizer/text_escape.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace et::viz {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid.
size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t min_code = 0;
  uint32_t code = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2, min_code = 0x80, code = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, min_code = 0x800, code = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, min_code = 0x10000, code = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min_code || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF)) {
    return 0;  // overlong, out of range or a surrogate
  }
  return len;
}

}  // namespace

std::string ValidUtf8(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out.push_back('?');
      ++i;
    } else {
      out.append(s.data() + i, len);
      i += len;
    }
  }
  return out;
}

std::string JsonQuote(absl::string_view s) {
  return nlohmann::json(ValidUtf8(s)).dump();
}

std::string XmlEscape(absl::string_view s) {
  const std::string text = ValidUtf8(s);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') out.push_back(ch);
    }
  }
  return out;
}

std::string DotEscape(absl::string_view s) {
  const std::string text = ValidUtf8(s);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20) out.push_back(ch);
    }
  }
  return out;
}

std::string HumanDuration(int64_t ns) {
  const double abs_ns = std::fabs(static_cast<double>(ns));
  if (abs_ns < 1e3) return absl::StrFormat("%d ns", ns);
  if (abs_ns < 1e6) return absl::StrFormat("%.3g us", ns / 1e3);
  if (abs_ns < 1e9) return absl::StrFormat("%.3g ms", ns / 1e6);
  return absl::StrFormat("%.3g s", ns / 1e9);
}

std::string HumanBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (std::llabs(bytes) < 1024) return absl::StrFormat("%d B", bytes);
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (std::fabs(value) >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.3g %s", value, kUnits[unit]);
}

std::string Abbreviate(absl::string_view s, size_t max_chars) {
  if (s.size() <= max_chars) return std::string(s);
  size_t cut = max_chars > 3 ? max_chars - 3 : 0;
  // Back up over UTF-8 continuation bytes so a character is never split.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

}  // namespace et::viz
