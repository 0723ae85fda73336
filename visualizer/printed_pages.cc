// Drawings split over printed pages; see printed_pages.h.
#include "visualizer/printed_pages.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/atomic_output_file.h"
#include "base/status_macros.h"
#include "visualizer/dot_renderer.h"
#include "visualizer/page_layout.h"

namespace et::viz {
namespace {

constexpr double kMaxPageShortIn = kPrintableShortIn / kMinPrintScale;
constexpr double kMaxPageLongIn = kPrintableLongIn / kMinPrintScale;
// The graph label above the columns (title, page line and legend row): what
// a page is tall besides its layers. An underestimate only costs a try.
constexpr double kTitleIn = 0.7;
// Tries at the split; each one after the first starts from the pages that
// did not fit.
constexpr int kMaxTries = 3;

// Inches per layer of a column and per column, measured.
struct Measure {
  double layer_height_in = 0;
  double column_width_in = 0;
};

struct PageRender {
  std::string tmp;
  Rendered size;
};

void DiscardAll(std::vector<PageRender>* pages) {
  for (const PageRender& p : *pages) DiscardTempFile(p.tmp);
  pages->clear();
}

int32_t ColumnsPerPage(const Measure& m) {
  return std::max(
      static_cast<int32_t>(std::floor(kMaxPageShortIn / m.column_width_in)), 1);
}

// The columns a page holds one page tall, as many side by side as fit.
PagePlan PlanFor(const VizGraph& graph, const NodeLayers& layers,
                 const Measure& m) {
  const auto layers_per_column = static_cast<int64_t>(
      std::floor((kMaxPageLongIn - kTitleIn) / m.layer_height_in));
  return PlanPages(
      graph,
      FoldToLayers(graph, layers, std::max<int64_t>(layers_per_column, 1)),
      ColumnsPerPage(m));
}

bool AllFit(const std::vector<PageRender>& pages) {
  return std::all_of(pages.begin(), pages.end(), [](const PageRender& p) {
    return FitsPrintedPage(p.size.width_in, p.size.height_in);
  });
}

// Every page of `plan`, rendered into a temporary file each: one dot
// process per page, as many at once as there are cores (a 4-rank step is
// some 50 pages).
absl::StatusOr<std::vector<PageRender>> RenderPages(
    const VizGraph& graph, const PagePlan& plan, absl::string_view format,
    const std::string& path, const DotOptions& dot_options,
    const std::string& dot_program) {
  const auto count = static_cast<size_t>(plan.pages);
  std::vector<std::string> tmps(count);
  std::vector<absl::StatusOr<Rendered>> sizes(count, Rendered{});
  for (std::string& tmp : tmps) tmp = TempPathFor(path);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t p = next++; p < count; p = next++) {
      DotOptions options = dot_options;
      options.plan = &plan;
      options.page = static_cast<int32_t>(p);
      sizes[p] = RenderDotToTemp(WriteDot(graph, options), format, tmps[p],
                                 path, dot_program);
    }
  };
  std::vector<std::thread> pool;
  const size_t threads = std::min<size_t>(
      std::max(std::thread::hardware_concurrency(), 1u), count);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  std::vector<PageRender> pages;
  absl::Status failed;
  for (size_t p = 0; p < count; ++p) {
    if (sizes[p].ok()) {
      pages.push_back({tmps[p], *sizes[p]});
      continue;
    }
    DiscardTempFile(tmps[p]);
    if (failed.ok()) {
      failed = absl::Status(sizes[p].status().code(),
                            absl::StrFormat("page %d of %d: %s", p + 1, count,
                                            sizes[p].status().message()));
    }
  }
  if (!failed.ok()) {
    DiscardAll(&pages);
    return failed;
  }
  return pages;
}

