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

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace et {

class ChromeTrace {
 public:
  ChromeTrace() = default;
  // Streams the trace to a temporary file beside `path` as it grows (for a
  // timeline of millions of ops: held whole, 4M events took 0.5 GB more);
  // Write(path) then finishes and publishes it. An error writing is kept and
  // returned by Write.
  // `spill_bytes`: the buffered text written at once (a test makes it small).
  explicit ChromeTrace(const std::string& path,
                       size_t spill_bytes = size_t{16} << 20);
  ~ChromeTrace();
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;

  void NameProcess(int64_t pid, absl::string_view name);
  // `sort_index` >= 0 also orders the track in the viewer.
  void NameThread(int64_t pid, int64_t tid, absl::string_view name,
                  int64_t sort_index = -1);
  void AddComplete(int64_t pid, int64_t tid, absl::string_view name,
                   absl::string_view category, int64_t start_ns,
                   int64_t duration_ns,
                   nlohmann::json args = nlohmann::json::object());

  int64_t complete_events() const { return complete_events_; }
  // The whole document; not for a streamed trace (its events are on disk).
  std::string ToJson() const;
  // Written atomically (temp file + rename), without a copy of the events. A
  // streamed trace must be written to the path it was made for.
  absl::Status Write(const std::string& path);

 private:
  void Append(const nlohmann::json& event);
  // Streamed: moves the buffered events to the temp file.
  void Spill();

  std::string events_;  // the events' JSON not yet on disk, comma-separated
  bool any_event_ = false;
  int64_t complete_events_ = 0;
  std::string stream_path_, stream_tmp_;  // empty: held in memory
  size_t spill_bytes_ = 0;
  std::FILE* stream_ = nullptr;
  absl::Status stream_status_;
};

}  // namespace et

#endif  // STEP_CHROME_TRACE_H_
