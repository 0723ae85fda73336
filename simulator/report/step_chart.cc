// SVG drawing of a sweep: a nice ms scale, stacked bars, axes and legend.
#include "simulator/report/step_chart.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "base/atomic_output_file.h"

namespace et::sim {
namespace {

// Chart geometry, in SVG user units (pixels).
constexpr double kWidth = 830, kHeight = 440;
constexpr double kLeft = 80, kRight = 260, kTop = 60, kBottom = 70;
// The memory axis's labels sit right of the plot, the legend right of them.
constexpr double kMemoryAxisIn = 70;

struct Segment {
  const char* label;
  const char* color;
  double SweepRow::*value;
};
constexpr char kMemoryColor[] = "#59a14f";
constexpr Segment kSegments[] = {
    {"compute", "#4e79a7", &SweepRow::compute_us},
    {"exposed communication", "#e15759", &SweepRow::exposed_comm_us},
    {"other (host gaps, waits)", "#bab0ac", &SweepRow::other_us},
};

std::string Escape(absl::string_view text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

// A tick spacing of 1, 2 or 5 x 10^k giving at most 6 intervals up to `max`.
double TickStep(double max) {
  if (!(max > 0)) return 1;
  const double raw = max / 6;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

std::string Text(double x, double y, const std::string& anchor,
                 absl::string_view text, const std::string& extra = "") {
  return absl::StrFormat(
      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>%s</text>\n", x, y,
      anchor, extra, Escape(text));
}

// Y axis: ticks and grid lines in ms, and its label.
std::string Axes(double max_ms, double tick_ms, double plot_h) {
  std::string out;
  const double plot_w = kWidth - kLeft - kRight;
  const double top_ms = std::ceil(max_ms / tick_ms) * tick_ms;
  for (int i = 0; i * tick_ms <= top_ms * (1 + 1e-9); ++i) {
    const double y = kTop + plot_h - plot_h * (i * tick_ms) / top_ms;
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
                          kLeft, y, kLeft + plot_w, y);
    absl::StrAppend(&out, Text(kLeft - 6, y + 4, "end",
                               absl::StrFormat("%g", i * tick_ms)));
  }
  absl::StrAppendFormat(&out,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                        "stroke=\"black\"/>\n<line x1=\"%.1f\" y1=\"%.1f\" "
                        "x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                        kLeft, kTop, kLeft, kTop + plot_h, kLeft, kTop + plot_h,
                        kLeft + plot_w, kTop + plot_h);
  absl::StrAppend(&out,
                  Text(22, kTop + plot_h / 2, "middle", "time per step (ms)",
                       absl::StrFormat(" transform=\"rotate(-90 22 %.1f)\"",
                                       kTop + plot_h / 2)));
  return out;
}

std::string Legend() {
  std::string out;
  const double x = kWidth - kRight + kMemoryAxisIn;
  double y = kTop;
  for (const Segment& s : kSegments) {
    absl::StrAppendFormat(&out,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" "
                          "height=\"12\" fill=\"%s\"/>\n",
                          x, y, s.color);
    absl::StrAppend(&out, Text(x + 18, y + 10, "start", s.label));
    y += 22;
  }
  absl::StrAppendFormat(&out,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                        "stroke=\"%s\" stroke-width=\"2\"/>\n",
                        x, y + 6, x + 12, y + 6, kMemoryColor);
  absl::StrAppend(&out, Text(x + 18, y + 10, "start", "peak memory per rank"));
  absl::StrAppend(
      &out, Text(x + 18, y + 24, "start", "(right axis)", " fill=\"#555555\""));
  return out;
}

// What a sweep's dimension counts, for the x axis.
absl::string_view DimMeaning(scaleout::Dim dim) {
  switch (dim) {
    case scaleout::Dim::kTp:
      return "tensor-parallel ranks";
    case scaleout::Dim::kEp:
      return "expert-parallel ranks";
    case scaleout::Dim::kDp:
      return "data-parallel replicas";
    case scaleout::Dim::kPp:
      return "pipeline stages";
  }
  return "";
}

// A byte scale's unit: GiB from 1 GiB up, else MiB, else KiB.
std::pair<double, const char*> ByteUnit(double top_bytes) {
  if (top_bytes >= 1024.0 * 1024 * 1024) return {1024.0 * 1024 * 1024, "GiB"};
  if (top_bytes >= 1024.0 * 1024) return {1024.0 * 1024, "MiB"};
  return {1024.0, "KiB"};
}

// The memory line's axis, right of the plot: ticks from 0 to `top_bytes`.
std::string MemoryAxis(double top_bytes, double plot_h) {
  const auto [unit, unit_name] = ByteUnit(top_bytes);
  const double top = top_bytes / unit;
  const double tick = TickStep(top);
  const double x = kWidth - kRight;
  std::string out = absl::StrFormat(
      "<line class=\"memory-axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
      "y2=\"%.1f\" stroke=\"%s\"/>\n",
      x, kTop, x, kTop + plot_h, kMemoryColor);
  for (int i = 0; i * tick <= top * (1 + 1e-9); ++i) {
    const double y = kTop + plot_h - plot_h * (i * tick) / top;
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                          "y2=\"%.1f\" stroke=\"%s\"/>\n",
                          x, y, x + 4, y, kMemoryColor);
    absl::StrAppend(&out, Text(x + 7, y + 4, "start",
                               absl::StrFormat("%g %s", i * tick, unit_name),
                               absl::StrFormat(" fill=\"%s\"", kMemoryColor)));
  }
  return out;
}

// The memory line on its own scale (0 to the largest of the peaks and the
// capacity): the peak per point, the capacity dashed, and a point that does
// not fit marked in red (class "no-fit").
std::string MemoryLine(const SweepResult& r, double slot, double plot_h) {
  double top = 0;
  for (const SweepRow& row : r.rows)
    top = std::max({top, static_cast<double>(row.peak_bytes),
                    static_cast<double>(row.capacity_bytes)});
  if (!(top > 0)) return "";
  const double unit = ByteUnit(top).first;
  const double tick = TickStep(top * 1.1 / unit);
  top = std::ceil(top * 1.1 / unit / tick) * tick * unit;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  auto y_of = [&](double bytes) {
    return kTop + plot_h - plot_h * bytes / top;
  };
  std::string out = MemoryAxis(top, plot_h), points;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    absl::StrAppendFormat(&points, "%s%.1f,%.2f", i ? " " : "",
                          kLeft + slot * (i + 0.5),
                          y_of(static_cast<double>(r.rows[i].peak_bytes)));
  }
  absl::StrAppendFormat(
      &out,
      "<polyline class=\"memory\" points=\"%s\" fill=\"none\" "
      "stroke=\"%s\" stroke-width=\"2\"/>\n",
      points, kMemoryColor);
  const int64_t capacity = r.rows.empty() ? 0 : r.rows.front().capacity_bytes;
  if (capacity > 0) {
    const double y = y_of(static_cast<double>(capacity));
    absl::StrAppendFormat(&out,
                          "<line class=\"capacity\" x1=\"%.1f\" y1=\"%.2f\" "
                          "x2=\"%.1f\" y2=\"%.2f\" stroke=\"%s\" "
                          "stroke-dasharray=\"6 4\"/>\n",
                          kLeft, y, kWidth - kRight, y, kMemoryColor);
    absl::StrAppend(
        &out, Text(kWidth - kRight - 4, y - 4, "end",
                   absl::StrFormat("device memory %.3g GiB", capacity / gib),
                   absl::StrFormat(" fill=\"%s\"", kMemoryColor)));
  }
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SweepRow& row = r.rows[i];
    const double x = kLeft + slot * (i + 0.5);
    const double y = y_of(static_cast<double>(row.peak_bytes));
    absl::StrAppendFormat(
        &out,
        "<circle class=\"memory-point%s\" cx=\"%.1f\" cy=\"%.2f\" r=\"%d\" "
        "fill=\"%s\"><title>peak %.3f GiB%s</title></circle>\n",
        row.fits ? "" : " no-fit", x, y, row.fits ? 4 : 6,
        row.fits ? kMemoryColor : "#d62728", row.peak_bytes / gib,
        row.fits ? "" : ": does not fit");
    if (!row.fits)
      absl::StrAppend(&out, Text(x, y - 10, "middle", "does not fit",
                                 " class=\"no-fit-label\" fill=\"#d62728\""));
  }
  return out;
}

}  // namespace