// The same columns packed by their widths measured on `pages`: consecutive
// columns of a rank share a page while their widths sum to a page's (a
// column's width: its page's over its columns, the page's title included).
PagePlan PackByMeasuredWidth(const VizGraph& graph, const PagePlan& plan,
                             const std::vector<PageRender>& pages) {
  std::map<std::pair<int, int32_t>, double> width_in;
  for (size_t p = 0; p < pages.size(); ++p) {
    const PagePlan::Span& span = plan.spans[p];
    for (int32_t c = span.first_column; c <= span.last_column; ++c) {
      width_in[{span.rank, c}] =
          pages[p].size.width_in / (span.last_column - span.first_column + 1);
    }
  }
  return PlanPages(graph, plan.folding,
                   [&width_in](int rank, int32_t first, int32_t last) {
                     double sum = 0;
                     for (int32_t c = first; c <= last; ++c)
                       sum += width_in.at({rank, c});
                     return sum <= kMaxPageShortIn;
                   });
}

// Grows the measure from the pages that did not fit; false when nothing
// grew (a smaller split would not help).
bool Refine(const PagePlan& plan, const std::vector<PageRender>& pages,
            Measure* m) {
  bool grew = false;
  for (size_t p = 0; p < pages.size(); ++p) {
    const Rendered& r = pages[p].size;
    if (FitsPrintedPage(r.width_in, r.height_in)) continue;
    const PagePlan::Span& span = plan.spans[p];
    const double layer_in =
        (r.height_in - kTitleIn) /
        static_cast<double>(plan.folding.layers_per_column.at(span.rank));
    const double column_in =
        r.width_in / (span.last_column - span.first_column + 1);
    // One column wider than a portrait page but not than a landscape one
    // (two threads and a stream side by side): a page short enough turns.
    const bool landscape =
        span.first_column == span.last_column && r.width_in > kMaxPageShortIn &&
        r.width_in <= kMaxPageLongIn && r.height_in > kMaxPageShortIn;
    const double wanted_in = landscape
                                 ? layer_in * (kMaxPageLongIn - kTitleIn) /
                                       (kMaxPageShortIn - kTitleIn)
                                 : layer_in;
    if ((r.height_in > kMaxPageLongIn || landscape) &&
        wanted_in > m->layer_height_in * 1.01) {
      m->layer_height_in = wanted_in;
      grew = true;
    }
    if (r.width_in > kMaxPageShortIn && column_in > m->column_width_in * 1.01 &&
        span.last_column > span.first_column) {
      m->column_width_in = column_in;
      grew = true;
    }
  }
  return grew;
}

// What the split came to, for the `wrote` line.
std::string SplitNote(const std::vector<PageRender>& pages,
                      const Rendered& whole) {
  double widest = 0;
  double tallest = 0;
  std::vector<std::string> too_large;
  for (size_t p = 0; p < pages.size(); ++p) {
    const Rendered& r = pages[p].size;
    widest = std::max(widest, r.width_in);
    tallest = std::max(tallest, r.height_in);
    if (!FitsPrintedPage(r.width_in, r.height_in)) {
      too_large.push_back(absl::StrFormat("%d (%.1f x %.1f in)", p + 1,
                                          r.width_in, r.height_in));
    }
  }
  std::string note = absl::StrFormat(
      "drawn on %d pages of at most %.1f x %.1f in (one page would be %.1f x "
      "%.1f in; a drawing of up to %.1f x %.1f in prints on a Letter/A4 page "
      "with its labels at 6 pt or more), edges between pages as off-page "
      "connectors; --pages one "
      "draws one page",
      pages.size(), widest, tallest, whole.width_in, whole.height_in,
      kMaxPageShortIn, kMaxPageLongIn);
  if (!too_large.empty()) {
    absl::StrAppendFormat(&note,
                          "; still larger than that: page %s (a column wider "
                          "than a page, or a layer taller)",
                          absl::StrJoin(too_large, ", "));
  }
  return note;
}

