// Two-stage trace reading; see pipelined_parse.h.
#include "converter/pipelined_parse.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "converter/et_json_tokenizer.h"
#include "proto/status_macros.h"

namespace et::convert {
namespace {

constexpr size_t kBatchBytes = 128 << 10;  // node text per batch
constexpr size_t kMaxQueued = 2;  // batches in flight: bounds memory to ~1 MiB

struct NodeSpan {
  uint32_t begin;  // in NodeBatch::text
  uint32_t length;
  uint64_t offset;  // in the decoded trace
  int64_t index;    // position in the file
};

struct NodeBatch {
  std::string
      text;  // node texts, each followed by kSpanPadding spaces for simdjson
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

}  // namespace

absl::Status ParseTracePipelined(
    const std::string& path, EtNodeParser* parser, TraceTextSource* text,
    const std::function<void(int64_t)>& on_progress,
    const EarlyFieldsCheck& early_check, ParsedTrace* out) {
  EtJsonTokenizer tokenizer(path);
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
          batch.spans.push_back({static_cast<uint32_t>(batch.text.size()),
                                 static_cast<uint32_t>(json.size()), offset,
                                 index});
          batch.text.append(json.data(), json.size());
          batch.text.append(kSpanPadding, ' ');
          if (batch.text.size() >= kBatchBytes) return flush();
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
    for (const NodeSpan& s : batch.spans) {
      if (!parse_status.ok()) break;
      out->ops.emplace_back();
      parse_status = parser->Parse(
          absl::string_view(batch.text.data() + s.begin, s.length), s.index,
          &out->ops.back(), &out->tensors);
      out->ops.back().text_offset = s.offset;
    }
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

}  // namespace et::convert
