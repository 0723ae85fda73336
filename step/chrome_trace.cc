// Chrome / Perfetto trace building; see chrome_trace.h.
#include "step/chrome_trace.h"

#include "base/atomic_output_file.h"

namespace et {

void ChromeTrace::NameProcess(int64_t pid, absl::string_view name) {
  events_.push_back({{"ph", "M"},
                     {"name", "process_name"},
                     {"pid", pid},
                     {"args", {{"name", std::string(name)}}}});
}

void ChromeTrace::NameThread(int64_t pid, int64_t tid, absl::string_view name,
                             int64_t sort_index) {
  events_.push_back({{"ph", "M"},
                     {"name", "thread_name"},
                     {"pid", pid},
                     {"tid", tid},
                     {"args", {{"name", std::string(name)}}}});
  if (sort_index >= 0) {
    events_.push_back({{"ph", "M"},
                       {"name", "thread_sort_index"},
                       {"pid", pid},
                       {"tid", tid},
                       {"args", {{"sort_index", sort_index}}}});
  }
}

void ChromeTrace::AddComplete(int64_t pid, int64_t tid, absl::string_view name,
                              absl::string_view category, int64_t start_ns,
                              int64_t duration_ns, nlohmann::json args) {
  events_.push_back({{"ph", "X"},
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
  const nlohmann::json root = {{"displayTimeUnit", "ns"},
                               {"traceEvents", events_}};
  return root.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

absl::Status ChromeTrace::Write(const std::string& path) const {
  return WriteFileAtomically(path, ToJson());
}

}  // namespace et
