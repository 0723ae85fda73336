// Builds a Chrome / Perfetto trace (the JSON `traceEvents` format), the one
// timeline format every tool writes: et-sim's simulated run, et-viz's recorded
// times, et-replay's measured ones. Processes and tracks get names; work is "X"
// (complete) events whose times are given in ns and written in the format's
// microseconds with ns precision. Names that are not valid UTF-8 are written
// with U+FFFD, never rejected. Each event is kept as its JSON text (about 150
// bytes), not as a JSON object (about 1 KB): a 2M-node trace's timeline held
// 10 GB as objects. Not thread-safe.
#ifndef STEP_CHROME_TRACE_H_
#define STEP_CHROME_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace et {

class ChromeTrace {
 public:
  void NameProcess(int64_t pid, absl::string_view name);
  // `sort_index` >= 0 also orders the track in the viewer.
  void NameThread(int64_t pid, int64_t tid, absl::string_view name,
                  int64_t sort_index = -1);
  void AddComplete(int64_t pid, int64_t tid, absl::string_view name,
                   absl::string_view category, int64_t start_ns,
                   int64_t duration_ns,
                   nlohmann::json args = nlohmann::json::object());

  int64_t complete_events() const { return complete_events_; }
  std::string ToJson() const;
  // Written atomically (temp file + rename), without a copy of the events.
  absl::Status Write(const std::string& path) const;

 private:
  void Append(const nlohmann::json& event);

  std::string events_;  // the events' JSON, comma-separated
  int64_t complete_events_ = 0;
};

}  // namespace et

#endif  // STEP_CHROME_TRACE_H_
