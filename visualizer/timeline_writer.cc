// Chrome / Perfetto timeline output; see timeline_writer.h.
#include "visualizer/timeline_writer.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_output_file.h"
#include "base/status_macros.h"
#include "step/chrome_trace.h"
#include "visualizer/node_class.h"

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

void AddEvent(const RankTrace& trace, const TimedEvent& e, ChromeTrace* out) {
  const NodeModel& model = trace.model;
  nlohmann::json args = {{"id", model.id(e.node)}};
  if (int64_t bytes = BytesOf(model, e.node); bytes > 0) args["bytes"] = bytes;
  const std::string comm = CommTypeLabel(model, e.node);
  if (!comm.empty()) args["comm_type"] = comm;
  out->AddComplete(e.rank, e.track_id, model.name(e.node),
                   KindName(KindOf(model, e.node)), e.start_ns, e.duration_ns,
                   std::move(args));
}

}  // namespace

std::string WriteTimelineJson(const std::vector<RankTrace>& traces,
                              const std::vector<RankSelection>& selections,
                              TimelineStats* summary) {
  *summary = TimelineStats();
  ChromeTrace out;
  std::vector<TimedEvent> events;
  for (size_t t = 0; t < traces.size(); ++t) {
    const RankTrace& trace = traces[t];
    const NodeModel& model = trace.model;
    // Ordered: threads, then streams, then process group channels, ascending.
    std::map<Queue, int> track_ids;
    for (NodeIndex i = 0; i < model.size(); ++i) {
      if (!selections[t].shown[i]) continue;
      const auto start = StartNs(model, i);
      if (!start) {
        ++summary->untimed_nodes;
        continue;
      }
      track_ids.emplace(model.queue(i), 0);
      events.push_back({trace.rank, 0, *start, DurationNs(model, i), t, i});
    }
    if (track_ids.empty()) continue;
    out.NameProcess(trace.rank, absl::StrCat("rank ", trace.rank));
    int next_id = 1;
    for (auto& [track, id] : track_ids) {
      id = next_id++;
      out.NameThread(trace.rank, id, QueueName(model, track), id);
    }
    summary->tracks += static_cast<int64_t>(track_ids.size());
    for (TimedEvent& e : events) {
      if (e.trace == t) e.track_id = track_ids[model.queue(e.node)];
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
  for (const TimedEvent& e : events) AddEvent(traces[e.trace], e, &out);
  summary->events = out.complete_events();
  return out.ToJson();
}

absl::StatusOr<TimelineStats> WriteTimelineFile(
    const std::vector<RankTrace>& traces,
    const std::vector<RankSelection>& selections, const std::string& path) {
  TimelineStats summary;
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
