// Whole-output-or-nothing file writing: every tool writes to `path.tmp.<pid>`
// and renames over `path` only when the output is complete, so a failed run
// leaves no half-written file.
#ifndef PROTO_FILE_UTIL_H_
#define PROTO_FILE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace et {

// A temporary sibling of `path` in the same directory (so rename is atomic).
std::string TempPathFor(absl::string_view path);

// Renames `tmp` over `path`; removes `tmp` and returns an error if that fails.
absl::Status CommitTempFile(const std::string& tmp, const std::string& path);

// Writes `contents` to `path` atomically (temp file + rename).
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

// Reads a whole file, gunzipping transparently when it starts with 1f 8b.
absl::Status ReadFileMaybeGzip(const std::string& path, std::string* contents);

// Refuses a decompressing read that has produced `decoded` bytes from
// `compressed` input bytes when it passes the limits of proto/input_limits.h
// (total size, or gzip expansion ratio once past 64 MiB): a 2.6 MB gzip of
// '[' otherwise grows to gigabytes before anything else fails. The error
// names the file and the limit.
absl::Status CheckGzipExpansion(const std::string& path, uint64_t decoded,
                                uint64_t compressed);

// "path: message", unless `message` already starts with "path: " (readers
// name their file themselves; wrapping again printed it twice).
std::string PrefixPath(absl::string_view path, absl::string_view message);

// True when the path names a directory.
bool IsDirectory(const std::string& path);

// Expands a per-rank pattern: "out.%d.et" with rank 3 -> "out.3.et".
std::string ExpandRankPattern(absl::string_view pattern, int rank);

}  // namespace et

#endif  // PROTO_FILE_UTIL_H_
