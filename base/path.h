// Path facts every tool's messages and inputs need: naming a file in an error
// once, and telling a directory from a file.
#ifndef BASE_PATH_H_
#define BASE_PATH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace et {

// "path: message", unless `message` already starts with "path: " (readers
// name their file themselves; wrapping again printed it twice).
std::string PrefixPath(absl::string_view path, absl::string_view message);

// True when the path names a directory.
bool IsDirectory(const std::string& path);

// `dir` + "/" + `name`, with one slash however `dir` ends ("out/" + "a.et"
// is "out/a.et", not "out//a.et"); `name` alone when `dir` is empty.
std::string JoinPath(absl::string_view dir, absl::string_view name);

// The folder a file path (or a per-rank pattern) goes in: "a/b.et" -> "a",
// "b.et" -> ".", "/b.et" -> "/".
std::string FolderOf(absl::string_view path);

// Checked before the work that produces it ("outputs are checked before the
// work"): an output file's folder exists and is writable, and the path is not
// a directory. "-" (stdout) passes. The error names `flag` when given
// ("--timeline nodir/t.json: the output folder nodir does not exist (create it
// first)"), so a run never prints its whole report and then fails to write.
absl::Status CheckOutputPath(absl::string_view flag, const std::string& path);

}  // namespace et

#endif  // BASE_PATH_H_
