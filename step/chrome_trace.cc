// Chrome / Perfetto trace building; see chrome_trace.h.
#include "step/chrome_trace.h"

#include "absl/strings/str_cat.h"
#include "base/atomic_output_file.h"

namespace et {
namespace {

// The document around the events, as nlohmann writes an object with these
// two keys (sorted, compact).
constexpr absl::string_view kHead =
    R"({"displayTimeUnit":"ns","traceEvents":[)";
constexpr absl::string_view kTail = "]}\n";

}  // namespace

void ChromeTrace::Append(const nlohmann::json& event) {
  if (!events_.empty()) events_ += ',';
  events_ +=
      event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

absl::Status ChromeTrace::Write(const std::string& path) const {
  const absl::string_view parts[] = {kHead, events_, kTail};
  return WriteFileAtomically(path, parts);
}

}  // namespace et
