// Whole-output-or-nothing file writing: every tool writes to
// `path.tmp.<pid>.<n>` and renames over `path` only when the output is
// complete, so a failed or interrupted run leaves no half-written file.
#ifndef BASE_ATOMIC_OUTPUT_FILE_H_
#define BASE_ATOMIC_OUTPUT_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

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

// Registers (or forgets) a temp file a caller names itself (et-convert's
// `.partial-*` rank outputs), for the same removal on SIGINT/SIGTERM.
void RegisterTempFile(const std::string& path);
void UnregisterTempFile(const std::string& path);

// A staging folder of files (no subfolders) that the SIGINT/SIGTERM handler
// empties and removes if the process dies of one before it is unregistered
// (committed by a rename, or removed). Up to 16 at once.
void RegisterTempFolder(const std::string& dir);
void UnregisterTempFolder(const std::string& dir);

// Writes `contents` to `path` atomically (temp file + rename).
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);
// The same for contents in pieces, written one after another (no joined copy
// of a large output in memory).
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::Span<const absl::string_view> parts);

}  // namespace et

#endif  // BASE_ATOMIC_OUTPUT_FILE_H_
