// Text and JSON renderings of TraceReport; see trace_report.h.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "model/process_group.h"
#include "visualizer/text_escape.h"
#include "visualizer/trace_report.h"

namespace et::viz {
namespace {

// Op names can be long (aten schemas, Triton kernels): 60 columns keeps a row
// under ~130 characters, and the full name is in --json.
constexpr size_t kNameColumn = 60;

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * part / whole);
}

void AppendOps(const TraceReport& r, int top, std::string* out) {
  const size_t rows =
      top > 0 ? std::min<size_t>(top, r.ops.size()) : r.ops.size();
  // Recorded times, profiler included: et-sim's default (--host-time
  // unprofiled) takes the profiler's cost out, so the same op reads shorter
  // there.
  absl::StrAppendFormat(out,
                        "\nOps by self time, as recorded (profiler included; "
                        "et-sim's unprofiled times leave its cost out) (%d of "
                        "%d groups%s)\n",
                        rows, r.ops.size(),
                        rows < r.ops.size() ? "; --top 0 shows all" : "");
  absl::StrAppendFormat(out, "  %-10s %6s  %-10s %6s  %7s  %-10s %-4s  %s\n",
                        "self", "self%", "total", "total%", "calls", "mean",
                        "dev", "name");
  for (size_t k = 0; k < rows; ++k) {
    const OpGroupStats& op = r.ops[k];
    std::string name = Abbreviate(op.name, kNameColumn);
    if (!op.input_shapes.empty()) {
      absl::StrAppend(&name, " ", Abbreviate(op.input_shapes, kNameColumn));
    }
    absl::StrAppendFormat(
        out, "  %-10s %6s  %-10s %6s  %7d  %-10s %-4s  %s\n",
        HumanDuration(op.self_ns), Percent(op.self_ns, r.total_self_ns),
        HumanDuration(op.total_ns), Percent(op.total_ns, r.total_self_ns),
        op.calls, HumanDuration(op.calls ? op.total_ns / op.calls : 0),
        op.device.substr(0, 4), name);
  }
}

void AppendCollectives(const TraceReport& r, std::string* out) {
  if (r.collectives.empty()) {
    absl::StrAppend(out, "\nCommunication: none\n");
    return;
  }
  absl::StrAppend(out, "\nCommunication by type and process group\n");
  absl::StrAppendFormat(out, "  %-16s %-10s %7s  %-11s %-10s\n", "type", "pg",
                        "calls", "bytes", "time");
  for (const CommGroupStats& c : r.collectives) {
    absl::StrAppendFormat(out, "  %-16s %-10s %7d  %-11s %-10s\n", c.comm_type,
                          c.pg_name.empty() ? kAllRanksGroupName : c.pg_name,
                          c.calls, HumanBytes(c.bytes),
                          HumanDuration(c.total_ns));
  }
}

void AppendTracks(const TraceReport& r, std::string* out) {
  absl::StrAppend(out, "\nBusy time per thread, stream and process group\n");
  // 12 columns fit "thread 1234" and "comm group 3"; longer names ("comm
  // group all ranks") widen the column rather than push the rest of the row.
  int width = 12;
  for (const TrackStats& t : r.tracks) {
    width = std::max(width, static_cast<int>(t.track.size()));
  }
  absl::StrAppendFormat(out, "  %4s  %-*s %7s  %-10s %-10s %6s  %s\n", "rank",
                        width, "track", "ops", "busy", "span", "busy%",
                        "untimed ops");
  for (const TrackStats& t : r.tracks) {
    const int64_t span = t.last_end_ns - t.first_start_ns;
    absl::StrAppendFormat(out, "  %4d  %-*s %7d  %-10s %-10s %6s  %d\n", t.rank,
                          width, t.track, t.ops, HumanDuration(t.busy_ns),
                          HumanDuration(span), Percent(t.busy_ns, span),
                          t.untimed_ops);
  }
}

}  // namespace

