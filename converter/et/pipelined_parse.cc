// Two-stage trace reading; see pipelined_parse.h.
#include "converter/et/pipelined_parse.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status_macros.h"
#include "converter/common/huge_pages.h"
#include "converter/et/et_json_tokenizer.h"

namespace et::convert {
namespace {

constexpr size_t kBatchBytes = 128 << 10;  // node text per batch
constexpr size_t kMaxQueued = 2;  // batches in flight: bounds memory to ~1 MiB

struct NodeSpan {
  const char* data;  // the text in place, or nullptr: in NodeBatch::text
  uint32_t begin;    // in NodeBatch::text
  uint32_t length;
  uint64_t offset;  // in the decoded trace
  int64_t index;    // position in the file
};

struct NodeBatch {
  // Node texts copied, each followed by kSpanPadding spaces for simdjson;
  // empty when the tokenizer's texts outlive it (a mapped file).
  std::string text;
  size_t node_bytes = 0;  // of the spans, copied or not
  std::vector<NodeSpan> spans;
  std::map<std::string, std::string> fields;  // set on the first batch only
};

// A bounded queue of batches between the tokenizer thread and the parsing
// thread.
class BatchQueue {
 public:
  // Blocks while full; returns false when the consumer has stopped.
  bool Push(NodeBatch batch) {
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock,
                   [&] { return queue_.size() < kMaxQueued || stopped_; });
    if (stopped_) return false;
    queue_.push_back(std::move(batch));
    not_empty_.notify_one();
    return true;
  }
  // Blocks while empty; returns false at the end of the stream.
  bool Pop(NodeBatch* batch) {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !queue_.empty() || closed_; });
    if (queue_.empty()) return false;
    *batch = std::move(queue_.front());
    queue_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void Close() {  // producer: no more batches
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
  }
  void Stop() {  // consumer: stop producing
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    not_full_.notify_all();
  }

  // Batches go back to the producer emptied but with their buffers: a fresh
  // 128 KiB text per batch was fresh pages to fault in every time (the
  // batches were ~40% of et-convert's page faults on a 27k-node trace).
  void Recycle(NodeBatch batch) {
    batch.text.clear();
    batch.node_bytes = 0;
    batch.spans.clear();
    batch.fields.clear();
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() < kMaxQueued + 1) free_.push_back(std::move(batch));
  }
  NodeBatch TakeFree() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return NodeBatch();
    NodeBatch batch = std::move(free_.back());
    free_.pop_back();
    return batch;
  }

 private:
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<NodeBatch> queue_;
  std::vector<NodeBatch> free_;  // emptied batches for the producer
  bool closed_ = false;
  bool stopped_ = false;
};

// Appends the node text handed out by `tokenizer` to `batch`: in place when
// the tokenizer's texts outlive the call, copied otherwise. True when the
// batch is full.
bool AddNode(const EtJsonTokenizer& tokenizer, absl::string_view json,
             int64_t index, uint64_t offset, NodeBatch* batch) {
  const bool in_place = tokenizer.spans_outlive_callback();
  batch->spans.push_back({in_place ? json.data() : nullptr,
                          static_cast<uint32_t>(batch->text.size()),
                          static_cast<uint32_t>(json.size()), offset, index});
  if (!in_place) {
    batch->text.append(json.data(), json.size());
    batch->text.append(kSpanPadding, ' ');
  }
  batch->node_bytes += json.size() + kSpanPadding;
  return batch->node_bytes >= kBatchBytes;
}