std::string StepChartSvg(const SweepResult& r) {
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kHeight - kTop - kBottom;
  double max_ms = 0;
  for (const SweepRow& row : r.rows) {
    max_ms = std::max(
        max_ms, (row.compute_us + row.exposed_comm_us + row.other_us) / 1e3);
    max_ms = std::max(max_ms, row.measured_us.value_or(0) / 1e3);
  }
  const double tick_ms = TickStep(max_ms);
  const double top_ms =
      std::max(tick_ms, std::ceil(max_ms / tick_ms) * tick_ms);
  const std::string dim(scaleout::DimName(r.dim));
  const bool search = r.search_world > 0;
  std::string out = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
      "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  absl::StrAppend(
      &out, Text(kWidth / 2, 24, "middle",
                 search ? absl::StrFormat("et-sim layouts of %d ranks, "
                                          "fastest first: %s",
                                          r.search_world, r.trace)
                        : absl::StrFormat("et-sim step breakdown vs %s: %s",
                                          dim, r.trace),
                 " font-size=\"15\" font-weight=\"bold\""));
  const SweepRow* truth = nullptr;
  for (const SweepRow& row : r.rows)
    if (row.measured_us && truth == nullptr) truth = &row;
  absl::StrAppend(
      &out,
      Text(kWidth / 2, 42, "middle",
           truth == nullptr
               ? absl::StrFormat("predicted, recorded as %s; no measured "
                                 "truth for these jobs",
                                 r.recorded_layout)
               : absl::StrFormat("predicted, recorded as %s; measured truth "
                                 "at %s only (the recorded job)",
                                 r.recorded_layout, PointLabel(r, *truth))));
  absl::StrAppend(&out, Axes(max_ms, tick_ms, plot_h));
  const double slot = r.rows.empty() ? plot_w : plot_w / r.rows.size();
  const double bar_w = std::min(60.0, slot * 0.6);
  std::string labels;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SweepRow& row = r.rows[i];
    const double cx = kLeft + slot * (i + 0.5);
    double y = kTop + plot_h;
    absl::StrAppendFormat(
        &out, "<g class=\"point\" data-%s=\"%s\">\n", search ? "layout" : dim,
        search ? PointLabel(r, row) : absl::StrCat(row.value));
    for (const Segment& s : kSegments) {
      const double h = plot_h * (row.*(s.value) / 1e3) / top_ms;
      y -= h;
      absl::StrAppendFormat(
          &out,
          "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" "
          "fill=\"%s\"><title>%s %s: %.3f ms</title></rect>\n",
          cx - bar_w / 2, y, bar_w, h, s.color, PointLabel(r, row), s.label,
          row.*(s.value) / 1e3);
    }
    absl::StrAppend(&out, "</g>\n");
    // The recorded job's truth: a black tick across its bar, and its error.
    if (row.measured_us) {
      const double ty =
          kTop + plot_h - plot_h * (*row.measured_us / 1e3) / top_ms;
      absl::StrAppendFormat(
          &out,
          "<line class=\"truth\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.2f\" "
          "y2=\"%.2f\" stroke=\"black\" stroke-width=\"2\"><title>measured "
          "%.3f ms (error %+.1f%%)</title></line>\n",
          cx - bar_w / 2 - 6, cx + bar_w / 2 + 6, ty, ty,
          *row.measured_us / 1e3, row.error_pct.value_or(0));
    }
    // The step itself above its bar (a thin slice is unreadable as a
    // height), drawn after the memory line with a white halo: it stays
    // readable where the line crosses it.
    absl::StrAppend(&labels, Text(cx, y - 5, "middle",
                                  absl::StrFormat("%.3f", row.step_us / 1e3),
                                  " font-size=\"11\" class=\"step-label\" "
                                  "stroke=\"white\" stroke-width=\"3\" "
                                  "paint-order=\"stroke\""));
    absl::StrAppend(&out,
                    Text(cx, kTop + plot_h + 16, "middle", PointLabel(r, row)));
    absl::StrAppend(
        &out, Text(cx, kTop + plot_h + 30, "middle",
                   absl::StrCat(row.world, " ranks"), " fill=\"#555555\""));
  }
  absl::StrAppend(&out, MemoryLine(r, slot, plot_h), labels);
  absl::StrAppend(
      &out, Text(kLeft + plot_w / 2, kHeight - 12, "middle",
                 search ? std::string("layout (tp, pp, dp), fastest first")
                        : absl::StrCat(dim, " (", DimMeaning(r.dim), ")")));
  absl::StrAppend(&out, Legend(), "</svg>\n");
  return out;
}

absl::Status WriteStepChart(const SweepResult& result,
                            const std::string& path) {
  return WriteFileAtomically(path, StepChartSvg(result));
}

}  // namespace et::sim
