// The comparison's page; see trace_diff_page.h.
#include "visualizer/trace_diff_page.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"
#include "base/svg_chart.h"
#include "model/process_group.h"
#include "visualizer/text_escape.h"

namespace et::viz {
namespace {

std::string SignedDuration(int64_t ns) {
  return absl::StrCat(ns < 0 ? "-" : "+", HumanDuration(std::llabs(ns)));
}

std::string Change(int64_t before, int64_t after) {
  if (before <= 0) return "new";
  return absl::StrFormat("%+.1f%%", 100.0 * (after - before) / before);
}

std::string CompareTab(const TraceDiff& d, int top) {
  std::string out = absl::StrFormat(
      "<h2>Before and after, as recorded</h2><p id=\"totals\">%s &rarr; "
      "%s: nodes %d &rarr; %d; self time %s &rarr; %s (%s, %s). Recorded "
      "times, profiler included.</p>",
      HtmlEscape(d.before), HtmlEscape(d.after), d.before_nodes, d.after_nodes,
      HumanDuration(d.before_self_ns), HumanDuration(d.after_self_ns),
      SignedDuration(d.after_self_ns - d.before_self_ns),
      Change(d.before_self_ns, d.after_self_ns));
  StackedBars chart;
  chart.unit = "ms self time";
  for (const DeviceDelta& dev : d.devices)
    chart.series.push_back(
        {dev.device, dev.device == "gpu" ? "#59a14f" : "#4e79a7"});
  chart.labels = {"before", "after"};
  chart.values.resize(2);
  for (const DeviceDelta& dev : d.devices) {
    chart.values[0].push_back(dev.before_self_ns / 1e6);
    chart.values[1].push_back(dev.after_self_ns / 1e6);
  }
  absl::StrAppend(&out, LegendHtml(chart.series), StackedBarsSvg(chart));
  const size_t rows =
      top > 0 ? std::min<size_t>(top, d.ops.size()) : d.ops.size();
  HtmlTable t;
  t.id = "moved";
  t.header = {"change", "before", "after", "delta",       "delta%",
              "calls",  "dev",    "name",  "input shapes"};
  t.numeric = {false, true, true, true, true, true, false, false, false};
  for (size_t k = 0; k < rows; ++k) {
    const OpDelta& o = d.ops[k];
    t.rows.push_back(
        {o.change, HumanDuration(o.before_self_ns),
         HumanDuration(o.after_self_ns), SignedDuration(o.delta_self_ns()),
         Change(o.before_self_ns, o.after_self_ns),
         absl::StrFormat("%d -> %d", o.before_calls, o.after_calls), o.device,
         o.name, o.input_shapes});
  }
  absl::StrAppendFormat(&out,
                        "<h2>Ops whose self time moved most</h2><p>%d of %d "
                        "groups; click a header to sort.</p>",
                        rows, d.ops.size());
  absl::StrAppend(&out, RenderHtmlTable(t));
  if (d.collectives.empty()) {
    absl::StrAppend(&out, "<p>Communication: none in either.</p>");
    return out;
  }
  HtmlTable c;
  c.id = "communication";
  c.header = {"type", "pg", "calls", "bytes", "before", "after", "delta"};
  for (const CommDelta& x : d.collectives) {
    c.rows.push_back(
        {x.comm_type, x.pg_name.empty() ? kAllRanksGroupName : x.pg_name,
         absl::StrFormat("%d -> %d", x.before_calls, x.after_calls),
         absl::StrFormat("%s -> %s", HumanBytes(x.before_bytes),
                         HumanBytes(x.after_bytes)),
         HumanDuration(x.before_ns), HumanDuration(x.after_ns),
         SignedDuration(x.after_ns - x.before_ns)});
  }
  absl::StrAppend(&out, "<h2>Communication by type and process group</h2>",
                  RenderHtmlTable(c));
  return out;
}

}  // namespace

std::string TraceDiffPage(const TraceDiff& d, int top) {
  return RenderHtmlPage(absl::StrCat(d.before, " -> ", d.after),
                        "et-viz --diff: two recordings compared",
                        {{"compare", "Compare", CompareTab(d, top)}});
}

}  // namespace et::viz
