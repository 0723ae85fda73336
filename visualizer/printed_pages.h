// Draws a graph on printed pages. A training step folded into page columns
// still comes out as one sheet of some 40 x 45 in (a GPT step of 279 nodes),
// whose 9 pt labels shrink below 2 pt on a Letter or A4 page. When a drawing
// would not print readably on one page, it is drawn again as several: columns
// one printed page tall, as many side by side as fit its width, each page
// laid out by Graphviz on its own, every edge between two pages an off-page
// connector on its target's page (dot_writer.h). The split is decided from
// measured sizes: the whole drawing's (per layer, per column), then each
// page's (a page that still does not fit makes the next try smaller). PDF
// pages are joined into one file; SVG and PNG, one page per file.
#ifndef VISUALIZER_PRINTED_PAGES_H_
#define VISUALIZER_PRINTED_PAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "visualizer/dot_writer.h"
#include "visualizer/viz_graph.h"

namespace et::viz {

// A printed page is Letter or A4 less half-inch margins: 7.3 x 10 in (A4's
// width, Letter's height). A drawing is readable there when its labels (9 pt,
// connectors 8 pt) print at 6 pt or more: drawn at 2/3 scale or larger, so
// at most 10.95 x 15 in, in either orientation.
inline constexpr double kPrintableShortIn = 7.3;
inline constexpr double kPrintableLongIn = 10.0;
inline constexpr double kMinPrintScale = 6.0 / 9.0;
bool FitsPrintedPage(double width_in, double height_in);

// The name of page `page` (0-based) of a drawing written one file per page:
// graph.svg -> graph-p1.svg.
std::string PageFilePath(const std::string& path, int32_t page);

struct DrawnPages {
  std::vector<std::string> files;  // written, in page order
  int32_t pages = 1;
  bool straight_lines = false;  // on some page (dot_renderer.h)
  std::string note;             // how it was split; "" for one page
};

// Draws `graph` to `path` in `format` ("pdf", "svg", "png") with Graphviz's
// `dot_program`: as one page when it prints readably or `split` is false,
// else on several pages (a PDF of N pages at `path`, or where pdfunite is
// missing, and for SVG and PNG, one file per page, PageFilePath). Nothing is
// left behind on failure.
absl::StatusOr<DrawnPages> DrawOnPages(
    const VizGraph& graph, absl::string_view format, const std::string& path,
    const DotOptions& dot_options, const std::string& dot_program, bool split);

}  // namespace et::viz

#endif  // VISUALIZER_PRINTED_PAGES_H_
