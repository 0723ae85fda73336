// Reads a small JSON configuration file (device presets, calibration tables)
// into nlohmann::json without exceptions: a missing file or bad JSON is a
// one-line error naming the file. Callers check every value's type before
// reading it (nlohmann's get<>() throws on a mismatch).
#ifndef BASE_JSON_FILE_H_
#define BASE_JSON_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace et {

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::string& path);

}  // namespace et

#endif  // BASE_JSON_FILE_H_
