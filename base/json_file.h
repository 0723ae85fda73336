// Reads a small configuration file (device presets, calibration tables,
// topologies), bounded in size, and JSON ones into nlohmann::json without
// exceptions: a missing file or bad JSON is a one-line error naming the file.
// Callers check every value's type before reading it (nlohmann's get<>() throws
// on a mismatch).
#ifndef BASE_JSON_FILE_H_
#define BASE_JSON_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace et {

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

// The text of a configuration file, bounded before it is read: a FIFO or
// device is refused (base/path.h), and so is a file over kMaxConfigFileBytes
// (base/input_limits.h). NotFound when it cannot be opened.
absl::StatusOr<std::string> ReadConfigFile(const std::string& path);

}  // namespace et

#endif  // BASE_JSON_FILE_H_
