// Path facts; see path.h.
#include "base/path.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty()) return std::string(name);
  while (dir.size() > 1 && absl::EndsWith(dir, "/")) dir.remove_suffix(1);
  if (dir == "/") return absl::StrCat("/", name);
  return absl::StrCat(dir, "/", name);
}

std::string FolderOf(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

absl::Status CheckOutputPath(absl::string_view flag, const std::string& path) {
  if (path.empty() || path == "-") return absl::OkStatus();
  const std::string who = flag.empty() ? path : absl::StrCat(flag, " ", path);
  if (IsDirectory(path)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory; name the file to write", who));
  }
  const std::string folder = FolderOf(path);
  if (!IsDirectory(folder)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the output folder %s does not exist (create it first)", who,
        folder));
  }
  if (access(folder.c_str(), W_OK | X_OK) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the output folder %s is not writable", who, folder));
  }
  return absl::OkStatus();
}

}  // namespace et
