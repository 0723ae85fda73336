// Checked gzip-or-plain file input; see gzip_input.h.
#include "base/gzip_input.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/status_macros.h"

namespace et {

absl::StatusOr<GzipInput> GzipInput::Open(const std::string& path,
                                          unsigned buffer_bytes) {
  if (IsDirectory(path)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory", path));
  }
  RETURN_IF_ERROR(CheckInputFileKind(path));
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("%s: cannot open: %s", path, strerror(errno)));
  }
  gzbuffer(f, buffer_bytes);
  return GzipInput(f);
}

absl::StatusOr<size_t> GzipInput::Read(void* buffer, size_t size) {
  const int n = gzread(file_.get(), buffer,
                       static_cast<unsigned>(std::min<size_t>(size, 1u << 30)));
  int errnum = Z_OK;
  const char* message = gzerror(file_.get(), &errnum);
  if (n < 0) {
    return absl::DataLossError(
        absl::StrFormat("corrupt gzip stream: %s", message));
  }
  // zlib reports a stream cut before its trailer as Z_BUF_ERROR at the end.
  if (n == 0 && errnum == Z_BUF_ERROR) {
    return absl::DataLossError(
        "truncated gzip stream (ends before its trailer)");
  }
  if (n == 0 && errnum != Z_OK) {
    return absl::DataLossError(
        absl::StrFormat("corrupt gzip stream: %s", message));
  }
  decoded_bytes_ += static_cast<uint64_t>(n);
  return static_cast<size_t>(n);
}

uint64_t GzipInput::compressed_bytes() const {
  return static_cast<uint64_t>(gzoffset(file_.get()));
}

absl::Status ReadFileMaybeGzip(const std::string& path, std::string* contents) {
  ASSIGN_OR_RETURN(GzipInput input, GzipInput::Open(path));
  contents->clear();
  char buffer[1 << 16];
  while (true) {
    absl::StatusOr<size_t> n = input.Read(buffer, sizeof(buffer));
    if (!n.ok()) {
      contents->clear();
      return absl::DataLossError(PrefixPath(path, n.status().message()));
    }
    if (*n == 0) return absl::OkStatus();
    contents->append(buffer, *n);
    if (absl::Status s = CheckGzipExpansion(path, input.decoded_bytes(),
                                            input.compressed_bytes());
        !s.ok()) {
      contents->clear();
      return s;
    }
  }
}

absl::Status CheckGzipExpansion(const std::string& path, uint64_t decoded,
                                uint64_t compressed) {
  if (decoded > kMaxExpandedFileBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: expands to more than %d GiB (the limit on one input file)", path,
        kMaxExpandedFileBytes >> 30));
  }
  if (decoded > kMinBytesForRatioCheck &&
      decoded / std::max<uint64_t>(compressed, 1) > kMaxGzipRatio) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: a gzip bomb? %d compressed bytes expand to over %d MiB (more "
        "than %dx, the limit on gzip expansion)",
        path, compressed, decoded >> 20, kMaxGzipRatio));
  }
  return absl::OkStatus();
}

}  // namespace et
