// Stacked bars and lines in SVG with a y axis of round ticks.
#include "base/svg_chart.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"

namespace et {
namespace {

constexpr double kLeft = 64, kTop = 16, kPlotHeight = 220, kBottom = 46;

// A round step for about five ticks up to `max`.
double TickStep(double max) {
  if (!(max > 0)) return 1;
  const double raw = max / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

// The y axis and its grid for values 0..top, as wide as `width`.
std::string YAxis(double top, double width, const std::string& unit) {
  const double step = TickStep(top);
  std::string out;
  for (double v = 0; v <= top * 1.0001; v += step) {
    const double y = kTop + kPlotHeight * (1 - v / top);
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"#e4e4e4\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" "
                          "text-anchor=\"end\">%g</text>\n",
                          kLeft, y, width - 8, y, kLeft - 6, y + 4, v);
  }
  absl::StrAppendFormat(&out,
                        "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 "
                        "%.1f)\" text-anchor=\"middle\">%s</text>\n",
                        kTop + kPlotHeight / 2, kTop + kPlotHeight / 2,
                        HtmlEscape(unit));
  return out;
}

}  // namespace

std::string StackedBarsSvg(const StackedBars& chart) {
  const size_t bars = chart.labels.size();
  double max = 0;
  for (const std::vector<double>& bar : chart.values) {
    double sum = 0;
    for (double v : bar) sum += std::max(0.0, v);
    max = std::max(max, sum);
  }
  const double step = TickStep(max > 0 ? max : 1);
  const double top =
      std::max(step, std::ceil((max > 0 ? max : 1) / step) * step);
  const double slot = std::clamp(640.0 / std::max<size_t>(bars, 1), 14.0, 90.0);
  const double width = kLeft + slot * static_cast<double>(bars) + 24;
  const double height = kTop + kPlotHeight + kBottom;
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
      width, height, width, height);
  absl::StrAppend(&out, YAxis(top, width, chart.unit));
  for (size_t b = 0; b < bars; ++b) {
    const double x = kLeft + slot * static_cast<double>(b) + slot * 0.15;
    double y = kTop + kPlotHeight;
    double total = 0;
    for (size_t s = 0; s < chart.series.size() && b < chart.values.size() &&
                       s < chart.values[b].size();
         ++s) {
      const double v = std::max(0.0, chart.values[b][s]);
      total += v;
      const double h = kPlotHeight * v / top;
      if (h <= 0) continue;
      y -= h;
      absl::StrAppendFormat(&out,
                            "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" "
                            "height=\"%.2f\" fill=\"%s\"><title>%s %s: %.3f "
                            "%s</title></rect>\n",
                            x, y, slot * 0.7, h, chart.series[s].color,
                            HtmlEscape(chart.labels[b]),
                            HtmlEscape(chart.series[s].name), v,
                            HtmlEscape(chart.unit));
    }
    const std::string mark = b < chart.marks.size() ? chart.marks[b] : "";
    // About 6 px a character: a label wider than its slot is cut (the
    // segments' tooltips name it in full).
    std::string label = chart.labels[b];
    const size_t fits = static_cast<size_t>(std::max(3.0, slot / 6.2));
    if (label.size() > fits) label = label.substr(0, fits - 1) + "~";
    absl::StrAppendFormat(
        &out,
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\"%s>%s</text>\n",
        x + slot * 0.35, kTop + kPlotHeight + 16, HtmlEscape(label),
        x + slot * 0.35, std::max(kTop + 10, y - 4),
        mark.empty() ? "" : " fill=\"#c0392b\" font-weight=\"bold\"",
        HtmlEscape(mark.empty() ? absl::StrFormat("%.3f", total) : mark));
  }
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

std::string LineChartSvg(const LineChart& chart) {
  double max_x = 0, max_y = chart.limit.value_or(0);
  for (const auto& series : chart.points) {
    for (const auto& [x, y] : series) {
      max_x = std::max(max_x, x);
      max_y = std::max(max_y, y);
    }
  }
  if (!(max_x > 0)) max_x = 1;
  const double step = TickStep(max_y > 0 ? max_y : 1);
  const double top =
      std::max(step, std::ceil((max_y > 0 ? max_y : 1) * 1.02 / step) * step);
  const double width = 760, height = kTop + kPlotHeight + kBottom;
  const double plot_width = width - kLeft - 16;
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
      width, height, width, height);
  absl::StrAppend(&out, YAxis(top, width, chart.unit));
  absl::StrAppendFormat(&out,
                        "<text x=\"%.1f\" y=\"%.1f\" "
                        "text-anchor=\"middle\">%s</text>\n",
                        kLeft + plot_width / 2, kTop + kPlotHeight + 30,
                        HtmlEscape(chart.x_label));
  auto px = [&](double x) { return kLeft + plot_width * x / max_x; };
  auto py = [&](double y) { return kTop + kPlotHeight * (1 - y / top); };
  if (chart.limit) {
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"#c0392b\" "
                          "stroke-dasharray=\"6 4\"/><text x=\"%.1f\" "
                          "y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                          kLeft, py(*chart.limit), width - 16, py(*chart.limit),
                          width - 18, py(*chart.limit) - 4,
                          HtmlEscape(chart.limit_label));
  }
  for (size_t s = 0; s < chart.points.size() && s < chart.series.size(); ++s) {
    std::string points;
    for (const auto& [x, y] : chart.points[s])
      absl::StrAppendFormat(&points, "%.1f,%.1f ", px(x), py(y));
    absl::StrAppendFormat(&out,
                          "<polyline fill=\"none\" stroke=\"%s\" "
                          "stroke-width=\"1.5\" points=\"%s\"><title>%s</"
                          "title></polyline>\n",
                          chart.series[s].color, points,
                          HtmlEscape(chart.series[s].name));
  }
  absl::StrAppend(&out, "</svg>\n");
  return out;
}

std::string LegendHtml(const std::vector<ChartSeries>& series) {
  std::string out = "<div class=\"legend\">";
  for (const ChartSeries& s : series) {
    absl::StrAppend(&out, "<span><i style=\"background:", s.color, "\"></i>",
                    HtmlEscape(s.name), "</span>");
  }
  absl::StrAppend(&out, "</div>\n");
  return out;
}

}  // namespace et
