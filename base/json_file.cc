// JSON configuration files; see json_file.h.
#include "base/json_file.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/status_macros.h"
#include "base/text_escape.h"

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
  return ParseConfigJson(text, path);
}

namespace {

// One object or array being parsed: its key path, and the keys seen so far
// (an object) or the index of the latest element (an array).
struct JsonFrame {
  bool object = false;
  std::string path;
  std::string key;
  int64_t index = -1;
  absl::flat_hash_set<std::string> keys;
};

// The path of the next child of `frame`.
std::string ChildPath(JsonFrame& frame) {
  if (!frame.object)
    return absl::StrFormat("%s[%d]", frame.path, ++frame.index);
  return frame.path.empty() ? frame.key
                            : absl::StrCat(frame.path, ".", frame.key);
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseConfigJson(absl::string_view text,
                                               absl::string_view origin) {
  using Event = nlohmann::json::parse_event_t;
  std::vector<JsonFrame> stack;
  std::string duplicate;
  auto check = [&](int /*depth*/, Event event, nlohmann::json& parsed) {
    switch (event) {
      case Event::object_start:
      case Event::array_start: {
        JsonFrame frame;
        frame.object = event == Event::object_start;
        if (!stack.empty()) frame.path = ChildPath(stack.back());
        stack.push_back(std::move(frame));
        break;
      }
      case Event::object_end:
      case Event::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Event::key:
        if (!stack.empty() && parsed.is_string()) {
          JsonFrame& top = stack.back();
          top.key = parsed.get<std::string>();
          if (!top.keys.insert(top.key).second && duplicate.empty())
            duplicate = ChildPath(top);
        }
        break;
      case Event::value:
        if (!stack.empty() && !stack.back().object) ++stack.back().index;
        break;
    }
    return true;
  };
  nlohmann::json j =
      nlohmann::json::parse(text.begin(), text.end(), check, false);
  if (j.is_discarded()) {
    // Also text after the value: nlohmann's parse is strict.
    return absl::InvalidArgumentError(absl::StrCat(origin, ": bad JSON"));
  }
  if (!duplicate.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: duplicate key '%s' (each key may appear once in an object)",
        origin, EscapeForPrint(duplicate)));
  }
  return j;
}

}  // namespace et
