// Random access to the decoded text of a trace after it has been streamed once,
// so that a node's raw JSON (its IOInfo) can be read back only when the node is
// written. Plain files are read in place; gzip input is spilled, as it is
// decoded, to an anonymous temporary file (page cache, not process memory).
// Either file is mapped read-only (pread where mmap fails): with `--keep all`
// one pread per node was 27,214 system calls and ~8% of the CPU time on a
// 27k-node trace. A plain input truncated by another process during the
// conversion now ends it with SIGBUS where pread reported the short read.
// Not thread-safe.
#ifndef CONVERTER_COMMON_TRACE_TEXT_SOURCE_H_
#define CONVERTER_COMMON_TRACE_TEXT_SOURCE_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "converter/common/host_op.h"

namespace et::convert {

class TraceTextSource {
 public:
  TraceTextSource() = default;
  ~TraceTextSource();
  TraceTextSource(const TraceTextSource&) = delete;
  TraceTextSource& operator=(const TraceTextSource&) = delete;

  // Reads the original file in place (it is not compressed).
  absl::Status OpenPlain(const std::string& path);
  // Starts a spill file for a compressed input; Append() receives the decoded
  // bytes.
  absl::Status OpenSpill(const std::string& path);
  absl::Status Append(absl::string_view bytes);
  bool spilling() const { return spill_ != nullptr; }
  // Serves node texts from `text`, built in memory (host_op_builder.h): the
  // ops' text_offset/text_length are ranges of it.
  void UseText(std::string text);

  // The JSON text of `op` (valid until the next call).
  absl::StatusOr<absl::string_view> NodeText(const HostOp& op);

 private:
  std::string path_;
  int fd_ = -1;
  FILE* spill_ = nullptr;
  std::string buffer_;
  std::string memory_text_;  // UseText's texts
  bool in_memory_ = false;
  bool unflushed_ = false;
  // The file mapped from offset 0 (nullptr: not yet, or mmap failed).
  const char* map_ = nullptr;
  size_t map_size_ = 0;
  bool map_failed_ = false;
  // The extent of the node texts read since pages were last dropped (empty:
  // low > high).
  uint64_t read_low_ = 1;
  uint64_t read_high_ = 0;

  // Lets mapped pages go once reads span 2 MiB; [begin, end) is this read.
  void DropBehind(uint64_t begin, uint64_t end);

  // Maps the file again when it has grown past the mapping (the spill file
  // grows while the trace is decoded); false when it cannot be mapped.
  bool Map(size_t needed);
};

}  // namespace et::convert

#endif  // CONVERTER_COMMON_TRACE_TEXT_SOURCE_H_
