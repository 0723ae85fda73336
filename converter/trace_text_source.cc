// Re-reading node text from a streamed trace; see trace_text_source.h.
#include "converter/trace_text_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace et::convert {

TraceTextSource::~TraceTextSource() {
  if (map_ != nullptr) munmap(const_cast<char*>(map_), map_size_);
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
  if (Map(op.text_offset + op.text_length)) {
    // Pages read through the mapping count in the resident set although they
    // are the kernel's page cache: reading a 21 MB trace's nodes showed +12 MB
    // (default mode) to +20 MB (`--keep all`) over the pread copy. Dropping
    // the mapped pages every ~8 MiB keeps the peak near the pread figure; later
    // reads fault them back in from the cache. Each read is charged its length
    // plus the 64 KiB the kernel maps around a fault.
    constexpr size_t kDropEveryBytes = 8 << 20;
    constexpr size_t kFaultAroundBytes = 64 << 10;
    mapped_since_drop_ += op.text_length + kFaultAroundBytes;
    if (mapped_since_drop_ > kDropEveryBytes) {
      madvise(const_cast<char*>(map_), map_size_, MADV_DONTNEED);
      mapped_since_drop_ = op.text_length + kFaultAroundBytes;
    }
    return absl::string_view(map_ + op.text_offset, op.text_length);
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

bool TraceTextSource::Map(size_t needed) {
  if (needed <= map_size_) return true;
  if (map_failed_ || fd_ < 0) return false;
  struct stat st;
  if (fstat(fd_, &st) != 0 || static_cast<size_t>(st.st_size) < needed) {
    map_failed_ = true;
    return false;
  }
  if (map_ != nullptr) munmap(const_cast<char*>(map_), map_size_);
  map_ = nullptr;
  map_size_ = 0;
  const size_t size = static_cast<size_t>(st.st_size);
  void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (p == MAP_FAILED) {
    map_failed_ = true;
    return false;
  }
  map_ = static_cast<const char*>(p);
  map_size_ = size;
  return true;
}

}  // namespace et::convert