// Writes the pages: one PDF joining them, else one file per page.
absl::StatusOr<std::vector<std::string>> WritePages(
    std::vector<PageRender> pages, absl::string_view format,
    const std::string& path, std::string* note) {
  if (format == "pdf") {
    std::vector<std::string> tmps;
    for (const PageRender& p : pages) tmps.push_back(p.tmp);
    const std::string joined = TempPathFor(path);
    const absl::Status s = JoinPdfPages(tmps, joined, path);
    if (s.ok()) {
      DiscardAll(&pages);
      RETURN_IF_ERROR(CommitTempFile(joined, path));
      return std::vector<std::string>{path};
    }
    if (s.code() != absl::StatusCode::kNotFound) {
      DiscardAll(&pages);
      return s;
    }
    absl::StrAppend(note, "; one file per page: ", s.message());
  }
  std::vector<std::string> files;
  for (size_t p = 0; p < pages.size(); ++p) {
    const std::string page_path = PageFilePath(path, static_cast<int32_t>(p));
    if (absl::Status s = CommitTempFile(pages[p].tmp, page_path); !s.ok()) {
      for (const std::string& f : files) std::remove(f.c_str());
      for (size_t q = p + 1; q < pages.size(); ++q)
        DiscardTempFile(pages[q].tmp);
      return s;
    }
    files.push_back(page_path);
  }
  return files;
}

}  // namespace

bool FitsPrintedPage(double width_in, double height_in) {
  const double short_in = std::min(width_in, height_in);
  const double long_in = std::max(width_in, height_in);
  return short_in <= kMaxPageShortIn && long_in <= kMaxPageLongIn;
}

std::string PageFilePath(const std::string& path, int32_t page) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  const bool has_ext =
      dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string stem = has_ext ? path.substr(0, dot) : path;
  const std::string ext = has_ext ? path.substr(dot) : "";
  return absl::StrCat(stem, "-p", page + 1, ext);
}

absl::StatusOr<DrawnPages> DrawOnPages(
    const VizGraph& graph, absl::string_view format, const std::string& path,
    const DotOptions& dot_options, const std::string& dot_program, bool split) {
  DrawnPages out;
  const std::string tmp = TempPathFor(path);
  auto whole = RenderDotToTemp(WriteDot(graph, dot_options), format, tmp, path,
                               dot_program);
  if (!whole.ok()) {
    DiscardTempFile(tmp);
    return whole.status();
  }
  const PageFolding folding = FoldForPage(graph, LayerNodes(graph));
  int64_t layers_per_column = 1;
  int64_t columns = 0;
  for (const auto& [rank, n] : folding.rank_columns) columns += n;
  for (const auto& [rank, n] : folding.layers_per_column)
    layers_per_column = std::max(layers_per_column, n);
  if (!split || whole->width_in <= 0 ||
      FitsPrintedPage(whole->width_in, whole->height_in) ||
      (columns <= 1 && layers_per_column <= 1)) {
    RETURN_IF_ERROR(CommitTempFile(tmp, path));
    out.files = {path};
    out.straight_lines = whole->straight_lines;
    return out;
  }
  DiscardTempFile(tmp);
  const NodeLayers layers = LayerNodes(graph);
  Measure m{
      std::max(whole->height_in - kTitleIn, 0.1) /
          static_cast<double>(layers_per_column),
      whole->width_in / static_cast<double>(std::max<int64_t>(columns, 1))};
  // The whole drawing's columns are wider than a page's (long edges,
  // connectors beside them): once every page fits, the columns measured there
  // may put more of them on a page.
  std::vector<PageRender> pages;
  for (int attempt = 0;; ++attempt) {
    const PagePlan plan = PlanFor(graph, layers, m);
    ASSIGN_OR_RETURN(pages, RenderPages(graph, plan, format, path, dot_options,
                                        dot_program));
    if (AllFit(pages)) {
      const PagePlan wider = PackByMeasuredWidth(graph, plan, pages);
      if (wider.pages >= plan.pages) break;
      ASSIGN_OR_RETURN(auto wider_pages, RenderPages(graph, wider, format, path,
                                                     dot_options, dot_program));
      if (!AllFit(wider_pages)) {
        DiscardAll(&wider_pages);
        break;
      }
      DiscardAll(&pages);
      pages = std::move(wider_pages);
      break;
    }
    if (attempt + 1 == kMaxTries || !Refine(plan, pages, &m)) break;
    DiscardAll(&pages);
  }
  out.pages = static_cast<int32_t>(pages.size());
  for (const PageRender& p : pages)
    out.straight_lines = out.straight_lines || p.size.straight_lines;
  out.note = SplitNote(pages, *whole);
  ASSIGN_OR_RETURN(out.files,
                   WritePages(std::move(pages), format, path, &out.note));
  return out;
}

}  // namespace et::viz
