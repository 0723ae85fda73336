// The recorded trace's HTML page; see trace_report_page.h.
#include "visualizer/trace_report_page.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/html_page.h"
#include "base/svg_chart.h"
#include "model/process_group.h"
#include "visualizer/text_escape.h"

namespace et::viz {
namespace {

const char* const kColors[] = {"#4e79a7", "#f28e2b", "#e15759",
                               "#76b7b2", "#59a14f", "#edc948",
                               "#b07aa1", "#ff9da7", "#9c755f"};

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * part / whole);
}

std::string OverviewTab(const TraceReport& r) {
  std::string out = absl::StrFormat(
      "<h2>The trace, as recorded</h2><p id=\"totals\">%d nodes; recorded "
      "durations sum to %s, self time %s%s. Recorded times include the "
      "profiler's cost; et-sim --html predicts the step without it.</p>",
      r.nodes, HumanDuration(r.total_duration_ns),
      HumanDuration(r.total_self_ns),
      r.self_clamped_nodes > 0
          ? absl::StrFormat(" (%d ops shorter than their children: self "
                            "time 0)",
                            r.self_clamped_nodes)
          : "");
  StackedBars chart;
  chart.unit = "ms";
  chart.series = {{"busy", "#4e79a7"}, {"idle within its span", "#bab0ac"}};
  HtmlTable t;
  t.id = "tracks";
  t.header = {"rank", "track", "ops", "busy", "span", "busy%", "untimed ops"};
  t.numeric = {true, false, true, true, true, true, true};
  for (const TrackStats& track : r.tracks) {
    const int64_t span = track.last_end_ns - track.first_start_ns;
    t.rows.push_back({absl::StrCat(track.rank), track.track,
                      absl::StrCat(track.ops), HumanDuration(track.busy_ns),
                      HumanDuration(span), Percent(track.busy_ns, span),
                      absl::StrCat(track.untimed_ops)});
    if (chart.labels.size() < 48) {
      chart.labels.push_back(absl::StrCat(track.rank, ":", track.track));
      chart.values.push_back(
          {track.busy_ns / 1e6,
           std::max<int64_t>(0, span - track.busy_ns) / 1e6});
    }
  }
  absl::StrAppend(
      &out, "<h2>Busy time per thread, stream and process group</h2>",
      LegendHtml(chart.series), StackedBarsSvg(chart), RenderHtmlTable(t));
  return out;
}

std::string OpsTab(const TraceReport& r, int top) {
  const size_t rows =
      top > 0 ? std::min<size_t>(top, r.ops.size()) : r.ops.size();
  HtmlTable t;
  t.id = "ops";
  t.header = {"self", "self%", "total", "total%",      "calls",
              "mean", "dev",   "name",  "input shapes"};
  t.numeric = {true, true, true, true, true, true, false, false, false};
  for (size_t k = 0; k < rows; ++k) {
    const OpGroupStats& op = r.ops[k];
    t.rows.push_back(
        {HumanDuration(op.self_ns), Percent(op.self_ns, r.total_self_ns),
         HumanDuration(op.total_ns), Percent(op.total_ns, r.total_self_ns),
         absl::StrCat(op.calls),
         HumanDuration(op.calls ? op.total_ns / op.calls : 0), op.device,
         op.name, op.input_shapes});
  }
  return absl::StrCat(
      absl::StrFormat("<h2>Ops by self time, as recorded</h2><p>%d of %d "
                      "groups (--top 0 shows all); click a header to "
                      "sort.</p>",
                      rows, r.ops.size()),
      RenderHtmlTable(t));
}

std::string MemoryTab(const TraceReport& r) {
  if (r.memory.empty()) {
    return "<p id=\"memory-none\">No memory curve: the trace records no "
           "tensor sizes (a Kineto trace alone has none).</p>";
  }
  LineChart chart;
  chart.unit = "MiB";
  chart.x_label = "ops in trace order";
  HtmlTable t;
  t.id = "memory";
  t.header = {"rank",    "device",      "peak",
              "at node", "held before", "recorded peak"};
  for (size_t k = 0; k < r.memory.size(); ++k) {
    const MemoryTrack& m = r.memory[k];
    if (k < 9) {
      chart.series.push_back({absl::StrCat("rank ", m.rank), kColors[k]});
      std::vector<std::pair<double, double>> points;
      for (size_t i = 0; i < m.samples.size(); ++i)
        points.push_back({static_cast<double>(i),
                          static_cast<double>(m.samples[i]) / (1 << 20)});
      chart.points.push_back(std::move(points));
    }
    t.rows.push_back({absl::StrCat(m.rank), m.device, HumanBytes(m.peak_bytes),
                      absl::StrCat(m.peak_node_id, " (", m.peak_node_name, ")"),
                      HumanBytes(m.baseline_bytes),
                      m.recorded_peak_bytes > 0
                          ? HumanBytes(m.recorded_peak_bytes)
                          : "none recorded"});
  }
  return absl::StrCat("<h2>Allocated bytes through the trace, per rank</h2>",
                      LegendHtml(chart.series), LineChartSvg(chart),
                      "<h2>The peak</h2>", RenderHtmlTable(t));
}

std::string DistributedTab(const TraceReport& r) {
  if (r.collectives.empty()) return "<p>Communication: none.</p>";
  HtmlTable t;
  t.id = "collectives";
  t.header = {"type", "pg", "calls", "bytes", "time"};
  t.numeric = {false, false, true, true, true};
  for (const CommGroupStats& c : r.collectives) {
    t.rows.push_back({c.comm_type,
                      c.pg_name.empty() ? kAllRanksGroupName : c.pg_name,
                      absl::StrCat(c.calls), HumanBytes(c.bytes),
                      HumanDuration(c.total_ns)});
  }
  return absl::StrCat("<h2>Communication by type and process group</h2>",
                      RenderHtmlTable(t));
}

}  // namespace

std::string TraceReportPage(const TraceReport& r, int top) {
  return RenderHtmlPage(absl::StrJoin(r.inputs, ", "),
                        "et-viz report: the recorded trace",
                        {{"overview", "Overview", OverviewTab(r)},
                         {"ops", "Ops and kernels", OpsTab(r, top)},
                         {"memory", "Memory", MemoryTab(r)},
                         {"distributed", "Distributed", DistributedTab(r)}});
}

}  // namespace et::viz
