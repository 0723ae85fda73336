// Escaping for the text formats et-viz writes (JSON, XML, DOT). Trace strings
// are not guaranteed to be UTF-8 (op names come from Python reprs and C++
// demanglers), and one bad byte makes a whole GraphML or JSON file unreadable,
// so every writer passes strings through these functions, which also replace
// invalid UTF-8 with '?'. Stateless; thread-safe.
#ifndef VISUALIZER_TEXT_ESCAPE_H_
#define VISUALIZER_TEXT_ESCAPE_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace et::viz {

// `s` with every invalid UTF-8 sequence replaced by '?'.
std::string ValidUtf8(absl::string_view s);

// A JSON string literal, quotes included.
std::string JsonQuote(absl::string_view s);

// Text for XML element content or a double-quoted attribute value. Control
// characters that XML 1.0 forbids are dropped.
std::string XmlEscape(absl::string_view s);

// Text for inside a double-quoted DOT string (quotes and backslashes escaped;
// newlines become DOT's centred line break "\n").
std::string DotEscape(absl::string_view s);

// "12.3 us", "4.56 ms", "1.20 s": a duration for people, 3 significant digits.
std::string HumanDuration(int64_t ns);

// "512 B", "1.5 KiB", "37.6 MiB": a byte count for people.
std::string HumanBytes(int64_t bytes);

// `s` cut to at most `max_chars` bytes at a UTF-8 boundary, with "..." when
// cut.
std::string Abbreviate(absl::string_view s, size_t max_chars);

}  // namespace et::viz

#endif  // VISUALIZER_TEXT_ESCAPE_H_