std::string TraceReport::ToText(int top) const {
  std::string out = absl::StrFormat(
      "et-viz report: %s\n%d nodes; recorded durations sum to %s, self time %s",
      absl::StrJoin(inputs, ", "), nodes, HumanDuration(total_duration_ns),
      HumanDuration(total_self_ns));
  if (self_clamped_nodes > 0) {
    absl::StrAppendFormat(&out,
                          " (%d ops shorter than their children: self time 0)",
                          self_clamped_nodes);
  }
  out += "\n";
  AppendOps(*this, top, &out);
  AppendCollectives(*this, &out);
  AppendTracks(*this, &out);
  out += FormatMemoryTracks(memory);
  return out;
}

std::string TraceReport::ToJson() const {
  std::vector<std::string> input_strings;
  for (const std::string& in : inputs) input_strings.push_back(JsonQuote(in));
  std::string out = absl::StrFormat(
      "{\"inputs\": [%s], \"nodes\": %d, \"total_duration_ns\": %d, "
      "\"total_self_ns\": %d, \"self_clamped_nodes\": %d,\n \"ops\": [",
      absl::StrJoin(input_strings, ", "), nodes, total_duration_ns,
      total_self_ns, self_clamped_nodes);
  for (size_t k = 0; k < ops.size(); ++k) {
    const OpGroupStats& op = ops[k];
    absl::StrAppendFormat(
        &out,
        "%s\n  {\"name\": %s, \"device\": %s, \"input_shapes\": %s, \"calls\": "
        "%d, "
        "\"total_ns\": %d, \"self_ns\": %d, \"mean_ns\": %d, \"self_share\": "
        "%.6f}",
        k ? "," : "", JsonQuote(op.name), JsonQuote(op.device),
        JsonQuote(op.input_shapes), op.calls, op.total_ns, op.self_ns,
        op.calls ? op.total_ns / op.calls : 0,
        total_self_ns > 0 ? static_cast<double>(op.self_ns) / total_self_ns
                          : 0.0);
  }
  out += "],\n \"collectives\": [";
  for (size_t k = 0; k < collectives.size(); ++k) {
    const CommGroupStats& c = collectives[k];
    absl::StrAppendFormat(
        &out,
        "%s\n  {\"comm_type\": %s, \"pg_name\": %s, \"calls\": %d, "
        "\"bytes\": %d, \"total_ns\": %d}",
        k ? "," : "", JsonQuote(c.comm_type), JsonQuote(c.pg_name), c.calls,
        c.bytes, c.total_ns);
  }
  out += "],\n \"tracks\": [";
  for (size_t k = 0; k < tracks.size(); ++k) {
    const TrackStats& t = tracks[k];
    absl::StrAppendFormat(
        &out,
        "%s\n  {\"rank\": %d, \"track\": %s, \"ops\": %d, \"busy_ns\": %d, "
        "\"first_start_ns\": %d, \"last_end_ns\": %d, \"untimed_ops\": %d}",
        k ? "," : "", t.rank, JsonQuote(t.track), t.ops, t.busy_ns,
        t.first_start_ns, t.last_end_ns, t.untimed_ops);
  }
  out += "],\n \"memory\": [";
  for (size_t k = 0; k < memory.size(); ++k) {
    const MemoryTrack& m = memory[k];
    absl::StrAppendFormat(
        &out,
        "%s\n  {\"rank\": %d, \"device\": %s, \"peak_allocated_bytes\": %d, "
        "\"baseline_bytes\": %d, \"peak_node\": %d, \"peak_node_name\": %s, "
        "\"recorded_peak_bytes\": %d, \"samples\": [%s]}",
        k ? "," : "", m.rank, JsonQuote(m.device), m.peak_bytes,
        m.baseline_bytes, m.peak_node_id, JsonQuote(m.peak_node_name),
        m.recorded_peak_bytes, absl::StrJoin(m.samples, ", "));
  }
  out += "]}\n";
  return out;
}

}  // namespace et::viz
