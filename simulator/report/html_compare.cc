// The Compare tab (et-sim A --compare B --html); see html_sections.h. Every
// number is formatted as FormatComparisonText prints it.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"
#include "base/svg_chart.h"
#include "simulator/report/html_sections.h"
#include "simulator/report/kernel_table.h"

namespace et::sim {
namespace {

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f", ns / 1e6); }
std::string SignedMs(int64_t ns) { return absl::StrFormat("%+.3f", ns / 1e6); }

std::string PartsHtml(const ReportComparison& c) {
  StackedBars chart;
  chart.unit = "ms per step";
  chart.labels = {"before", "after"};
  chart.values.resize(2);
  HtmlTable t;
  t.id = "compare-parts";
  t.header = {"part", "before ms", "after ms", "change ms", "change"};
  t.numeric = {false, true, true, true, true};
  for (int k = 0; k < kStepParts; ++k) {
    const int64_t a = c.a_part_ns[k], b = c.b_part_ns[k];
    const char* name = StepPartName(static_cast<StepPart>(k));
    chart.series.push_back({name, kStepPartColors[k]});
    chart.values[0].push_back(a / 1e6);
    chart.values[1].push_back(b / 1e6);
    t.rows.push_back({name, Ms(a), Ms(b), SignedMs(b - a), ChangeText(a, b)});
  }
  return absl::StrCat(
      "<h2>Each step by part, before and after</h2><p class=\"why\">The "
      "slowest rank's mean per step; the parts are the Overview's.</p>",
      LegendHtml(chart.series), StackedBarsSvg(chart), RenderHtmlTable(t));
}

std::string OpsHtml(const ReportComparison& c, size_t max_rows) {
  HtmlTable t;
  t.id = "compare-ops";
  t.header = {"op",          "change",   "before calls", "before ms",
              "after calls", "after ms", "change ms"};
  t.numeric = {false, false, true, true, true, true, true};
  for (size_t i = 0; i < c.ops.size() && i < max_rows; ++i) {
    const OpMove& m = c.ops[i];
    t.rows.push_back({PageName(m.name), m.change, absl::StrCat(m.a_calls),
                      Ms(m.a_ns), absl::StrCat(m.b_calls), Ms(m.b_ns),
                      SignedMs(m.b_ns - m.a_ns)});
  }
  return absl::StrCat(
      "<h2>Ops that moved most</h2><p class=\"why\">The slowest rank's op "
      "groups by name, as simulated, by how far their time moved; appeared "
      "and vanished ones included. Click a header to sort.</p>",
      RenderHtmlTable(t));
}

std::string CollectivesHtml(const ReportComparison& c) {
  if (c.collectives.empty()) return "<p>No collective ran in either.</p>";
  HtmlTable t;
  t.id = "compare-collectives";
  t.header = {"collective",  "group",    "before calls", "before ms",
              "after calls", "after ms", "change ms"};
  t.numeric = {false, false, true, true, true, true, true};
  for (const CollectiveMove& m : c.collectives) {
    t.rows.push_back({m.type, m.group, absl::StrCat(m.a_calls), Ms(m.a_ns),
                      absl::StrCat(m.b_calls), Ms(m.b_ns),
                      SignedMs(m.b_ns - m.a_ns)});
  }
  return absl::StrCat("<h2>Collectives, before and after</h2>",
                      RenderHtmlTable(t));
}

}  // namespace

std::string CompareSection(const ReportComparison& c, size_t max_rows) {
  std::string out = absl::StrFormat(
      "<h2>Before and after, as simulated with the same flags</h2><p>Before: "
      "<code>%s</code>; after: <code>%s</code>. The change is after against "
      "before.</p><p id=\"compare-step\">Step: %.3f ms &rarr; %.3f ms "
      "(%s)</p><p id=\"compare-bound-before\">Bound before: %s</p><p "
      "id=\"compare-bound-after\">Bound after: %s</p>",
      HtmlEscape(c.a), HtmlEscape(c.b), c.a_step_us / 1e3, c.b_step_us / 1e3,
      ChangeText(std::llround(c.a_step_us * 1e3),
                 std::llround(c.b_step_us * 1e3)),
      HtmlEscape(c.a_bound), HtmlEscape(c.b_bound));
  absl::StrAppend(&out, PartsHtml(c), OpsHtml(c, max_rows), CollectivesHtml(c));
  return out;
}

}  // namespace et::sim
