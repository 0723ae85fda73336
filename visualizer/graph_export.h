// Writes a VizGraph to a file in the format its extension names: .dot, .pdf,
// .svg, .png (through Graphviz's dot), .graphml or .json (node-link). Drawings
// are refused above a node limit (default 2,000: Graphviz's dot takes about a
// minute there and hours at 10^4 nodes, and the page is unreadable long before)
// with a message that suggests a filter which fits, computed from the trace.
// GraphML and JSON are for programs, not eyes, and have no limit. Every output
// is written atomically. Stateless.
#ifndef VISUALIZER_GRAPH_EXPORT_H_
#define VISUALIZER_GRAPH_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"
#include "visualizer/viz_graph.h"

namespace et::viz {

enum class GraphFormat { kDot, kPdf, kSvg, kPng, kGraphMl, kJson };

inline constexpr int64_t kDefaultMaxDrawnNodes = 2000;

// The format named by the path's extension; an error listing the supported
// ones.
absl::StatusOr<GraphFormat> GraphFormatFromPath(absl::string_view path);
// True for the formats Graphviz lays out (.dot included: it is made for
// Graphviz).
bool IsDrawing(GraphFormat format);

struct ExportOptions {
  int64_t max_nodes = kDefaultMaxDrawnNodes;  // drawings only; 0 = no limit
  std::string dot_program = "dot";
  std::string title;
  // .pdf/.svg/.png: split a drawing that would not print readably on one
  // page over several (printed_pages.h).
  bool split_pages = true;
};

// Graphviz's dot cost grows with the nodes plus the "virtual nodes" it inserts
// where an edge spans several layers; in real traces long data edges (weights
// read again in the backward pass) dominate: 811 resnet nodes with 2,109 edges
// made ~290,000 virtual nodes and took over 5 minutes. This estimate = drawn
// nodes + the sum over drawn edges of their layer distance minus one in a
// longest-path layering (dot's ranking without extra constraints). Edges in
// cycles count as span 1.
int64_t EstimateLayoutSize(const VizGraph& graph);

// Layout units allowed per --max-nodes unit (see docs/benchmarks.md for the
// dot times behind it).
inline constexpr int64_t kLayoutUnitsPerNode = 5;

// True when a drawing is within max_nodes nodes and kLayoutUnitsPerNode *
// max_nodes layout units (max_nodes 0: no limit).
bool WithinDrawingLimits(const VizGraph& graph, int64_t max_nodes);

// Whether runs of repeated structure are drawn once with "x N"
// (repeat_folding.h): kAuto folds page drawings (.pdf, .svg, .png) that do
// not fit a page as they are (above the drawing limits, or folded into
// several page columns); .dot, .graphml and .json keep every node unless
// kFold asks.
enum class RepeatMode { kAuto, kFold, kKeep };
// "auto", "fold", "keep"; an error naming --repeats otherwise.
absl::StatusOr<RepeatMode> ParseRepeatMode(absl::string_view text);
bool ShouldFoldRepeats(const VizGraph& graph, GraphFormat format,
                       RepeatMode mode, int64_t max_nodes);

// How et-viz will draw a selection: the format and repeat mode decide
// whether repeats are folded, and so how many nodes a drawing has.
struct DrawingStyle {
  GraphFormat format = GraphFormat::kDot;
  RepeatMode repeats = RepeatMode::kKeep;
};

// Fails (ResourceExhausted) when a drawing would exceed max_nodes nodes or
// kLayoutUnitsPerNode * max_nodes layout units, suggesting filters that fit
// (each added to `filter`), computed from the traces; every node count a
// suggestion gives is of that drawing as `style` draws it.
absl::Status CheckDrawingSize(const VizGraph& graph,
                              const std::vector<RankTrace>& traces,
                              const NodeFilter& filter, int64_t max_nodes,
                              const DrawingStyle& style = {});

// Writes `graph` to `path` in the format its extension names: the files
// written (a drawing on several pages may be one file per page) and a note
// saying how a drawing differs from the usual one ("" when it does not).
struct Exported {
  std::vector<std::string> files;
  std::string note;
};
absl::StatusOr<Exported> ExportGraph(const VizGraph& graph,
                                     const std::string& path,
                                     const ExportOptions& options);

}  // namespace et::viz

#endif  // VISUALIZER_GRAPH_EXPORT_H_
