// Whitespace removal outside JSON strings; see json_text.h.
#include "converter/json_text.h"

namespace et::convert {

std::string CompactJson(absl::string_view json) {
  if (json.find_first_of("\n\r") == absl::string_view::npos) {
    return std::string(json);
  }
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < json.size()) {
        out.push_back(json[++i]);  // an escaped quote does not end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out.push_back(c);
    } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace et::convert
