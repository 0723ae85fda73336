// Computing the trace report; see trace_report.h (formatting is in
// trace_report_format.cc).
#include "visualizer/trace_report.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "visualizer/node_class.h"

namespace et::viz {
namespace {

using OpKey =
    std::tuple<std::string, std::string, std::string>;  // name, device, shapes

// Busy time of a set of intervals: the length of their union.
int64_t UnionLength(std::vector<std::pair<int64_t, int64_t>>* intervals) {
  std::sort(intervals->begin(), intervals->end());
  int64_t busy = 0;
  int64_t cur_start = 0;
  int64_t cur_end = INT64_MIN;
  for (const auto& [start, end] : *intervals) {
    if (start > cur_end) {
      if (cur_end != INT64_MIN) busy += cur_end - cur_start;
      cur_start = start;
      cur_end = end;
    } else {
      cur_end = std::max(cur_end, end);
    }
  }
  if (cur_end != INT64_MIN) busy += cur_end - cur_start;
  return busy;
}

struct TrackAccumulator {
  int64_t ops = 0;
  int64_t untimed = 0;
  std::vector<std::pair<int64_t, int64_t>> intervals;
};

}  // namespace

int64_t SelfTimeNs(const RankTrace& trace, NodeIndex i, bool* clamped) {
  const NodeModel& model = trace.model;
  const Device device = DeviceOf(model, i);
  int64_t self = InclusiveDurationNs(model, i);
  for (NodeIndex child : trace.hierarchy.children(i)) {
    if (DeviceOf(model, child) == device) {
      self -= InclusiveDurationNs(model, child);
    }
  }
  *clamped = self < 0;
  return std::max<int64_t>(self, 0);
}

TraceReport BuildReport(const std::vector<RankTrace>& traces,
                        const std::vector<RankSelection>& selections,
                        const ReportOptions& options) {
  TraceReport report;
  std::map<OpKey, OpGroupStats> ops;
  std::map<std::pair<std::string, std::string>, CommGroupStats> comms;
  std::map<std::pair<int, Queue>, TrackAccumulator> tracks;
  std::map<std::pair<int, Queue>, std::string> track_names;  // by the same key
  for (size_t t = 0; t < traces.size(); ++t) {
    const RankTrace& trace = traces[t];
    report.inputs.push_back(trace.path);
    const NodeModel& model = trace.model;
    for (NodeIndex i = 0; i < model.size(); ++i) {
      if (!selections[t].shown[i]) continue;
      const int64_t dur = DurationNs(model, i);
      const int64_t inclusive = InclusiveDurationNs(model, i);
      bool clamped = false;
      const int64_t self = SelfTimeNs(trace, i, &clamped);
      ++report.nodes;
      report.total_duration_ns += dur;
      report.total_self_ns += self;
      report.self_clamped_nodes += clamped ? 1 : 0;

      // The shapes as the model keys them (one canonical text), present when
      // the traces were loaded with their IO table (LoadRankTraces).
      OpKey key{std::string(model.name(i)),
                std::string(DeviceName(DeviceOf(model, i))),
                options.by_input_shapes ? std::string(model.input_shapes_key(i))
                                        : ""};
      OpGroupStats& op = ops[key];
      ++op.calls;
      op.total_ns += inclusive;
      op.self_ns += self;

      const std::string comm_type = CommTypeLabel(model, i);
      if (!comm_type.empty()) {
        const CommSpec* spec = model.comm(i);
        const std::string pg =
            spec == nullptr ? "" : std::string(model.string(spec->pg_name));
        CommGroupStats& c = comms[{comm_type, pg}];
        ++c.calls;
        c.bytes += BytesOf(model, i);
        c.total_ns += inclusive;
      }

      TrackAccumulator& acc = tracks[{trace.rank, model.queue(i)}];
      track_names.try_emplace({trace.rank, model.queue(i)},
                              QueueName(model, model.queue(i)));
      ++acc.ops;
      if (auto start = StartNs(model, i)) {
        acc.intervals.push_back({*start, *start + inclusive});
      } else {
        ++acc.untimed;
      }
    }
  }
  for (auto& [key, op] : ops) {
    std::tie(op.name, op.device, op.input_shapes) = key;
    report.ops.push_back(std::move(op));
  }
  std::stable_sort(report.ops.begin(), report.ops.end(),
                   [](const OpGroupStats& a, const OpGroupStats& b) {
                     return a.self_ns != b.self_ns ? a.self_ns > b.self_ns
                                                   : a.total_ns > b.total_ns;
                   });
  for (auto& [key, c] : comms) {
    std::tie(c.comm_type, c.pg_name) = key;
    report.collectives.push_back(std::move(c));
  }
  for (auto& [key, acc] : tracks) {
    TrackStats s;
    s.rank = key.first;
    s.track = track_names[key];
    s.ops = acc.ops;
    s.untimed_ops = acc.untimed;
    if (!acc.intervals.empty()) {
      s.first_start_ns = INT64_MAX;
      s.last_end_ns = INT64_MIN;
      for (const auto& [start, end] : acc.intervals) {
        s.first_start_ns = std::min(s.first_start_ns, start);
        s.last_end_ns = std::max(s.last_end_ns, end);
      }
      s.busy_ns = UnionLength(&acc.intervals);
    }
    report.tracks.push_back(std::move(s));
  }
  report.memory = BuildMemoryTracks(traces);
  return report;
}

}  // namespace et::viz
