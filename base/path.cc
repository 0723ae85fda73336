// Path facts; see path.h.
#include "base/path.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace et {

std::string PrefixPath(absl::string_view path, absl::string_view message) {
  if (absl::StartsWith(message, absl::StrCat(path, ": "))) {
    return std::string(message);
  }
  return absl::StrCat(path, ": ", message);
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace et
