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
};

// Fails (ResourceExhausted) when a drawing would exceed options.max_nodes,
// suggesting a
// --depth or --step that fits, computed from the traces and the current
// selection.
absl::Status CheckDrawingSize(const VizGraph& graph,
                              const std::vector<RankTrace>& traces,
                              const std::vector<RankSelection>& selections,
                              const NodeFilter& filter, int64_t max_nodes);

absl::Status ExportGraph(const VizGraph& graph, const std::string& path,
                         const ExportOptions& options);

}  // namespace et::viz

#endif  // VISUALIZER_GRAPH_EXPORT_H_
