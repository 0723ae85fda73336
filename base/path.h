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

// OK when `path` may be read as an input: absent (the open that follows names
// it), a directory (the caller's own message says so) or a regular file. A
// FIFO, socket or device is refused: reading one blocks forever (a FIFO with
// no writer) or never ends (/dev/zero).
absl::Status CheckInputFileKind(const std::string& path);

// OK when `path` may be replaced by an output: absent or a regular file. A
// symlink, FIFO, socket or device is refused and left as it is (renaming a
// regular file over /dev/null, run as root, replaced the device).
absl::Status CheckOutputFileKind(const std::string& path);

// True when both paths exist and are one file (same device and inode, so
// "./a.et" and "a.et" or a hard link are caught): an output that is an input
// would be overwritten while it is being read.
bool IsSameFile(const std::string& a, const std::string& b);

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
