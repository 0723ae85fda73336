// Where the time goes in a trace, like a profiler's summary: ops grouped by
// name (and device, and optionally input shapes) with calls, total and self
// time, mean and share; communication by type and process group with bytes;
// busy time per track (CPU thread, GPU stream, process group channel: the node
// model's queue). Every fact is the node model's (model/node_model.h). Total
// time of an op = its inclusive
// duration (InclusiveDurationNs: attr inclusive_dur_ns, else the recorded
// duration). Self time = total minus the totals of the ops nested directly in
// it on the same device (a GPU kernel does not eat its CPU launcher's time);
// with our converter's --keep all output this equals the recorded (exclusive)
// duration. When the children add up to more than the parent (clock skew,
// overlap) self time is 0 and the node is counted in self_clamped_nodes.
// total_duration_ns is the plain sum of the recorded durations.
// Pure computation; the result is plain data.
#ifndef VISUALIZER_TRACE_REPORT_H_
#define VISUALIZER_TRACE_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "visualizer/graph_filter.h"
#include "visualizer/memory_track.h"
#include "visualizer/rank_traces.h"

namespace et::viz {

struct OpGroupStats {
  std::string name;
  std::string device;  // "cpu", "gpu"
  // Only when grouping by shapes: NodeModel::input_shapes_key, e.g.
  // "[[64,32],[32],[]]".
  std::string input_shapes;
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t self_ns = 0;
};

struct CommGroupStats {
  std::string comm_type;  // "ALL_REDUCE", "SEND", ...
  std::string pg_name;
  int64_t calls = 0;
  int64_t bytes = 0;
  int64_t total_ns = 0;
};

struct TrackStats {
  int rank = 0;
  std::string track;  // "thread 1", "stream 7", "comm group 0"
  int64_t ops = 0;
  int64_t busy_ns = 0;         // union of the timed ops' intervals
  int64_t first_start_ns = 0;  // of the timed ops
  int64_t last_end_ns = 0;
  int64_t untimed_ops = 0;  // ops without a recorded start
};

struct TraceReport {
  std::vector<std::string> inputs;
  int64_t nodes = 0;
  int64_t total_duration_ns = 0;  // sum of every selected node's duration
  int64_t total_self_ns = 0;
  int64_t self_clamped_nodes = 0;
  std::vector<OpGroupStats> ops;            // by self time, descending
  std::vector<CommGroupStats> collectives;  // by type, then process group
  std::vector<TrackStats> tracks;           // by rank, then track
  std::vector<MemoryTrack> memory;          // by rank (traces with tensors)

  // A table for people; `top` limits op rows (0 = all).
  std::string ToText(int top) const;
  // One JSON object with every row, times as integer nanoseconds.
  std::string ToJson() const;
};

struct ReportOptions {
  // Needs the traces loaded with their IO table (LoadRankTraces's
  // keep_input_shapes); without it every node's shapes read "".
  bool by_input_shapes = false;
};

TraceReport BuildReport(const std::vector<RankTrace>& traces,
                        const std::vector<RankSelection>& selections,
                        const ReportOptions& options);

// Self time of node i of `trace` (see the file comment).
int64_t SelfTimeNs(const RankTrace& trace, NodeIndex i, bool* clamped);

}  // namespace et::viz

#endif  // VISUALIZER_TRACE_REPORT_H_
