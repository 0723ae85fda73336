// Reading a file that may be gzip-compressed, with the checks every reader of
// untrusted input needs: a directory or a missing file named in one line, a
// corrupt or truncated stream refused rather than read as a clean end, and a
// gzip bomb stopped before it grows to gigabytes (limits in input_limits.h).
#ifndef BASE_GZIP_INPUT_H_
#define BASE_GZIP_INPUT_H_

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace et {

// A file read through zlib, which passes plain files through and inflates
// gzip ones. Errors say what is wrong without the path (callers name the
// file in their own context) except Open's and ReadAll's, which name it.
class GzipInput {
 public:
  // Opens `path` with a zlib buffer of `buffer_bytes`.
  static absl::StatusOr<GzipInput> Open(const std::string& path,
                                        unsigned buffer_bytes = 1 << 17);

  // Up to `size` decoded bytes into `buffer`; 0 at the clean end of the file.
  // A stream that stops before its gzip trailer, or that zlib cannot inflate,
  // is a DataLoss error.
  absl::StatusOr<size_t> Read(void* buffer, size_t size);

  uint64_t decoded_bytes() const { return decoded_bytes_; }
  uint64_t compressed_bytes() const;

 private:
  struct Closer {
    void operator()(gzFile_s* f) const { gzclose(f); }
  };
  explicit GzipInput(gzFile f) : file_(f) {}

  std::unique_ptr<gzFile_s, Closer> file_;
  uint64_t decoded_bytes_ = 0;
};

// Reads a whole file, gunzipping transparently when it starts with 1f 8b.
absl::Status ReadFileMaybeGzip(const std::string& path, std::string* contents);

// Refuses a decompressing read that has produced `decoded` bytes from
// `compressed` input bytes when it passes the limits of base/input_limits.h
// (total size, or gzip expansion ratio once past 64 MiB): a 2.6 MB gzip of
// '[' otherwise grows to gigabytes before anything else fails. The error
// names the file and the limit.
absl::Status CheckGzipExpansion(const std::string& path, uint64_t decoded,
                                uint64_t compressed);

}  // namespace et

#endif  // BASE_GZIP_INPUT_H_
