// et-viz --diff BEFORE AFTER: two recordings of one program compared, as a
// profiling loop needs (baseline, change, measure the real gain): the total
// and per-device self time side by side, the ops that appeared, vanished or
// whose self time moved most (grouped by name and device, and input shapes
// with --by-shape), and the communication by type and process group. Built
// from the two traces' TraceReports; text and JSON. Plain data.
#ifndef VISUALIZER_TRACE_DIFF_H_
#define VISUALIZER_TRACE_DIFF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "visualizer/trace_report.h"

namespace et::viz {

// One op group in both traces (calls 0 where it is absent).
struct OpDelta {
  std::string name, device, input_shapes;
  int64_t before_calls = 0, after_calls = 0;
  int64_t before_self_ns = 0, after_self_ns = 0;
  int64_t before_total_ns = 0, after_total_ns = 0;
  // "appeared", "vanished" or "changed".
  const char* change = "changed";
  int64_t delta_self_ns() const { return after_self_ns - before_self_ns; }
};

struct CommDelta {
  std::string comm_type, pg_name;
  int64_t before_calls = 0, after_calls = 0;
  int64_t before_bytes = 0, after_bytes = 0;
  int64_t before_ns = 0, after_ns = 0;
};

// A device's self time in both ("cpu", "gpu").
struct DeviceDelta {
  std::string device;
  int64_t before_self_ns = 0, after_self_ns = 0;
};

struct TraceDiff {
  std::string before, after;  // the inputs, as given
  int64_t before_nodes = 0, after_nodes = 0;
  int64_t before_self_ns = 0, after_self_ns = 0;
  std::vector<DeviceDelta> devices;
  std::vector<OpDelta> ops;            // by |self time moved|, largest first
  std::vector<CommDelta> collectives;  // by type, then process group
};

TraceDiff DiffReports(const TraceReport& before, const TraceReport& after);

// `top` limits the op rows (0 = all).
std::string FormatDiffText(const TraceDiff& diff, int top);
std::string FormatDiffJson(const TraceDiff& diff);

}  // namespace et::viz

#endif  // VISUALIZER_TRACE_DIFF_H_
