// Re-reading node text from a streamed trace; see trace_text_source.h.
#include "converter/common/trace_text_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

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

void TraceTextSource::UseText(std::string text) {
  memory_text_ = std::move(text);
  in_memory_ = true;
}

absl::StatusOr<absl::string_view> TraceTextSource::NodeText(const HostOp& op) {
  if (in_memory_) {
    if (op.text_offset + op.text_length > memory_text_.size()) {
      return absl::InternalError(absl::StrFormat(
          "%s: node %d: its text is outside the built texts", path_, op.id));
    }
    return absl::string_view(memory_text_)
        .substr(op.text_offset, op.text_length);
  }
  if (unflushed_) {
    unflushed_ = false;
    if (fflush(spill_) != 0) {
      return absl::InternalError(
          absl::StrFormat("%s: temporary file write failed", path_));
    }
  }
  if (Map(op.text_offset + op.text_length)) {
    DropBehind(op.text_offset, op.text_offset + op.text_length);
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

// Pages read through the mapping count in the resident set although they are
// the kernel's page cache: reading a 21 MB trace's nodes showed +12 MB (default
// mode) to +20 MB (`--keep all`) over the pread copy. Once the pages read since
// the last drop span 2 MiB, those behind the current read are dropped, which
// keeps the peak near the pread figure. Nodes are read in file order, so
// nothing dropped is read again; one read out of order faults its pages back
// in from the cache. (Dropping the whole mapping at every ~8 MiB charged, 64
// KiB a read, was ~220 madvise calls and as many refaults with `--keep all`.)
void TraceTextSource::DropBehind(uint64_t begin, uint64_t end) {
  constexpr uint64_t kDropSpanBytes = 2 << 20;
  if (read_low_ > read_high_) read_low_ = read_high_ = begin;
  read_low_ = std::min(read_low_, begin);
  read_high_ = std::max(read_high_, end);
  if (read_high_ - read_low_ <= kDropSpanBytes) return;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t from = read_low_ / page * page;
  const uint64_t to = begin / page * page;
  if (to > from) {
    madvise(const_cast<char*>(map_) + from, to - from, MADV_DONTNEED);
  } else {  // the span lies ahead of this read: start afresh
    madvise(const_cast<char*>(map_), map_size_, MADV_DONTNEED);
  }
  read_low_ = begin;
  read_high_ = end;
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
