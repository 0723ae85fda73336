// Splits a PyTorch execution-trace JSON file into its top-level fields and the
// raw text of each element of its `nodes` array. A gzip file is read in chunks
// so that memory stays at one chunk plus one node whatever the file size;
// partial nodes at a chunk boundary are carried over to the next chunk. A plain
// file is mapped and scanned in place, through the same chunk bookkeeping (so
// limits and error offsets are those of the chunked read), without a copy; a
// plain file truncated by another process while it is read ends the run with
// SIGBUS (docs/bad-input.md). The tokenizer checks structure only (strings,
// brackets); the node parser validates each node. Not thread-safe.
#ifndef CONVERTER_ET_ET_JSON_TOKENIZER_H_
#define CONVERTER_ET_ET_JSON_TOKENIZER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "converter/common/trace_text_source.h"

namespace et::convert {

// Bytes readable after the end of every span handed out (simdjson needs 64).
inline constexpr size_t kSpanPadding = 64;

class EtJsonTokenizer {
 public:
  // Called once per element of `nodes`, in file order. `node_json` points into
  // the tokenizer's buffer (valid during the call only); at least kSpanPadding
  // bytes after its end are readable. `index` counts nodes from 0. A non-OK
  // status stops the run. `offset` is the node's position in the decoded trace
  // (for TraceTextSource).
  using NodeCallback = std::function<absl::Status(
      absl::string_view node_json, int64_t index, uint64_t offset)>;
  // Called for progress with (compressed or plain) bytes consumed so far.
  using ProgressCallback = std::function<void(int64_t bytes_read)>;

  explicit EtJsonTokenizer(std::string path);
  ~EtJsonTokenizer();
  EtJsonTokenizer(const EtJsonTokenizer&) = delete;
  EtJsonTokenizer& operator=(const EtJsonTokenizer&) = delete;

  // Reads the whole file. Fails with the path and byte offset on malformed
  // structure, a truncated file, a corrupt gzip stream, a missing `nodes` array
  // or an empty file. When `text` is given it is opened on the file (plain) or
  // fed the decoded bytes (gzip), so that node texts can be read back later.
  absl::Status Run(const NodeCallback& on_node,
                   const ProgressCallback& on_progress = {},
                   TraceTextSource* text = nullptr);

  // Raw JSON text of the top-level fields other than `nodes` (e.g. "schema" ->
  // "\"1.0.1\"").
  const std::map<std::string, std::string>& top_level_fields() const {
    return fields_;
  }
  int64_t nodes_seen() const { return nodes_seen_; }

  // Maps the file when it is plain (not gzip) and mappable; true if so. Run()
  // maps it itself when this was not called.
  bool MapIfPlain();

  // True once the file is mapped: then every `node_json` handed out stays
  // valid (with its padding) until the tokenizer is destroyed, so a caller
  // need not copy it.
  bool spans_outlive_callback() const;

  // Lets the mapped file's pages before decoded byte `offset` go (the caller
  // is done with those node texts): mapped pages count in the resident set,
  // and a trace of any size should need no more than a few MiB of it at once.
  // Pages are dropped in steps of 2 MiB; reading them again faults them back.
  void DoneBefore(uint64_t offset);

 private:
  class Reader;  // the state of one Run(): input window, chunk bookkeeping
  struct Mapping;

  // The steps of Run(), in file order.
  absl::Status ReadTrace(Reader& in, const NodeCallback& on_node);
  absl::Status ReadField(Reader& in, const NodeCallback& on_node,
                         bool* saw_nodes);
  absl::Status ReadNodes(Reader& in, const NodeCallback& on_node);
  // The error for a Kineto trace given as the ET.
  absl::Status KinetoGivenError() const;

  std::string path_;
  std::map<std::string, std::string> fields_;
  int64_t nodes_seen_ = 0;
  bool saw_trace_events_ = false;     // a Kineto trace's top-level key
  std::unique_ptr<Mapping> mapping_;  // a plain file, once mapped
  bool map_tried_ = false;
  uint64_t dropped_before_ = 0;  // mapped bytes before this were let go
};

// Length of the JSON value at the start of `text` (no leading whitespace):
// strings skipped, brackets matched, a scalar ending at the next structural
// character. Returns absl::string_view::npos when `text` ends inside the value
// or it is malformed. The one structural scan of the converter: the tokenizer
// and the node parser both use it.
size_t JsonValueLength(absl::string_view text);

// Tests only: whether the structural scan may use AVX2 blocks (where the CPU
// has them; the default) or only SSE2 ones. Returns the previous setting. Not
// thread-safe.
bool UseWideScanForTesting(bool wide);

}  // namespace et::convert

#endif  // CONVERTER_ET_ET_JSON_TOKENIZER_H_
