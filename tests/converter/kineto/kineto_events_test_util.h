// Test-only builders of small hand-made Kineto traces for the unit tests of the
// linker stages (host_op_matcher, gpu_op_linker, sync_edges): one JSON event
// per call, in the spelling torch.profiler writes, parsed by the real
// KinetoTrace parser so each stage sees exactly what a conversion would.
// Times are whole microseconds, as in the file; the trace holds nanoseconds.
// Header-only.
#ifndef TESTS_CONVERTER_KINETO_KINETO_EVENTS_TEST_UTIL_H_
#define TESTS_CONVERTER_KINETO_KINETO_EVENTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "converter/kineto/kineto_trace.h"

namespace et::kineto::testing {

// A host event on CPU thread `tid` of process 1; `args` is the text inside the
// args object (e.g. R"("External id": 3)"), empty for none.
inline std::string HostEvent(absl::string_view cat, absl::string_view name,
                             int64_t tid, int64_t ts_us, int64_t dur_us,
                             absl::string_view args = "") {
  return absl::StrFormat(
      R"({"ph": "X", "cat": "%s", "name": "%s", "pid": 1, "tid": %d, )"
      R"("ts": %d, "dur": %d, "args": {%s}})",
      cat, name, tid, ts_us, dur_us, args);
}

inline std::string CpuOp(absl::string_view name, int64_t tid, int64_t ts_us,
                         int64_t dur_us, absl::string_view args = "") {
  return HostEvent("cpu_op", name, tid, ts_us, dur_us, args);
}

// A runtime call with its correlation id (and `External id` when ext >= 0).
inline std::string Runtime(absl::string_view name, int64_t tid, int64_t ts_us,
                           int64_t dur_us, int64_t correlation,
                           int64_t ext = -1) {
  std::string args = absl::StrFormat(R"("correlation": %d)", correlation);
  if (ext >= 0) absl::StrAppendFormat(&args, R"(, "External id": %d)", ext);
  return HostEvent("cuda_runtime", name, tid, ts_us, dur_us, args);
}

// GPU work on device 0, stream `stream`; correlation < 0 leaves it out.
inline std::string GpuEvent(absl::string_view cat, absl::string_view name,
                            int64_t stream, int64_t ts_us, int64_t dur_us,
                            int64_t correlation, absl::string_view extra = "") {
  std::string args = absl::StrFormat(R"("device": 0, "stream": %d)", stream);
  if (correlation >= 0)
    absl::StrAppendFormat(&args, R"(, "correlation": %d)", correlation);
  if (!extra.empty()) absl::StrAppend(&args, ", ", extra);
  return absl::StrFormat(
      R"({"ph": "X", "cat": "%s", "name": "%s", "pid": 0, "tid": %d, )"
      R"("ts": %d, "dur": %d, "args": {%s}})",
      cat, name, stream, ts_us, dur_us, args);
}

inline std::string Kernel(absl::string_view name, int64_t stream, int64_t ts_us,
                          int64_t dur_us, int64_t correlation,
                          absl::string_view extra = "") {
  return GpuEvent("kernel", name, stream, ts_us, dur_us, correlation, extra);
}

// CUPTI's cuda_sync record of the sync call with `correlation`: `stream` is
// the waiting (or synchronised) stream; wait_on_stream / record_correlation
// are left out when negative.
inline std::string CudaSync(absl::string_view name, int64_t stream,
                            int64_t ts_us, int64_t correlation,
                            int64_t wait_on_stream = -1,
                            int64_t record_correlation = -1) {
  std::string args = absl::StrFormat(
      R"("device": 0, "stream": %d, "correlation": %d)", stream, correlation);
  if (wait_on_stream >= 0)
    absl::StrAppendFormat(&args, R"(, "wait_on_stream": %d)", wait_on_stream);
  if (record_correlation >= 0) {
    absl::StrAppendFormat(&args, R"(, "wait_on_cuda_event_record_corr_id": %d)",
                          record_correlation);
  }
  return absl::StrFormat(
      R"({"ph": "X", "cat": "cuda_sync", "name": "%s", "pid": 0, "tid": %d, )"
      R"("ts": %d, "dur": 0, "args": {%s}})",
      name, stream, ts_us, args);
}

// Parses the events as one trace; a parse failure fails the test.
inline KinetoTrace ParseEvents(const std::vector<std::string>& events) {
  const std::string json =
      absl::StrFormat(R"({"traceEvents": [%s]})", absl::StrJoin(events, ",\n"));
  auto trace = KinetoTrace::Parse(json, "hand-made.json");
  EXPECT_TRUE(trace.ok()) << trace.status() << "\n" << json;
  return trace.ok() ? std::move(*trace) : KinetoTrace();
}

// The index of the event named `name` that starts at `ts_us`, or -1.
inline int32_t EventAt(const KinetoTrace& trace, absl::string_view name,
                       int64_t ts_us) {
  const auto& events = trace.events();
  for (size_t i = 0; i < events.size(); ++i) {
    if (trace.name(events[i].name) == name && events[i].ts_ns == ts_us * 1000)
      return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace et::kineto::testing

#endif  // TESTS_CONVERTER_KINETO_KINETO_EVENTS_TEST_UTIL_H_
