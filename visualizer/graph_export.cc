// Graph export by file extension, with the drawing size limit; see
// graph_export.h.
#include "visualizer/graph_export.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "proto/file_util.h"
#include "proto/status_macros.h"
#include "visualizer/dot_renderer.h"
#include "visualizer/dot_writer.h"
#include "visualizer/graphml_writer.h"
#include "visualizer/node_link_json_writer.h"

namespace et::viz {
namespace {

// The deepest --depth whose shown nodes fit in max_nodes, or -1 if not even
// depth 0.
int32_t DeepestFittingDepth(const std::vector<RankTrace>& traces,
                            const std::vector<RankSelection>& selections,
                            int64_t max_nodes, int64_t* count_at_depth) {
  std::map<int32_t, int64_t> by_depth;
  for (size_t t = 0; t < traces.size(); ++t) {
    for (NodeIndex i = 0; i < traces[t].graph.size(); ++i) {
      if (selections[t].shown[i]) ++by_depth[traces[t].hierarchy.depth(i)];
    }
  }
  int32_t best = -1;
  int64_t cumulative = 0;
  for (const auto& [depth, count] : by_depth) {
    cumulative += count;
    if (cumulative > max_nodes) break;
    best = depth;
    *count_at_depth = cumulative;
  }
  return best;
}

// "--ids A:B" covering the first max_nodes drawn nodes of the first rank drawn.
std::string FirstIdsHint(const VizGraph& graph, int64_t max_nodes) {
  const VizNode& first = graph.nodes.front();
  uint64_t last_id = first.id;
  for (int64_t k = 0;
       k < max_nodes && k < static_cast<int64_t>(graph.nodes.size()); ++k) {
    if (graph.nodes[k].rank != first.rank) break;
    last_id = graph.nodes[k].id;
  }
  return absl::StrFormat("--ids %d:%d (the first %d nodes)", first.id, last_id,
                         max_nodes);
}

}  // namespace

absl::StatusOr<GraphFormat> GraphFormatFromPath(absl::string_view path) {
  const std::string lower = absl::AsciiStrToLower(path);
  static const std::pair<const char*, GraphFormat> kExtensions[] = {
      {".dot", GraphFormat::kDot},   {".gv", GraphFormat::kDot},
      {".pdf", GraphFormat::kPdf},   {".svg", GraphFormat::kSvg},
      {".png", GraphFormat::kPng},   {".graphml", GraphFormat::kGraphMl},
      {".json", GraphFormat::kJson},
  };
  for (const auto& [ext, format] : kExtensions) {
    if (absl::EndsWith(lower, ext)) return format;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: unknown output format; use .dot, .pdf, .svg, .png, "
                      ".graphml or .json",
                      path));
}

bool IsDrawing(GraphFormat format) {
  return format != GraphFormat::kGraphMl && format != GraphFormat::kJson;
}

absl::Status CheckDrawingSize(const VizGraph& graph,
                              const std::vector<RankTrace>& traces,
                              const std::vector<RankSelection>& selections,
                              const NodeFilter& filter, int64_t max_nodes) {
  const int64_t n = static_cast<int64_t>(graph.nodes.size());
  if (max_nodes <= 0 || n <= max_nodes) return absl::OkStatus();
  std::vector<std::string> hints;
  int64_t fitting = 0;
  const int32_t depth =
      DeepestFittingDepth(traces, selections, max_nodes, &fitting);
  if (depth >= 0 && !filter.max_depth) {
    hints.push_back(
        absl::StrFormat("--depth %d --collapse (%d nodes)", depth, fitting));
  }
  if (!filter.step) {
    std::vector<int64_t> steps;
    for (const RankTrace& t : traces) {
      for (int64_t s : ProfilerSteps(t)) steps.push_back(s);
    }
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    if (!steps.empty()) {
      hints.push_back(
          absl::StrFormat("--step N (steps %s)", absl::StrJoin(steps, ", ")));
    }
  }
  hints.push_back(FirstIdsHint(graph, max_nodes));
  hints.push_back("--name REGEX");
  hints.push_back("--type compute|collective|gpu|...");
  return absl::ResourceExhaustedError(
      absl::StrFormat("the graph to draw has %d nodes, above the limit of %d "
                      "(Graphviz would take very "
                      "long and the page would be unreadable); narrow it with "
                      "%s, raise --max-nodes, or "
                      "write .graphml/.json, which have no limit",
                      n, max_nodes, absl::StrJoin(hints, ", ")));
}

absl::Status ExportGraph(const VizGraph& graph, const std::string& path,
                         const ExportOptions& options) {
  ASSIGN_OR_RETURN(GraphFormat format, GraphFormatFromPath(path));
  switch (format) {
    case GraphFormat::kGraphMl:
      return WriteFileAtomically(path, WriteGraphMl(graph));
    case GraphFormat::kJson:
      return WriteFileAtomically(path, WriteNodeLinkJson(graph));
    default:
      break;
  }
  if (options.max_nodes > 0 &&
      static_cast<int64_t>(graph.nodes.size()) > options.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("%s: %d nodes is above the drawing limit of %d", path,
                        graph.nodes.size(), options.max_nodes));
  }
  const std::string dot = WriteDot(graph, DotOptions{options.title});
  switch (format) {
    case GraphFormat::kDot:
      return WriteFileAtomically(path, dot);
    case GraphFormat::kPdf:
      return RenderDot(dot, "pdf", path, options.dot_program);
    case GraphFormat::kSvg:
      return RenderDot(dot, "svg", path, options.dot_program);
    case GraphFormat::kPng:
      return RenderDot(dot, "png", path, options.dot_program);
    default:
      return absl::InternalError("unreachable graph format");
  }
}

}  // namespace et::viz
