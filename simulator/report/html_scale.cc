// The Scale tab and a sweep page's overview; see html_sections.h.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"
#include "base/svg_chart.h"
#include "simulator/report/html_sections.h"
#include "simulator/report/search_report.h"

namespace et::sim {
namespace {

std::string SweepSummary(const SweepResult& sweep) {
  if (sweep.search_world > 0) {
    const SweepRow* best = BestFittingRow(sweep);
    return absl::StrFormat(
        "<h2>A layout search</h2><p id=\"sweep-summary\">%d layouts of %d "
        "ranks over %s (recorded as %s), ranked by predicted step; best that "
        "fits: %s. %s.</p><p>The Scale tab has each layout's step, its parts "
        "and memory; run et-sim --layout for one layout's full report.</p>",
        sweep.rows.size(), sweep.search_world, HtmlEscape(sweep.trace),
        HtmlEscape(sweep.recorded_layout),
        best ? HtmlEscape(best->layout.ToString()) : "none",
        HtmlEscape(SweepTruthNote(sweep)));
  }
  return absl::StrFormat(
      "<h2>A sweep</h2><p id=\"sweep-summary\">%d points of %s over %s "
      "(recorded as %s). %s.</p><p>The Scale tab has each point's step, its "
      "parts and memory; run et-sim without --sweep (--layout for one point) "
      "for one point's full report.</p>",
      sweep.rows.size(), HtmlEscape(std::string(scaleout::DimName(sweep.dim))),
      HtmlEscape(sweep.trace), HtmlEscape(sweep.recorded_layout),
      HtmlEscape(SweepTruthNote(sweep)));
}

}  // namespace

std::string ScaleSection(const SweepResult& sweep) {
  const std::string dim(scaleout::DimName(sweep.dim));
  StackedBars chart;
  chart.unit = "ms per step";
  chart.series = {{"compute", "#59a14f"},
                  {"exposed comm", "#e15759"},
                  {"other (host gaps, waiting)", "#bab0ac"}};
  HtmlTable t;
  t.id = "sweep";
  const bool search = sweep.search_world > 0;
  t.header = {search ? "rank" : dim,
              "world",
              "layout",
              "step ms",
              "measured ms",
              "error",
              "compute ms",
              "exposed comm ms",
              "other ms",
              "peak GiB",
              "collective ms per group (ranks)"};
  t.numeric = {true, true, false, true, true, true,
               true, true, true,  true, false};
  for (const SweepRow& row : sweep.rows) {
    chart.labels.push_back(PointLabel(sweep, row));
    chart.values.push_back(
        {row.compute_us / 1e3, row.exposed_comm_us / 1e3, row.other_us / 1e3});
    chart.marks.push_back(row.peak_bytes > 0 && !row.fits ? "NOFIT" : "");
    std::string groups;
    for (const SweepGroupTime& g : row.groups) {
      absl::StrAppendFormat(&groups, "%s%s(%d) %.3f",
                            groups.empty() ? "" : "  ", g.name, g.group_size,
                            g.time_us / 1e3);
    }
    t.rows.push_back(
        {absl::StrCat(row.value), absl::StrCat(row.world),
         row.layout.ToString(), absl::StrFormat("%.3f", row.step_us / 1e3),
         row.measured_us ? absl::StrFormat("%.3f", *row.measured_us / 1e3)
                         : "-",
         row.error_pct ? absl::StrFormat("%+.1f%%", *row.error_pct) : "-",
         absl::StrFormat("%.3f", row.compute_us / 1e3),
         absl::StrFormat("%.3f", row.exposed_comm_us / 1e3),
         absl::StrFormat("%.3f", row.other_us / 1e3),
         row.peak_bytes <= 0
             ? "-"
             : absl::StrFormat("%.3f%s",
                               static_cast<double>(row.peak_bytes) / (1 << 30),
                               row.fits ? "" : " NOFIT"),
         groups.empty() ? "-" : groups});
  }
  std::string out = absl::StrCat(
      "<h2>The step against ",
      search ? absl::StrCat("the layouts of ", sweep.search_world, " ranks")
             : HtmlEscape(dim),
      "</h2><p>", HtmlEscape(SweepTruthNote(sweep)),
      ". Times are per step. NOFIT marks a point whose predicted memory peak "
      "exceeds the device.</p>",
      LegendHtml(chart.series), StackedBarsSvg(chart), RenderHtmlTable(t));
  if (search) {
    std::string items;
    for (const std::string& note : sweep.search_notes)
      absl::StrAppend(&items, "<li>", HtmlEscape(note), "</li>");
    for (const SweepRow& row : sweep.rows) {
      const std::string reason = NoFitReason(row);
      if (!reason.empty()) {
        absl::StrAppend(&items, "<li class=\"nofit\">NOFIT ",
                        HtmlEscape(row.layout.ToString()), ": ",
                        HtmlEscape(reason), "</li>");
      }
    }
    for (const auto& [layout, reason] : sweep.search_refused) {
      absl::StrAppend(&items, "<li>refused ", HtmlEscape(layout), ": ",
                      HtmlEscape(reason), "</li>");
    }
    const SweepRow* best = BestFittingRow(sweep);
    absl::StrAppend(
        &out, "<ul id=\"search-notes\">", items, "</ul><p>",
        best ? absl::StrCat("Best that fits: <b>",
                            HtmlEscape(best->layout.ToString()), "</b>.")
             : std::string("None of the layouts fits."),
        "</p>");
  }
  const int64_t capacity =
      sweep.rows.empty() ? 0 : sweep.rows.front().capacity_bytes;
  if (capacity > 0) {
    absl::StrAppendFormat(
        &out,
        "<p>Memory: predicted peak of the largest rank against %.2f GiB per "
        "device.</p>",
        static_cast<double>(capacity) / (1 << 30));
  }
  return out;
}

std::string SweepOverviewSection(const SweepResult& sweep) {
  HtmlTable t;
  t.id = "sweep-points";
  t.header = {sweep.search_world > 0
                  ? std::string("rank")
                  : std::string(scaleout::DimName(sweep.dim)),
              "world", "step ms", "fits"};
  t.numeric = {true, true, true, false};
  for (const SweepRow& row : sweep.rows) {
    t.rows.push_back({absl::StrCat(row.value), absl::StrCat(row.world),
                      absl::StrFormat("%.3f", row.step_us / 1e3),
                      row.peak_bytes <= 0 ? "-"
                      : row.fits          ? "fits"
                                          : "NOFIT"});
  }
  return absl::StrCat(SweepSummary(sweep), RenderHtmlTable(t));
}

}  // namespace et::sim
