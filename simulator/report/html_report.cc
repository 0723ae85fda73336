// The page's tabs put together; see html_report.h.
#include "simulator/report/html_report.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_output_file.h"
#include "base/html_page.h"
#include "simulator/report/html_sections.h"
#include "simulator/report/sampled_timeline.h"

namespace et::sim {
namespace {

std::string TimelineSection(const HtmlReportInput& in) {
  std::string out;
  if (in.timeline_path.empty()) {
    out =
        "<p>The full run, every op: et-sim --timeline FILE.json writes it "
        "for Perfetto (ui.perfetto.dev) or chrome://tracing.</p>";
  } else {
    out = absl::StrCat("<p>The full run, every op: <code id=\"perfetto\">",
                       HtmlEscape(in.timeline_path),
                       "</code> (open it in Perfetto, ui.perfetto.dev, or "
                       "chrome://tracing).</p>");
  }
  if (in.classes && in.result) {
    absl::StrAppend(
        &out, SampledTimelineHtml(*in.classes, *in.result, in.report->step_ns));
  }
  return out;
}

std::string Subtitle(const HtmlReportInput& in) {
  if (!in.report) return "et-sim sweep";
  const Report& r = *in.report;
  std::string out = absl::StrFormat("et-sim: %d ranks (%d simulated), %d steps",
                                    r.world_size, r.classes, r.step.steps);
  if (!r.topology.empty())
    absl::StrAppend(&out, "; topology ", r.topology, " (", r.topology_reason,
                    ")");
  if (!r.cluster.empty()) absl::StrAppend(&out, "; ", r.cluster);
  return out;
}

}  // namespace

std::string HtmlReportPage(const HtmlReportInput& in) {
  std::vector<HtmlTab> tabs;
  if (in.report) {
    const Report& r = *in.report;
    tabs.push_back({"overview", "Overview", OverviewSection(r)});
    tabs.push_back({"ops", "Ops and kernels", OpsSection(r, in.max_rows)});
    tabs.push_back({"timeline", "Timeline", TimelineSection(in)});
    tabs.push_back({"memory", "Memory", MemorySection(r)});
    tabs.push_back(
        {"distributed", "Distributed", DistributedSection(r, in.max_rows)});
    if (in.comparison)
      tabs.push_back(
          {"compare", "Compare", CompareSection(*in.comparison, in.max_rows)});
  } else if (in.sweep) {
    tabs.push_back({"overview", "Overview", SweepOverviewSection(*in.sweep)});
  }
  if (in.sweep) tabs.push_back({"scale", "Scale", ScaleSection(*in.sweep)});
  return RenderHtmlPage(in.trace, Subtitle(in), tabs);
}

absl::Status WriteHtmlReport(const HtmlReportInput& input,
                             const std::string& path) {
  return WriteFileAtomically(path, HtmlReportPage(input));
}

}  // namespace et::sim
