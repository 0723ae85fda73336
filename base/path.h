// Path facts every tool's messages and inputs need: naming a file in an error
// once, and telling a directory from a file.
#ifndef BASE_PATH_H_
#define BASE_PATH_H_

#include <string>

#include "absl/strings/string_view.h"

namespace et {

// "path: message", unless `message` already starts with "path: " (readers
// name their file themselves; wrapping again printed it twice).
std::string PrefixPath(absl::string_view path, absl::string_view message);

// True when the path names a directory.
bool IsDirectory(const std::string& path);

}  // namespace et

#endif  // BASE_PATH_H_
