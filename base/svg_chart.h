// Small inline SVG charts for the HTML report pages (base/html_page.h): a
// stacked bar chart (one bar per label, a segment per series) and a line
// chart (one polyline per series, an optional horizontal limit), each with a
// y axis in the caller's unit and a <title> tooltip on every mark. Plain SVG
// 1.1; nothing fetched. Pure functions.
#ifndef BASE_SVG_CHART_H_
#define BASE_SVG_CHART_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace et {

struct ChartSeries {
  std::string name;
  std::string color;  // a CSS colour: "#4e79a7"
};

struct StackedBars {
  std::vector<ChartSeries> series;
  std::vector<std::string> labels;          // one per bar, under it
  std::vector<std::vector<double>> values;  // [bar][series], >= 0
  std::vector<std::string> marks;  // per bar, above it ("NOFIT"); optional
  std::string unit;                // of the values: "ms"
};
std::string StackedBarsSvg(const StackedBars& chart);

struct LineChart {
  std::vector<ChartSeries> series;
  std::vector<std::vector<std::pair<double, double>>> points;  // [series]
  std::string x_label, unit;    // the y unit: "GiB"
  std::optional<double> limit;  // a horizontal line (capacity)
  std::string limit_label;
};
std::string LineChartSvg(const LineChart& chart);

// The colour key of `series`, as an HTML line.
std::string LegendHtml(const std::vector<ChartSeries>& series);

}  // namespace et

#endif  // BASE_SVG_CHART_H_
