// Re-reading node text from a streamed trace; see trace_text_source.h.
#include "converter/trace_text_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace et::convert {

TraceTextSource::~TraceTextSource() {
  if (spill_ != nullptr) fclose(spill_);  // tmpfile(): removed on close
  if (fd_ >= 0 && spill_ == nullptr) close(fd_);
}

absl::Status TraceTextSource::OpenPlain(const std::string& path) {
  path_ = path;
  fd_ = open(path.c_str(), O_RDONLY);
  if (fd_ < 0) {
    return absl::NotFoundError(
        absl::StrFormat("%s: cannot open: %s", path, strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status TraceTextSource::OpenSpill(const std::string& path) {
  path_ = path;
  spill_ = tmpfile();
  if (spill_ == nullptr) {
    return absl::InternalError(absl::StrFormat(
        "%s: cannot create a temporary file for the decoded trace: %s", path,
        strerror(errno)));
  }
  fd_ = fileno(spill_);
  return absl::OkStatus();
}

absl::Status TraceTextSource::Append(absl::string_view bytes) {
  unflushed_ = true;
  if (fwrite(bytes.data(), 1, bytes.size(), spill_) != bytes.size()) {
    return absl::InternalError(absl::StrFormat(
        "%s: cannot write the decoded trace to a temporary file (disk full?)",
        path_));
  }
  return absl::OkStatus();
}

absl::StatusOr<absl::string_view> TraceTextSource::NodeText(const HostOp& op) {
  if (unflushed_) {
    unflushed_ = false;
    if (fflush(spill_) != 0) {
      return absl::InternalError(
          absl::StrFormat("%s: temporary file write failed", path_));
    }
  }
  buffer_.resize(op.text_length);
  size_t done = 0;
  while (done < op.text_length) {
    ssize_t n = pread(fd_, buffer_.data() + done, op.text_length - done,
                      static_cast<off_t>(op.text_offset + done));
    if (n <= 0) {
      return absl::DataLossError(
          absl::StrFormat("%s: node %d: cannot read its text back at byte %d",
                          path_, op.id, op.text_offset));
    }
    done += static_cast<size_t>(n);
  }
  return absl::string_view(buffer_);
}

}  // namespace et::convert
