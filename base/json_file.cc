// JSON configuration files; see json_file.h.
#include "base/json_file.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/status_macros.h"

namespace et {

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  RETURN_IF_ERROR(CheckInputFileKind(path));
  if (IsDirectory(path))
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && st.st_size > kMaxConfigFileBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: %d bytes, over the %d MiB limit on a configuration file", path,
        st.st_size, kMaxConfigFileBytes >> 20));
  }
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxConfigFileBytes) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("%s: over the %d MiB limit on a configuration file",
                          path, kMaxConfigFileBytes >> 20));
    }
  }
  return text;
}

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded())
    return absl::InvalidArgumentError(absl::StrCat(path, ": bad JSON"));
  return j;
}

}  // namespace et
