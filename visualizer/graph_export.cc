// Graph export by file extension, with the drawing size limit; see
// graph_export.h.
#include "visualizer/graph_export.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/atomic_output_file.h"
#include "base/status_macros.h"
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
    for (NodeIndex i = 0; i < traces[t].model.size(); ++i) {
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

int64_t EstimateLayoutSize(const VizGraph& graph) {
  const size_t n = graph.nodes.size();
  std::vector<uint32_t> pending(n, 0);
  std::vector<std::vector<uint32_t>> users(n);
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    const VizEdge& e = graph.edges[k];
    if (!IsDrawnEdge(graph, k) || e.kind == EdgeKind::kCollective ||
        e.kind == EdgeKind::kPeer) {
      continue;  // drawn with constraint=false: no effect on layering
    }
    users[e.from].push_back(e.to);
    ++pending[e.to];
  }
  // Longest-path layering by Kahn's algorithm; nodes left in cycles get span 1.
  std::vector<int64_t> level(n, 0);
  std::vector<uint8_t> done(n, 0);
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const uint32_t i = ready.back();
    ready.pop_back();
    done[i] = 1;
    for (uint32_t u : users[i]) {
      level[u] = std::max(level[u], level[i] + 1);
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  int64_t size = static_cast<int64_t>(n);
  for (const VizEdge& e : graph.edges) {
    const bool ranked = done[e.from] && done[e.to];
    size += ranked ? std::max<int64_t>(
                         std::llabs(level[e.to] - level[e.from]) - 1, 0)
                   : 0;
  }
  return size;
}

absl::Status CheckDrawingSize(const VizGraph& graph,
                              const std::vector<RankTrace>& traces,
                              const std::vector<RankSelection>& selections,
                              const NodeFilter& filter, int64_t max_nodes) {
  if (max_nodes <= 0) return absl::OkStatus();
  const int64_t n = static_cast<int64_t>(graph.nodes.size());
  std::string problem;
  int64_t fitting_nodes = max_nodes;
  if (n > max_nodes) {
    problem = absl::StrFormat(
        "the graph to draw has %d nodes, above the limit of %d", n, max_nodes);
  } else {
    const int64_t layout = EstimateLayoutSize(graph);
    const int64_t budget = kLayoutUnitsPerNode * max_nodes;
    if (layout <= budget) return absl::OkStatus();
    problem = absl::StrFormat(
        "the graph to draw has %d nodes, but its edges span so many layers "
        "that "
        "Graphviz would lay out about %d nodes (virtual ones included), above "
        "the "
        "limit of %d",
        n, layout, budget);
    fitting_nodes = std::max<int64_t>(1, n * budget / layout / 2);
  }
  std::vector<std::string> hints;
  int64_t fitting = 0;
  const int32_t depth =
      DeepestFittingDepth(traces, selections, fitting_nodes, &fitting);
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
  hints.push_back(FirstIdsHint(graph, fitting_nodes));
  hints.push_back("--name REGEX");
  hints.push_back("--type compute|collective|gpu|...");
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s (Graphviz would run for minutes to hours and the page would be "
      "unreadable); narrow it with %s; or raise --max-nodes, or write "
      ".graphml/.json, which have no limit",
      problem, absl::StrJoin(hints, ", ")));
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
