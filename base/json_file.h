// Reads a small configuration file (device presets, calibration tables,
// topologies), bounded in size, and JSON ones into nlohmann::json without
// exceptions: a missing file or bad JSON is a one-line error naming the file.
// Callers check every value's type before reading it (nlohmann's get<>() throws
// on a mismatch).
#ifndef BASE_JSON_FILE_H_
#define BASE_JSON_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace et {

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// Parses a configuration file's JSON text (`origin` names it in errors): one
// value with nothing after it, and no key twice in one object (nlohmann keeps
// the last one silently), the duplicate named by its key path
// (`devices.H100.peak_tflops`, `[3].ranks`).
absl::StatusOr<nlohmann::json> ParseConfigJson(absl::string_view text,
                                               absl::string_view origin);

// The text of a configuration file, bounded before it is read: a FIFO or
// device is refused (base/path.h), and so is a file over kMaxConfigFileBytes
// (base/input_limits.h). NotFound when it cannot be opened.
absl::StatusOr<std::string> ReadConfigFile(const std::string& path);

}  // namespace et

#endif  // BASE_JSON_FILE_H_
