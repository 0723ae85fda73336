// Re-reading node text from a streamed trace; see trace_text_source.h.
#include "converter/trace_text_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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
  const uint64_t begin = op.text_offset;
  const uint64_t end = begin + op.text_length;
  if (begin < window_begin_ || end > window_begin_ + window_.size()) {
    // 1.0.1 writes children before their parent and ids ascend parent first, so
    // the window also reaches back a quarter of its size.
    constexpr uint64_t kWindowBytes = 1 << 20;
    constexpr uint64_t kBehindBytes = kWindowBytes / 4;
    window_begin_ = begin > kBehindBytes ? begin - kBehindBytes : 0;
    const uint64_t needed = end - window_begin_;
    window_.resize(std::max(kWindowBytes, needed));
    size_t done = 0;
    while (done < needed) {
      ssize_t n = pread(fd_, window_.data() + done, window_.size() - done,
                        static_cast<off_t>(window_begin_ + done));
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    if (done < needed) {
      window_.clear();
      return absl::DataLossError(
          absl::StrFormat("%s: node %d: cannot read its text back at byte %d",
                          path_, op.id, begin));
    }
    window_.resize(done);
  }
  return absl::string_view(window_).substr(begin - window_begin_,
                                           op.text_length);
}

}  // namespace et::convert