// Parses every node of `batch` into `out`, in order; stops at the first
// error.
absl::Status ParseBatch(const NodeBatch& batch, EtNodeParser* parser,
                        ParsedTrace* out) {
  for (const NodeSpan& s : batch.spans) {
    out->ops.emplace_back();
    const char* data = s.data != nullptr ? s.data : batch.text.data() + s.begin;
    const absl::Status status =
        parser->Parse(absl::string_view(data, s.length), s.index,
                      &out->ops.back(), &out->tensors);
    out->ops.back().text_offset = s.offset;
    RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

// A mapped file on this thread: the tokenizer hands out batches of node texts
// in place and each is parsed as soon as it is full. Without a copy to make,
// the tokenizer thread's share had shrunk to a scan that the parser waited on
// anyway: on a 21 MB trace the two threads took 59 ms wall time and 67 ms
// CPU, this 62 ms and 61-64 ms (and the texts are still in the cache when
// parsed). Batches, the early check and the precedence of the tokenizer's
// errors are those of the two-thread version for traces of one batch.
absl::Status ParseInPlace(EtJsonTokenizer& tokenizer, EtNodeParser* parser,
                          TraceTextSource* text,
                          const std::function<void(int64_t)>& on_progress,
                          const EarlyFieldsCheck& early_check,
                          ParsedTrace* out) {
  NodeBatch batch;
  bool checked = false;
  auto parse = [&]() -> absl::Status {
    if (!checked) {
      checked = true;
      RETURN_IF_ERROR(early_check(tokenizer.top_level_fields()));
    }
    RETURN_IF_ERROR(ParseBatch(batch, parser, out));
    if (!batch.spans.empty()) tokenizer.DoneBefore(batch.spans.front().offset);
    batch.spans.clear();
    batch.node_bytes = 0;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(tokenizer.Run(
      [&](absl::string_view json, int64_t index,
          uint64_t offset) -> absl::Status {
        if (AddNode(tokenizer, json, index, offset, &batch)) return parse();
        return absl::OkStatus();
      },
      on_progress, text));
  if (!batch.spans.empty() || !checked) RETURN_IF_ERROR(parse());
  out->fields = tokenizer.top_level_fields();
  return absl::OkStatus();
}

// A compressed (or unmappable) file: the tokenizer thread inflates and
// copies node texts into batches while this thread parses the previous one.
absl::Status ParseWithTokenizerThread(
    EtJsonTokenizer& tokenizer, EtNodeParser* parser, TraceTextSource* text,
    const std::function<void(int64_t)>& on_progress,
    const EarlyFieldsCheck& early_check, ParsedTrace* out) {
  BatchQueue queue;
  absl::Status tokenizer_status;
  std::thread producer([&] {
    NodeBatch batch;
    bool first = true;
    auto flush = [&]() -> absl::Status {
      if (first) batch.fields = tokenizer.top_level_fields();
      first = false;
      if (!queue.Push(std::move(batch))) return absl::CancelledError("stopped");
      batch = queue.TakeFree();
      return absl::OkStatus();
    };
    tokenizer_status = tokenizer.Run(
        [&](absl::string_view json, int64_t index,
            uint64_t offset) -> absl::Status {
          if (AddNode(tokenizer, json, index, offset, &batch)) return flush();
          return absl::OkStatus();
        },
        on_progress, text);
    if (tokenizer_status.ok() && (!batch.spans.empty() || first))
      tokenizer_status = flush();
    queue.Close();
  });
  absl::Status parse_status;
  bool checked = false;
  NodeBatch batch;
  while (parse_status.ok() && queue.Pop(&batch)) {
    if (!checked) {
      checked = true;
      parse_status = early_check(batch.fields);
    }
    if (parse_status.ok()) parse_status = ParseBatch(batch, parser, out);
    queue.Recycle(std::move(batch));
    batch = NodeBatch();
  }
  queue.Stop();
  producer.join();
  // The tokenizer's error explains a parse error that follows from it (e.g.
  // truncation).
  if (!tokenizer_status.ok() && !absl::IsCancelled(tokenizer_status))
    return tokenizer_status;
  RETURN_IF_ERROR(parse_status);
  out->fields = tokenizer.top_level_fields();
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseTracePipelined(
    const std::string& path, EtNodeParser* parser, TraceTextSource* text,
    const std::function<void(int64_t)>& on_progress,
    const EarlyFieldsCheck& early_check, ParsedTrace* out) {
  // Tensors come 3-4 per node in recorded traces; growing the arena by
  // doubling faulted in twice its pages (~900 faults on a 27k-node trace).
  // Untouched reserve costs address space only.
  out->tensors.reserve(out->ops.capacity() * 8);
  AdviseHugePages(out->ops);
  AdviseHugePages(out->tensors);
  EtJsonTokenizer tokenizer(path);
  if (tokenizer.MapIfPlain()) {
    return ParseInPlace(tokenizer, parser, text, on_progress, early_check, out);
  }
  return ParseWithTokenizerThread(tokenizer, parser, text, on_progress,
                                  early_check, out);
}

}  // namespace et::convert
