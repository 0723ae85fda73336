// Graph export by file extension, with the drawing size limit; see
// graph_export.h.
#include "visualizer/graph_export.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/atomic_output_file.h"
#include "base/status_macros.h"
#include "visualizer/dot_renderer.h"
#include "visualizer/dot_writer.h"
#include "visualizer/graphml_writer.h"
#include "visualizer/node_link_json_writer.h"
#include "visualizer/page_layout.h"
#include "visualizer/printed_pages.h"
#include "visualizer/repeat_folding.h"

namespace et::viz {
namespace {}  // namespace

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

bool WithinDrawingLimits(const VizGraph& graph, int64_t max_nodes) {
  return max_nodes <= 0 ||
         (static_cast<int64_t>(graph.nodes.size()) <= max_nodes &&
          EstimateLayoutSize(graph) <= kLayoutUnitsPerNode * max_nodes);
}

absl::StatusOr<RepeatMode> ParseRepeatMode(absl::string_view text) {
  if (text == "auto") return RepeatMode::kAuto;
  if (text == "fold") return RepeatMode::kFold;
  if (text == "keep") return RepeatMode::kKeep;
  return absl::InvalidArgumentError(
      absl::StrFormat("--repeats '%s': expected auto, fold or keep", text));
}

bool ShouldFoldRepeats(const VizGraph& graph, GraphFormat format,
                       RepeatMode mode, int64_t max_nodes) {
  switch (mode) {
    case RepeatMode::kFold:
      return true;
    case RepeatMode::kKeep:
      return false;
    case RepeatMode::kAuto:
      break;
  }
  const bool page = format == GraphFormat::kPdf ||
                    format == GraphFormat::kSvg || format == GraphFormat::kPng;
  if (!page) return false;
  return !WithinDrawingLimits(graph, max_nodes) ||
         FoldForPage(graph, LayerNodes(graph)).max_columns > 1;
}

int64_t EstimateLayoutSize(const VizGraph& graph) {
  const NodeLayers layers = LayerNodes(graph);
  // The DOT as WriteDot writes it: an edge between ranks (collectives) or to
  // a peer does not rank its ends (constraint=false), and one between page
  // columns comes from an off-page connector just above its target, so dot
  // inserts no virtual nodes for either. Counting them refused a 4-rank step
  // that dot laid out in 1.8 s.
  const PageFolding folding = FoldForPage(graph, layers);
  int64_t size = static_cast<int64_t>(graph.nodes.size());
  for (const VizEdge& e : graph.edges) {
    if (e.kind == EdgeKind::kCollective || e.kind == EdgeKind::kPeer ||
        folding.column[e.from] != folding.column[e.to]) {
      continue;
    }
    const bool ranked = layers.ranked[e.from] && layers.ranked[e.to];
    size +=
        ranked
            ? std::max<int64_t>(
                  std::llabs(layers.layer[e.to] - layers.layer[e.from]) - 1, 0)
            : 0;
  }
  return size;
}

namespace {

// Whether the drawing `filter` selects passes the size check; its node count
// as drawn (repeats folded where et-viz would fold them: `style`).
bool DrawingFits(const std::vector<RankTrace>& traces, const NodeFilter& filter,
                 int64_t max_nodes, const DrawingStyle& style, int64_t* nodes,
                 int64_t* layout = nullptr) {
  absl::StatusOr<std::vector<RankSelection>> sel = SelectNodes(traces, filter);
  if (!sel.ok()) return false;
  VizGraph g = BuildVizGraph(traces, *sel);
  if (ShouldFoldRepeats(g, style.format, style.repeats, max_nodes))
    g = FoldRepeats(g);
  *nodes = static_cast<int64_t>(g.nodes.size());
  if (layout != nullptr) *layout = EstimateLayoutSize(g);
  return WithinDrawingLimits(g, max_nodes);
}

// "--ids A:B (its first N nodes)": the longest prefix of the nodes `filter`
// selects (of its first rank) whose drawing fits, found by bisection, N
// counted as drawn; "" when not even one node fits.
std::string FirstIdsHint(const std::vector<RankTrace>& traces,
                         const NodeFilter& filter, int64_t max_nodes,
                         const DrawingStyle& style) {
  absl::StatusOr<std::vector<RankSelection>> sel = SelectNodes(traces, filter);
  if (!sel.ok()) return "";
  const VizGraph g = BuildVizGraph(traces, *sel);
  if (g.nodes.empty()) return "";
  size_t prefix = 1;  // the first rank's nodes only: --ids spans every rank
  while (prefix < g.nodes.size() && g.nodes[prefix].rank == g.nodes[0].rank)
    ++prefix;
  NodeFilter narrowed = filter;
  narrowed.min_id = g.nodes.front().id;
  size_t lo = 0, hi = prefix + 1;  // prefix lengths: lo fits, hi not
  int64_t lo_nodes = 0;
  while (hi - lo > 1) {
    const size_t mid = (lo + hi) / 2;
    narrowed.max_id = g.nodes[mid - 1].id;
    int64_t nodes = 0;
    if (DrawingFits(traces, narrowed, max_nodes, style, &nodes)) {
      lo = mid;
      lo_nodes = nodes;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return "";
  return absl::StrFormat("--ids %d:%d (%d node%s)", g.nodes.front().id,
                         g.nodes[lo - 1].id, lo_nodes,
                         lo_nodes == 1 ? "" : "s");
}

// "--depth D --collapse (N nodes)": the deepest depth whose drawing fits,
// N as drawn; "" when not even depth 0 fits.
std::string DepthHint(const std::vector<RankTrace>& traces,
                      const NodeFilter& filter, int64_t max_nodes,
                      const DrawingStyle& style) {
  int32_t deepest = 0;
  for (const RankTrace& t : traces) {
    for (NodeIndex i = 0; i < t.model.size(); ++i)
      deepest = std::max(deepest, t.hierarchy.depth(i));
  }
  NodeFilter narrowed = filter;
  narrowed.collapse = true;
  for (int32_t depth = std::min(deepest, filter.max_depth.value_or(deepest));
       depth >= 0; --depth) {
    narrowed.max_depth = depth;
    int64_t nodes = 0;
    if (DrawingFits(traces, narrowed, max_nodes, style, &nodes))
      return absl::StrFormat("--depth %d --collapse (%d node%s)", depth, nodes,
                             nodes == 1 ? "" : "s");
  }
  return "";
}

// "--step N" with the nodes each step would draw under the current filter and
// whether that drawing passes the same size check, so the step a user picks
// fits on the first try: "--step N (5: 412 nodes)", the others marked too
// large. When no step fits alone, the deepest `--depth D --collapse` that
// makes the first one fit. The first kMaxStepsChecked steps are checked.
constexpr size_t kMaxStepsChecked = 16;
std::string StepHint(const std::vector<RankTrace>& traces,
                     const NodeFilter& filter, int64_t max_nodes,
                     const DrawingStyle& style) {
  std::vector<int64_t> steps;
  for (const RankTrace& t : traces) {
    for (int64_t s : ProfilerSteps(t)) steps.push_back(s);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  if (steps.empty()) return "";
  if (steps.size() > kMaxStepsChecked) steps.resize(kMaxStepsChecked);
  std::vector<std::string> fit, too_big;
  for (int64_t step : steps) {
    NodeFilter one = filter;
    one.step = step;
    int64_t nodes = 0, layout = 0;
    const bool fits =
        DrawingFits(traces, one, max_nodes, style, &nodes, &layout);
    // A step refused under the node limit is refused for its layout: said,
    // or "0: 812 nodes" reads as fitting a limit of 2,000.
    if (fits || nodes > max_nodes) {
      (fits ? fit : too_big)
          .push_back(absl::StrFormat("%d: %d nodes", step, nodes));
    } else {
      too_big.push_back(absl::StrFormat(
          "%d: %d nodes, about %d laid out with virtual ones, above %d", step,
          nodes, layout, kLayoutUnitsPerNode * max_nodes));
    }
  }
  if (!fit.empty()) {
    return absl::StrFormat(
        "--step N (%s%s%s)", absl::StrJoin(fit, ", "),
        too_big.empty() ? "" : "; too large: ", absl::StrJoin(too_big, ", "));
  }
  NodeFilter first = filter;
  first.step = steps.front();
  // A depth to cut first; flat graphs (et-convert keeps the outermost ops)
  // have none: then the longest prefix of the first step's ids that fits.
  std::string narrower = DepthHint(traces, first, max_nodes, style);
  if (narrower.empty()) {
    narrower = FirstIdsHint(traces, first, max_nodes, style);
    absl::StrReplaceAll({{" (", " (its first "}}, &narrower);
  }
  if (!narrower.empty() && narrower.back() == ')') {
    narrower.pop_back();
    return absl::StrFormat("--step %d %s; each step alone is too large: %s)",
                           steps.front(), narrower,
                           absl::StrJoin(too_big, ", "));
  }
  return absl::StrFormat(
      "--step N with another filter (every step is too large alone: %s)",
      absl::StrJoin(too_big, ", "));
}

}  // namespace

absl::Status CheckDrawingSize(const VizGraph& graph,
                              const std::vector<RankTrace>& traces,
                              const NodeFilter& filter, int64_t max_nodes,
                              const DrawingStyle& style) {
  if (max_nodes <= 0) return absl::OkStatus();
  const int64_t n = static_cast<int64_t>(graph.nodes.size());
  std::string problem;
  const std::string folded =
      graph.repeat_folded_nodes > 0
          ? absl::StrFormat(" (after folding %d repeated nodes)",
                            graph.repeat_folded_nodes)
          : "";
  if (n > max_nodes) {
    problem = absl::StrFormat(
        "the graph to draw has %d nodes%s, above the limit of %d", n, folded,
        max_nodes);
  } else {
    const int64_t layout = EstimateLayoutSize(graph);
    const int64_t budget = kLayoutUnitsPerNode * max_nodes;
    if (layout <= budget) return absl::OkStatus();
    problem = absl::StrFormat(
        "the graph to draw has %d nodes%s, but its edges span so many layers "
        "that Graphviz would lay out about %d nodes (virtual ones included), "
        "above the limit of %d",
        n, folded, layout, budget);
  }
  // Every count a hint gives is of the drawing it selects, built and folded
  // as et-viz will draw it: the hint draws what it promises.
  std::vector<std::string> hints;
  if (!filter.max_depth) {
    if (std::string depth = DepthHint(traces, filter, max_nodes, style);
        !depth.empty()) {
      hints.push_back(depth);
    }
  }
  if (!filter.step) {
    if (std::string steps = StepHint(traces, filter, max_nodes, style);
        !steps.empty()) {
      hints.push_back(steps);
    }
  }
  if (std::string ids = FirstIdsHint(traces, filter, max_nodes, style);
      !ids.empty()) {
    hints.push_back(ids);
  }
  hints.push_back("--name REGEX");
  hints.push_back("--type compute|collective|gpu|...");
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s (Graphviz would run for minutes to hours and the page would be "
      "unreadable); narrow it with %s; or raise --max-nodes, or write "
      ".graphml/.json, which have no limit",
      problem, absl::StrJoin(hints, ", ")));
}

absl::StatusOr<Exported> ExportGraph(const VizGraph& graph,
                                     const std::string& path,
                                     const ExportOptions& options) {
  ASSIGN_OR_RETURN(GraphFormat format, GraphFormatFromPath(path));
  switch (format) {
    case GraphFormat::kGraphMl:
      RETURN_IF_ERROR(WriteFileAtomically(path, WriteGraphMl(graph)));
      return Exported{{path}, ""};
    case GraphFormat::kJson:
      RETURN_IF_ERROR(WriteFileAtomically(path, WriteNodeLinkJson(graph)));
      return Exported{{path}, ""};
    default:
      break;
  }
  if (options.max_nodes > 0 &&
      static_cast<int64_t>(graph.nodes.size()) > options.max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("%s: %d nodes is above the drawing limit of %d", path,
                        graph.nodes.size(), options.max_nodes));
  }
  const DotOptions dot_options{options.title};
  if (format == GraphFormat::kDot) {
    RETURN_IF_ERROR(WriteFileAtomically(path, WriteDot(graph, dot_options)));
    return Exported{{path}, ""};
  }
  const char* renderer = format == GraphFormat::kPdf   ? "pdf"
                         : format == GraphFormat::kSvg ? "svg"
                                                       : "png";
  ASSIGN_OR_RETURN(DrawnPages drawn,
                   DrawOnPages(graph, renderer, path, dot_options,
                               options.dot_program, options.split_pages));
  Exported out{std::move(drawn.files), std::move(drawn.note)};
  if (drawn.straight_lines) {
    absl::StrAppend(&out.note, out.note.empty() ? "" : "; ",
                    "edges drawn as straight lines: Graphviz could not route "
                    "one as a curve");
  }
  return out;
}

}  // namespace et::viz
