// Text from inputs (op names, nsys product versions, file contents) made safe
// to print: a name holding a newline or an ANSI escape printed raw can forge
// a line of a tool's output ("et-convert: wrote everything fine") or drive
// the terminal, and bytes that are not UTF-8 make a JSON writer abort.
#ifndef BASE_TEXT_ESCAPE_H_
#define BASE_TEXT_ESCAPE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace et {

// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing past U+10FFFF).
bool IsValidUtf8(absl::string_view text);

// `text` with every control character (newline, ESC, DEL, ...) and every byte
// that is not part of well-formed UTF-8 written as \n, \t, \r or \xNN;
// printable UTF-8 is kept (so is a backslash: it cannot forge a line). The one
// escaping every tool applies to what it prints about its inputs.
std::string EscapeForPrint(absl::string_view text);

}  // namespace et

#endif  // BASE_TEXT_ESCAPE_H_
