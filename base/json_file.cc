// JSON configuration files; see json_file.h.
#include "base/json_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace et {

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded())
    return absl::InvalidArgumentError(absl::StrCat(path, ": bad JSON"));
  return j;
}

}  // namespace et
