// Chrome / Perfetto trace building; see chrome_trace.h.
#include "step/chrome_trace.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/atomic_output_file.h"
#include "base/status_macros.h"

namespace et {
namespace {

// The document around the events, as nlohmann writes an object with these
// two keys (sorted, compact).
constexpr absl::string_view kHead =
    R"({"displayTimeUnit":"ns","traceEvents":[)";
constexpr absl::string_view kTail = "]}\n";

}  // namespace

ChromeTrace::ChromeTrace(const std::string& path, size_t spill_bytes)
    : stream_path_(path), spill_bytes_(spill_bytes) {
  stream_tmp_ = TempPathFor(path);
  stream_ = std::fopen(stream_tmp_.c_str(), "wb");
  if (stream_ == nullptr) {
    stream_status_ = absl::NotFoundError(
        absl::StrCat(path, ": cannot open for writing: ", strerror(errno)));
    DiscardTempFile(stream_tmp_);
    return;
  }
  events_.assign(kHead.data(), kHead.size());
}

ChromeTrace::~ChromeTrace() {
  if (stream_ == nullptr) return;
  std::fclose(stream_);
  DiscardTempFile(stream_tmp_);
}

void ChromeTrace::Spill() {
  if (stream_ == nullptr) return;
  if (std::fwrite(events_.data(), 1, events_.size(), stream_) !=
          events_.size() &&
      stream_status_.ok()) {
    stream_status_ =
        absl::InternalError(absl::StrCat(stream_path_, ": write failed"));
  }
  events_.clear();
}

void ChromeTrace::Append(const nlohmann::json& event) {
  if (any_event_) events_ += ',';
  any_event_ = true;
  events_ +=
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (stream_ != nullptr && events_.size() >= spill_bytes_) Spill();
}

void ChromeTrace::NameProcess(int64_t pid, absl::string_view name) {
  Append({{"ph", "M"},
          {"name", "process_name"},
          {"pid", pid},
          {"args", {{"name", std::string(name)}}}});
}

void ChromeTrace::NameThread(int64_t pid, int64_t tid, absl::string_view name,
                             int64_t sort_index) {
  Append({{"ph", "M"},
          {"name", "thread_name"},
          {"pid", pid},
          {"tid", tid},
          {"args", {{"name", std::string(name)}}}});
  if (sort_index >= 0) {
    Append({{"ph", "M"},
            {"name", "thread_sort_index"},
            {"pid", pid},
            {"tid", tid},
            {"args", {{"sort_index", sort_index}}}});
  }
}

void ChromeTrace::AddComplete(int64_t pid, int64_t tid, absl::string_view name,
                              absl::string_view category, int64_t start_ns,
                              int64_t duration_ns, nlohmann::json args) {
  Append({{"ph", "X"},
          {"name", std::string(name)},
          {"cat", std::string(category)},
          {"pid", pid},
          {"tid", tid},
          {"ts", start_ns / 1e3},
          {"dur", duration_ns / 1e3},
          {"args", std::move(args)}});
  ++complete_events_;
}

std::string ChromeTrace::ToJson() const {
  return absl::StrCat(kHead, events_, kTail);
}

absl::Status ChromeTrace::Write(const std::string& path) {
  if (stream_path_.empty()) {
    const absl::string_view parts[] = {kHead, events_, kTail};
    return WriteFileAtomically(path, parts);
  }
  if (path != stream_path_) {
    return absl::InternalError(absl::StrCat(
        path, ": a trace streamed to ", stream_path_, " written elsewhere"));
  }
  RETURN_IF_ERROR(stream_status_);
  events_.append(kTail.data(), kTail.size());
  Spill();
  const bool closed = std::fclose(stream_) == 0;
  stream_ = nullptr;
  if (!closed || !stream_status_.ok()) {
    DiscardTempFile(stream_tmp_);
    return stream_status_.ok()
               ? absl::InternalError(absl::StrCat(path, ": write failed"))
               : stream_status_;
  }
  return CommitTempFile(stream_tmp_, path);
}

}  // namespace et
