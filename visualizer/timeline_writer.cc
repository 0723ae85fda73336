// Chrome / Perfetto timeline output; see timeline_writer.h.
#include "visualizer/timeline_writer.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/file_util.h"
#include "proto/status_macros.h"
#include "visualizer/node_class.h"
#include "visualizer/text_escape.h"

namespace et::viz {
namespace {

struct TimedEvent {
  int rank;
  int track_id;
  int64_t start_ns;
  int64_t duration_ns;
  size_t trace;
  NodeIndex node;
};

// Chrome's "ts"/"dur" are microseconds; three decimals keep the nanoseconds.
std::string Micros(int64_t ns) { return absl::StrFormat("%.3f", ns / 1e3); }

void AppendEvent(const RankTrace& trace, const TimedEvent& e,
                 std::string* out) {
  const auto& node = trace.graph.node(e.node);
  absl::StrAppend(
      out, ",\n{\"ph\": \"X\", \"name\": ", JsonQuote(node.name()),
      ", \"cat\": ", JsonQuote(KindName(KindOf(node))), ", \"pid\": ", e.rank,
      ", \"tid\": ", e.track_id, ", \"ts\": ", Micros(e.start_ns),
      ", \"dur\": ", Micros(e.duration_ns), ", \"args\": {\"id\": ", node.id());
  if (int64_t bytes = BytesOf(node); bytes > 0)
    absl::StrAppend(out, ", \"bytes\": ", bytes);
  const std::string comm = CommTypeLabel(node);
  if (!comm.empty()) absl::StrAppend(out, ", \"comm_type\": ", JsonQuote(comm));
  absl::StrAppend(out, "}}");
}

}  // namespace

std::string WriteTimelineJson(const std::vector<RankTrace>& traces,
                              const std::vector<RankSelection>& selections,
                              TimelineSummary* summary) {
  *summary = TimelineSummary();
  std::string out = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
  out += "{\"ph\": \"M\", \"name\": \"et-viz\", \"pid\": 0, \"args\": {}}";
  std::vector<TimedEvent> events;
  for (size_t t = 0; t < traces.size(); ++t) {
    const RankTrace& trace = traces[t];
    std::map<Track, int>
        track_ids;  // ordered: threads, then streams, ascending
    for (NodeIndex i = 0; i < trace.graph.size(); ++i) {
      if (!selections[t].shown[i]) continue;
      const auto start = StartNs(trace.graph.node(i));
      if (!start) {
        ++summary->untimed_nodes;
        continue;
      }
      track_ids.emplace(TrackOf(trace.graph.node(i)), 0);
      events.push_back(
          {trace.rank, 0, *start, DurationNs(trace.graph.node(i)), t, i});
    }
    if (track_ids.empty()) continue;
    absl::StrAppendFormat(
        &out,
        ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, "
        "\"args\": {\"name\": \"rank %d\"}}",
        trace.rank, trace.rank);
    int next_id = 1;
    for (auto& [track, id] : track_ids) {
      id = next_id++;
      const std::string name =
          track.kind == Track::Kind::kNone ? "unassigned" : TrackName(track);
      absl::StrAppendFormat(
          &out,
          ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
          "\"tid\": %d, \"args\": {\"name\": %s}}"
          ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", "
          "\"pid\": %d, \"tid\": %d, \"args\": {\"sort_index\": %d}}",
          trace.rank, id, JsonQuote(name), trace.rank, id, id);
    }
    summary->tracks += static_cast<int64_t>(track_ids.size());
    for (TimedEvent& e : events) {
      if (e.trace == t)
        e.track_id = track_ids[TrackOf(trace.graph.node(e.node))];
    }
  }
  // Parents before children at equal start, so viewers nest them correctly.
  std::sort(events.begin(), events.end(),
            [](const TimedEvent& a, const TimedEvent& b) {
              return std::make_tuple(a.rank, a.track_id, a.start_ns,
                                     -a.duration_ns, a.node) <
                     std::make_tuple(b.rank, b.track_id, b.start_ns,
                                     -b.duration_ns, b.node);
            });
  for (const TimedEvent& e : events) AppendEvent(traces[e.trace], e, &out);
  summary->events = static_cast<int64_t>(events.size());
  out += "\n]}\n";
  return out;
}

absl::StatusOr<TimelineSummary> WriteTimelineFile(
    const std::vector<RankTrace>& traces,
    const std::vector<RankSelection>& selections, const std::string& path) {
  TimelineSummary summary;
  const std::string json = WriteTimelineJson(traces, selections, &summary);
  if (summary.events == 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: none of the %d selected nodes has a recorded "
                        "start time (start_ns or "
                        "start_time_micros); nothing to place on a timeline",
                        path, summary.untimed_nodes));
  }
  RETURN_IF_ERROR(WriteFileAtomically(path, json));
  return summary;
}

}  // namespace et::viz
