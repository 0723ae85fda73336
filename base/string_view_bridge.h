// absl::string_view from a std::string_view. simdjson hands out
// std::string_view; our libraries take absl::string_view, which Debian's
// Abseil builds as its own type in C++17, so the two do not convert
// implicitly.
#ifndef BASE_STRING_VIEW_BRIDGE_H_
#define BASE_STRING_VIEW_BRIDGE_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace et {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace et

#endif  // BASE_STRING_VIEW_BRIDGE_H_
