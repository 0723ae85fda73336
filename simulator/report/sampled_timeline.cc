// Tracks binned into marks; see sampled_timeline.h.
#include "simulator/report/sampled_timeline.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"
#include "base/svg_chart.h"
#include "step/step_report.h"

namespace et::sim {
namespace {

constexpr double kTrackHeight = 18;  // px, as the names' rows (style)

// What holds one bin of a track: the op with the most time in it, and how
// much of the bin its ops fill.
struct Bin {
  int32_t node = -1;
  int64_t best_ns = 0, busy_ns = 0;
  int64_t ops = 0;  // ops that start in the bin
};

bool IsComm(SimOpKind k) {
  return k == SimOpKind::kCollective || k == SimOpKind::kSend ||
         k == SimOpKind::kRecv;
}

const char* ColorOf(const RankProgram& p, int32_t node) {
  if (IsComm(p.kind[node])) return "#e15759";
  return p.resource_is_host[p.resource[node]] ? "#4e79a7" : "#59a14f";
}

// The bins of one resource of one class.
std::vector<Bin> BinTrack(const RankProgram& p, const ClassTimeline& tl,
                          uint32_t resource, int64_t span_ns) {
  std::vector<Bin> bins(kTimelineBins);
  const double per_bin = static_cast<double>(span_ns) / kTimelineBins;
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (p.resource[i] != resource || p.kind[i] == SimOpKind::kNoop ||
        tl.finish_ns[i] < 0)
      continue;
    const int64_t start = tl.start_ns[i], finish = tl.finish_ns[i];
    const int64_t first = std::clamp<int64_t>(
        static_cast<int64_t>(start / per_bin), 0, kTimelineBins - 1);
    const int64_t last = std::clamp<int64_t>(
        static_cast<int64_t>(std::max(start, finish - 1) / per_bin), first,
        kTimelineBins - 1);
    ++bins[first].ops;
    for (int64_t b = first; b <= last; ++b) {
      const int64_t lo = static_cast<int64_t>(b * per_bin);
      const int64_t hi = static_cast<int64_t>((b + 1) * per_bin);
      const int64_t overlap =
          std::max<int64_t>(0, std::min(finish, hi) - std::max(start, lo));
      Bin& bin = bins[b];
      bin.busy_ns += overlap;
      if (overlap > bin.best_ns || bin.node < 0) {
        bin.best_ns = overlap;
        bin.node = static_cast<int32_t>(i);
      }
    }
  }
  return bins;
}

// The marks of one track at row `row`: runs of bins held by ops of one name.
std::string TrackMarks(const RankProgram& p, const std::vector<Bin>& bins,
                       int64_t span_ns, size_t row) {
  const double per_bin_ms = static_cast<double>(span_ns) / kTimelineBins / 1e6;
  std::string out;
  for (size_t b = 0; b < bins.size();) {
    if (bins[b].node < 0) {
      ++b;
      continue;
    }
    const absl::string_view name = p.graph->name(bins[b].node);
    size_t e = b;
    int64_t busy = 0, ops = 0;
    while (e < bins.size() && bins[e].node >= 0 &&
           p.graph->name(bins[e].node) == name) {
      busy += bins[e].busy_ns;
      ops += bins[e].ops;
      ++e;
    }
    absl::StrAppendFormat(
        &out,
        "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%.0f\" "
        "fill=\"%s\"><title>%s: %.3f-%.3f ms, %d ops starting, busy %.3f "
        "ms</title></rect>\n",
        b, row * kTrackHeight + 2, e - b, kTrackHeight - 4,
        ColorOf(p, bins[b].node), HtmlEscape(name), b * per_bin_ms,
        e * per_bin_ms, ops, busy / 1e6);
    b = e;
  }
  return out;
}

}  // namespace

std::string SampledTimelineHtml(const std::vector<RankClass>& classes,
                                const SimResult& result, int64_t span_ns) {
  if (span_ns <= 0) return "<p>No op ran: nothing to draw.</p>\n";
  std::string names, marks;
  size_t rows = 0, total = 0;
  for (size_t c = 0; c < classes.size(); ++c) {
    const RankProgram& p = *classes[c].program;
    std::vector<bool> used(p.resource_names.size(), false);
    for (size_t i = 0; i < p.kind.size(); ++i) {
      if (p.kind[i] != SimOpKind::kNoop &&
          result.timelines[c].finish_ns[i] >= 0)
        used[p.resource[i]] = true;
    }
    for (uint32_t r = 0; r < used.size(); ++r) {
      if (!used[r]) continue;
      ++total;
      if (rows >= kTimelineMaxTracks) continue;
      const std::string label = absl::StrCat(RanksLabel(classes[c].ranks),
                                             " / ", p.resource_names[r]);
      absl::StrAppend(&names, "<div title=\"", HtmlEscape(label), "\">",
                      HtmlEscape(label), "</div>");
      marks += TrackMarks(p, BinTrack(p, result.timelines[c], r, span_ns),
                          span_ns, rows);
      ++rows;
    }
  }
  const double height = static_cast<double>(rows) * kTrackHeight;
  std::string out = absl::StrFormat(
      "<p>%d tracks over %.3f ms, each cut into %d bins of %.3f ms; a mark is "
      "the op that holds most of its bins (hover for it). Scroll on the "
      "tracks to zoom, double-click to reset.%s</p>\n",
      total, span_ns / 1e6, kTimelineBins, span_ns / 1e6 / kTimelineBins,
      total > rows ? absl::StrFormat(" The first %d tracks are drawn; the "
                                     "Perfetto trace has all %d.",
                                     rows, total)
                   : "");
  absl::StrAppend(
      &out,
      LegendHtml({{"host op", "#4e79a7"},
                  {"GPU op", "#59a14f"},
                  {"communication", "#e15759"}}),
      "<div class=\"tracks\"><div class=\"names\">", names, "</div>",
      absl::StrFormat(
          "<svg class=\"zoom\" xmlns=\"http://www.w3.org/2000/svg\" "
          "viewBox=\"0 0 %d %.0f\" preserveAspectRatio=\"none\" "
          "style=\"height:%.0fpx\">\n",
          kTimelineBins, height, height),
      marks, "</svg></div>\n");
  // The time axis under the tracks.
  absl::StrAppend(&out,
                  "<div class=\"tracks\"><div></div><div class=\"why\" "
                  "style=\"display:flex;justify-content:space-between\">");
  for (int k = 0; k <= 4; ++k)
    absl::StrAppendFormat(&out, "<span>%.3f ms</span>", span_ns / 1e6 * k / 4);
  absl::StrAppend(&out, "</div></div>\n");
  return out;
}

}  // namespace et::sim
