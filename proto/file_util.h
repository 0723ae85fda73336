// Whole-output-or-nothing file writing: every tool writes to
// `path.tmp.<pid>.<n>` and renames over `path` only when the output is
// complete, so a failed or interrupted run leaves no half-written file.
#ifndef PROTO_FILE_UTIL_H_
#define PROTO_FILE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace et {

// A temporary sibling of `path` in the same directory (so rename is atomic):
// `path.tmp.<pid>.<n>`, unique per call, so two writers of one output in one
// process never share a temp file. The name is registered: if the process gets
// SIGINT or SIGTERM before the temp file is committed or discarded, the
// handler (installed on first use, only over the default action) unlinks it
// and then dies of the signal as it would have. Thread-safe.
std::string TempPathFor(absl::string_view path);

// fsyncs `tmp` (so a crash after the rename cannot leave an empty or short
// file under the final name), renames it over `path` and unregisters it;
// removes `tmp` and returns an error if that fails.
absl::Status CommitTempFile(const std::string& tmp, const std::string& path);

// Removes a temp file that will not be committed, and unregisters it.
void DiscardTempFile(const std::string& tmp);

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

}  // namespace et

#endif  // PROTO_FILE_UTIL_H_
