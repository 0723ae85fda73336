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

namespace {

const char* SpecialKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

}  // namespace

absl::Status CheckInputFileKind(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) ||
      S_ISDIR(st.st_mode)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": is ", SpecialKind(st.st_mode),
      ", not a regular file: refused as an input (it may never end)"));
}

absl::Status CheckOutputFileKind(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) {
    return absl::OkStatus();
  }
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is a directory: cannot write the output there"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": is ", SpecialKind(st.st_mode),
                   ": refused as an output (it would be replaced by a file)"));
}

bool IsSameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace et
