// The Overview tab: the step, its parts, the critical path, recommendations
// and notes; see html_sections.h.
#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"
#include "base/svg_chart.h"
#include "simulator/report/html_sections.h"
#include "simulator/report/step_breakdown.h"

namespace et::sim {
namespace {

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f", ns / 1e6); }

std::string Card(const std::string& id, const std::string& label,
                 const std::string& figure, const std::string& why) {
  return absl::StrCat(
      "<div class=\"card\" id=\"", id, "\"><div class=\"label\">",
      HtmlEscape(label), "</div><div class=\"figure\">", HtmlEscape(figure),
      "</div><div class=\"why\">", HtmlEscape(why), "</div></div>");
}

// The predicted step, the truth and the error, as FormatStepReport says them.
std::string StepCards(const StepReport& s) {
  std::string out = "<div class=\"cards\">";
  absl::StrAppend(
      &out, Card("predicted", "predicted step",
                 absl::StrFormat("%.3f ms", s.predicted_us / 1e3),
                 absl::StrFormat("host time %s; slowest rank, mean of %d",
                                 HostTimeModeName(s.host_time), s.steps)));
  if (s.measured_us) {
    std::string why = absl::StrCat("source: ", s.measured_source);
    if (s.measured_fastest_block_us) {
      absl::StrAppendFormat(&why, "; timing blocks %.3f-%.3f ms",
                            *s.measured_fastest_block_us / 1e3,
                            *s.measured_slowest_block_us / 1e3);
    }
    absl::StrAppend(&out,
                    Card("measured", "measured step",
                         absl::StrFormat("%.3f ms", *s.measured_us / 1e3), why),
                    Card("error", "error of the prediction",
                         absl::StrFormat("%+.1f%%", s.error_pct.value_or(0)),
                         "predicted against measured"));
    if (s.measured_after_us) {
      absl::StrAppend(
          &out, Card("error-after", "against the truth timed again after",
                     absl::StrFormat("%+.1f%%", s.error_after_pct.value_or(0)),
                     absl::StrFormat("timed again after the recording %.3f ms",
                                     *s.measured_after_us / 1e3)));
    }
  } else {
    // Why there is none: the step report's notes say (a scaled device, a
    // layout that was not run, a trace without a truth).
    absl::StrAppend(&out,
                    Card("measured", "measured step", "none",
                         s.notes.empty() ? "no measured step to compare with"
                                         : "no measured step to compare "
                                           "with: see the notes below"));
  }
  absl::StrAppend(&out, "</div>\n");
  return out;
}

// The per-step parts as stacked bars and as the text's table.
std::string BreakdownHtml(const std::vector<StepBreakdown>& steps) {
  if (steps.empty()) return "";
  StackedBars chart;
  chart.unit = "ms";
  for (int k = 0; k < kStepParts; ++k)
    chart.series.push_back(
        {StepPartName(static_cast<StepPart>(k)), kStepPartColors[k]});
  HtmlTable table;
  table.id = "breakdown";
  table.header = {"step", "step_ms"};
  for (int k = 0; k < kStepParts; ++k)
    table.header.push_back(
        absl::StrCat(StepPartName(static_cast<StepPart>(k)), " ms"));
  table.numeric.assign(table.header.size(), true);
  for (size_t i = 0; i < steps.size(); ++i) {
    chart.labels.push_back(absl::StrCat("step ", i));
    std::vector<double> bar;
    std::vector<std::string> row = {absl::StrCat(i), Ms(steps[i].step_ns)};
    for (int k = 0; k < kStepParts; ++k) {
      bar.push_back(steps[i].part_ns[k] / 1e6);
      row.push_back(Ms(steps[i].part_ns[k]));
    }
    chart.values.push_back(std::move(bar));
    table.rows.push_back(std::move(row));
  }
  return absl::StrCat(
      "<h2>Each step by part (slowest rank)</h2><p class=\"why\">Each "
      "instant of a step goes to the first part that holds it, in the "
      "legend's order; the parts add up to the step.</p>",
      LegendHtml(chart.series), StackedBarsSvg(chart), RenderHtmlTable(table));
}

// The per-rank step times and each step's bound, as the text's step lines.
std::string RankStepsHtml(const StepReport& s, size_t max_rows) {
  HtmlTable table;
  table.id = "rank-steps";
  table.header = {"ranks", "steps ms", "measured ms", "error"};
  table.numeric = {false, false, true, true};
  HtmlTable bounds;
  bounds.id = "step-bounds";
  bounds.header = {"ranks", "step", "bound"};
  bounds.numeric = {false, true, false};
  for (size_t k = 0; k < s.ranks.size() && k < max_rows; ++k) {
    const RankSteps& r = s.ranks[k];
    std::string steps;
    for (double us : r.step_us)
      absl::StrAppendFormat(&steps, "%s%.3f", steps.empty() ? "" : " ",
                            us / 1e3);
    table.rows.push_back(
        {RanksLabel(r.ranks), steps,
         r.measured.us ? absl::StrFormat("%.3f", *r.measured.us / 1e3) : "-",
         r.measured.us ? absl::StrFormat("%+.1f%%", r.error_pct.value_or(0))
                       : "-"});
    for (size_t i = 0; i < r.bounds.size(); ++i) {
      bounds.rows.push_back(
          {RanksLabel(r.ranks), absl::StrCat(i), FormatStepBound(r.bounds[i])});
    }
  }
  return absl::StrCat("<h2>Per rank</h2>", RenderHtmlTable(table),
                      bounds.rows.empty() ? "" : RenderHtmlTable(bounds));
}

// The critical path's busy time and the rest by cause, as the text has them.
std::string CriticalPathHtml(const Report& r) {
  const int64_t rest =
      std::max<int64_t>(0, r.step_ns - r.critical_path_busy_ns);
  const CriticalWaits& w = r.critical_path_waits;
  const int64_t named = w.host_gap_ns + w.gpu_gap_ns + w.rendezvous_ns;
  HtmlTable table;
  table.id = "critical-causes";
  table.header = {"what", "ms"};
  table.numeric = {false, true};
  table.rows = {
      {"ops on the path (busy)", Ms(r.critical_path_busy_ns)},
      {"host time between ops (Python, dispatch: the host's own work)",
       Ms(w.host_gap_ns)},
      {"GPU stream gaps between kernels", Ms(w.gpu_gap_ns)},
      {"collectives waiting for other ranks", Ms(w.rendezvous_ns)},
      {"waiting for a dependency or a busy thread/stream",
       Ms(std::max<int64_t>(0, rest - named))}};
  std::vector<CriticalStep> longest = r.critical_path;
  std::stable_sort(longest.begin(), longest.end(),
                   [](const auto& a, const auto& b) {
                     return a.duration_ns > b.duration_ns;
                   });
  HtmlTable ops;
  ops.id = "critical-ops";
  ops.header = {"node", "op", "start ms", "dur us"};
  ops.numeric = {true, false, true, true};
  for (size_t i = 0; i < longest.size() && i < 20; ++i) {
    ops.rows.push_back({absl::StrCat(longest[i].node_id), longest[i].name,
                        Ms(longest[i].start_ns),
                        absl::StrFormat("%.2f", longest[i].duration_ns / 1e3)});
  }
  return absl::StrCat(
      absl::StrFormat(
          "<h2>Critical path</h2><p id=\"critical-summary\">The chain of "
          "dependent ops that ends "
          "last, on the slowest rank: %d ops, busy %s ms of the %s ms graph "
          "(%d steps).</p>",
          r.critical_path.size(), Ms(r.critical_path_busy_ns), Ms(r.step_ns),
          r.step.steps),
      RenderHtmlTable(table), "<p>Its longest ops:</p>", RenderHtmlTable(ops));
}

std::string NotesHtml(const Report& r) {
  std::vector<std::string> notes = r.step.notes;
  notes.insert(notes.end(), r.notes.begin(), r.notes.end());
  if (notes.empty()) return "";
  std::string out = "<h2>Notes</h2><ul class=\"notes\" id=\"notes\">";
  for (const std::string& n : notes)
    absl::StrAppend(&out, "<li>", HtmlEscape(n), "</li>");
  absl::StrAppend(&out, "</ul>\n");
  return out;
}

}  // namespace

std::string OverviewSection(const Report& r) {
  std::string out = absl::StrCat("<h2>The step</h2>", StepCards(r.step));
  if (r.step.bound) {
    absl::StrAppend(&out,
                    "<p id=\"bound\"><b>Bound</b> (slowest rank, its "
                    "steps together): ",
                    HtmlEscape(FormatStepBound(*r.step.bound)), "</p>\n");
  }
  absl::StrAppend(&out, RecommendationsHtml(r), BreakdownHtml(r.breakdown),
                  RankStepsHtml(r.step, 256), CriticalPathHtml(r),
                  NotesHtml(r));
  return out;
}

}  // namespace et::sim
