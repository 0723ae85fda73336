// DOT output for et-viz; see dot_writer.h.
#include "visualizer/dot_writer.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "visualizer/page_layout.h"
#include "visualizer/repeat_folding.h"
#include "visualizer/text_escape.h"

namespace et::viz {
namespace {

// 44 characters keeps a box about 3 cm wide at fontsize 9: long aten schemas
// and Triton kernel names would otherwise stretch every rank of the layout.
constexpr size_t kMaxNameChars = 44;

struct NodeStyle {
  const char* shape;
  const char* fill;
};

NodeStyle StyleOf(DrawKind kind, Device device) {
  switch (kind) {
    case DrawKind::kCompute:
      return {"box", device == Device::kGpu ? "#d3ecd1" : "#dbe8f7"};
    case DrawKind::kCollective:
      return {"hexagon", "#f9c89b"};
    case DrawKind::kSendRecv:
      return {"cds", "#fbe7a1"};
    case DrawKind::kMemory:
      return {"cylinder", "#e3d5f3"};
    case DrawKind::kMetadata:
      return {"note", "#f4f4f4"};
    case DrawKind::kOther:
      return {"ellipse", "#ffffff"};
  }
  return {"ellipse", "#ffffff"};
}

const char* BorderOf(Device device) {
  switch (device) {
    case Device::kGpu:
      return "#2e7d32";
    case Device::kCpu:
      return "#1f4e79";
  }
  return "#1f4e79";
}

std::string NodeLabel(const VizNode& n) {
  std::vector<std::string> facts = {absl::StrCat("#", n.id)};
  if (n.duration_ns > 0) facts.push_back(HumanDuration(n.duration_ns));
  if (n.bytes > 0) facts.push_back(HumanBytes(n.bytes));
  std::string label = absl::StrCat(Abbreviate(n.name, kMaxNameChars), "\n",
                                   absl::StrJoin(facts, "  "));
  if (!n.comm_type.empty()) {
    absl::StrAppend(&label, "\n", n.comm_type);
    if (!n.pg_name.empty()) absl::StrAppend(&label, "  pg ", n.pg_name);
  }
  if (n.folded > 0) absl::StrAppend(&label, "\n+", n.folded, " ops inside");
  return DotEscape(label);
}

void AppendNode(const VizNode& n, const std::string& indent, std::string* out) {
  const NodeStyle style = StyleOf(n.kind, n.device);
  absl::StrAppendFormat(
      out,
      "%s\"%s\" [label=\"%s\", shape=%s, fillcolor=\"%s\", color=\"%s\"%s];\n",
      indent, VizGraph::NodeKey(n), NodeLabel(n), style.shape, style.fill,
      BorderOf(n.device), n.device == Device::kGpu ? ", penwidth=1.6" : "");
}

std::string EdgeAttrs(EdgeKind kind, bool crosses_columns) {
  // An edge to another page column must not rank its ends, or dot stacks the
  // columns again.
  if (crosses_columns && kind != EdgeKind::kCollective &&
      kind != EdgeKind::kPeer) {
    return absl::StrCat(EdgeAttrs(kind, false), ", constraint=false");
  }
  switch (kind) {
    case EdgeKind::kData:
      return "color=\"#333333\"";
    case EdgeKind::kCtrl:
      return "style=dashed, color=\"#8c8c8c\"";
    case EdgeKind::kCollective:
      return "style=bold, color=\"#d35400\", penwidth=2, dir=none, "
             "constraint=false";
    case EdgeKind::kPeer:
      return "color=\"#b7950b\", penwidth=1.5, constraint=false";
  }
  return "";
}

// One bold table row per title line: lines, not one long one, so that the
// title is no wider than a page column.
std::string TitleRows(const std::vector<std::string>& lines) {
  std::string rows;
  for (const std::string& line : lines) {
    if (!line.empty())
      absl::StrAppend(&rows, "<tr><td><b>", XmlEscape(line), "</b></td></tr>");
  }
  return rows;
}

// A legend row per kind/device combination present, as an HTML-like table
// label.
std::string LegendLabel(const VizGraph& graph,
                        const std::vector<std::string>& title_lines) {
  std::set<std::pair<DrawKind, Device>> present;
  for (const VizNode& n : graph.nodes) present.insert({n.kind, n.device});
  std::string cells;
  for (const auto& [kind, device] : present) {
    const std::string text =
        absl::StrCat(KindName(kind), " ", DeviceName(device));
    absl::StrAppendFormat(&cells, "<td bgcolor=\"%s\">%s (%s)</td>",
                          StyleOf(kind, device).fill, text,
                          StyleOf(kind, device).shape);
  }
  absl::StrAppend(&cells, "<td>&#8594; data</td><td>- - &#8594; ctrl</td>");
  if (graph.ranks.size() > 1) {
    absl::StrAppend(
        &cells, "<td><font color=\"#d35400\">&#9473; collective</font></td>");
  }
  // Title and legend in separate nested tables, so the legend cells keep their
  // own width.
  return absl::StrFormat(
      "<<table border=\"0\" "
      "cellspacing=\"0\">%s<tr><td>"
      "<table border=\"0\" cellspacing=\"2\" "
      "cellpadding=\"3\"><tr>%s</tr></table>"
      "</td></tr></table>>",
      TitleRows(title_lines), cells);
}

// One page column of a rank: its tracks as clusters, inside a borderless
// cluster of its own when the rank is folded into several columns.
void AppendColumn(const VizGraph& graph, int rank, int32_t column,
                  int32_t columns,
                  const std::map<Queue, std::vector<uint32_t>>& tracks,
                  const std::vector<std::string>& connectors,
                  std::string indent, std::string* out) {
  const bool folded = columns > 1;
  if (folded) {
    absl::StrAppendFormat(out,
                          "%ssubgraph \"cluster_r%d_c%d\" {\n%s  label=\"part "
                          "%d of %d\"; style=\"dashed\"; color=\"#d0d0d0\";\n",
                          indent, rank, column, indent, column + 1, columns);
    indent += "  ";
  }
  for (const auto& [track, members] : tracks) {
    const std::string track_name =
        QueueName(track, graph.nodes[members.front()].pg_name);
    // Every node has a track (the model's queue), so every node is in one.
    absl::StrAppendFormat(
        out,
        "%ssubgraph \"cluster_r%d_c%d_%s\" {\n%s  label=\"%s\"; "
        "style=\"rounded,filled\"; fillcolor=\"#fafafa\"; "
        "color=\"#bdbdbd\";\n",
        indent, rank, column, track_name, indent, track_name);
    const std::string inner = indent + "  ";
    // The drawn instance of a repeat run sits in a box that says what it
    // stands for; the other nodes sit directly in the track.
    std::map<int32_t, std::vector<uint32_t>> by_repeat;
    for (uint32_t k : members) by_repeat[graph.nodes[k].repeat].push_back(k);
    for (const auto& [repeat, nodes] : by_repeat) {
      if (repeat < 0) {
        for (uint32_t k : nodes) AppendNode(graph.nodes[k], inner, out);
        continue;
      }
      const RepeatRun& run = graph.repeats[repeat];
      absl::StrAppendFormat(
          out,
          "%ssubgraph \"cluster_r%d_c%d_%s_x%d\" {\n%s  label=\"%s: %d more "
          "folded (%d nodes)\"; style=\"dashed,rounded\"; "
          "color=\"#7b1fa2\"; fontcolor=\"#7b1fa2\";\n",
          inner, rank, column, track_name, repeat, inner,
          DotEscape(RepeatLabel(run)), run.count - 1, run.folded_nodes());
      for (uint32_t k : nodes) AppendNode(graph.nodes[k], inner + "  ", out);
      absl::StrAppend(out, inner, "}\n");
    }
    absl::StrAppend(out, indent, "}\n");
  }
  for (const std::string& c : connectors) absl::StrAppend(out, indent, c);
  if (folded) absl::StrAppend(out, indent.substr(2), "}\n");
}

// What one DOT graph draws: the page columns of `folding`, and of a drawing
// split over printed pages (`plan`), the nodes on page `page` only.
struct DrawScope {
  const PageFolding& folding;
  const PagePlan* plan = nullptr;
  int32_t page = 0;
  bool On(uint32_t k) const { return plan == nullptr || plan->page[k] == page; }
  bool Split(uint32_t a, uint32_t b) const {
    return plan != nullptr && plan->page[a] != plan->page[b];
  }
};

// The edges from other page columns into a node are drawn as one off-page
// connector, as in a flowchart: a small box above the node naming the sources
// ("from #5204 (part 1), #5230 (part 2)") with one short edge into it. Drawn as
// lines instead, dot routes each as a chain of virtual nodes beside the
// columns: the forward-to-backward edges of a training step (activations used
// again in its backward pass) once took more than half the page's width (the
// gpt step of tests/data/recorded: 44.3 in wide, 20.8 without them). Every
// edge between two printed pages, of any kind, comes in the same way, on its
// target's page.
bool ViaConnector(const VizGraph& graph, const DrawScope& scope, size_t k) {
  const VizEdge& e = graph.edges[k];
  if (scope.Split(e.from, e.to)) return true;
  return (e.kind == EdgeKind::kData || e.kind == EdgeKind::kCtrl) &&
         graph.nodes[e.from].rank == graph.nodes[e.to].rank &&
         scope.folding.column[e.from] != scope.folding.column[e.to];
}

// Where a connector's source is: its part (page column) on this page, else
// its page (and rank, when another).
std::string SourceName(const VizGraph& graph, const DrawScope& scope,
                       uint32_t from, uint32_t to) {
  const VizNode& n = graph.nodes[from];
  const int32_t part = scope.folding.column[from] + 1;
  if (!scope.Split(from, to))
    return absl::StrFormat("#%d (part %d)", n.id, part);
  const int32_t page = scope.plan->page[from] + 1;
  if (n.rank != graph.nodes[to].rank)
    return absl::StrFormat("#%d (rank %d, page %d)", n.id, n.rank, page);
  return absl::StrFormat("#%d (page %d, part %d)", n.id, page, part);
}

std::string ConnectorKey(const VizNode& to) {
  return absl::StrCat("from_", VizGraph::NodeKey(to));
}

// A connector's sources named in its box, at most this many (then "+N").
constexpr size_t kMaxConnectorSources = 6;

struct Connectors {
  // Per (rank, column): the connector nodes' DOT lines.
  std::map<std::pair<int, int32_t>, std::vector<std::string>> nodes;
  // Per target node: the kind of its connector's edge (the first in
  // EdgeKind's order among its edges: data if any is).
  std::map<uint32_t, EdgeKind> edge_kind;
  // The edges the connectors stand for.
  size_t edges = 0;
};

Connectors MakeConnectors(const VizGraph& graph, const DrawScope& scope) {
  std::map<uint32_t, std::vector<uint32_t>> sources;  // target -> sources
  Connectors out;
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    const VizEdge& e = graph.edges[k];
    if (!IsDrawnEdge(graph, k) || !scope.On(e.to) ||
        !ViaConnector(graph, scope, k))
      continue;
    sources[e.to].push_back(e.from);
    ++out.edges;
    auto [it, added] = out.edge_kind.try_emplace(e.to, e.kind);
    it->second = std::min(it->second, e.kind);
  }
  for (const auto& [to, from] : sources) {
    std::vector<std::string> names;
    for (size_t i = 0; i < from.size() && i < kMaxConnectorSources; ++i)
      names.push_back(SourceName(graph, scope, from[i], to));
    if (from.size() > kMaxConnectorSources)
      names.push_back(absl::StrCat("+", from.size() - kMaxConnectorSources));
    const VizNode& n = graph.nodes[to];
    out.nodes[{n.rank, scope.folding.column[to]}].push_back(absl::StrFormat(
        "\"%s\" [label=\"from %s\", shape=box, style=\"rounded,dashed\", "
        "fontsize=8, height=0.2, margin=\"0.04,0.01\", color=\"#8c8c8c\"];\n",
        ConnectorKey(n), absl::StrJoin(names, ",\\n")));
  }
  return out;
}

// Keeps a folded rank's page columns left to right in reading order. dot
// orders clusters to reduce crossings, and the edges between columns (from the
// foot of one to the head of the next) pull them out of order (parts 1, 3, 2);
// neither the input order, remincross nor ordering=out holds them, and an edge
// between same-rank nodes of different clusters is not kept either. So one
// invisible anchor per column sits in the rank's own graph, the anchors on
// one rank are chained left to right (an order dot keeps between nodes of the
// same cluster), and each anchor points at its column's head nodes (those on
// the column's first layer), which then sit under it, or at a head's off-page
// connector, which sits above it (pointing at the node under its connector
// laid the tensor-parallel ranks' columns out as 4, 3, 2, 1).
void AppendColumnAnchors(const VizGraph& graph, int rank,
                         const DrawScope& scope, const NodeLayers& layers,
                         const Connectors& connectors,
                         const std::string& indent, std::string* out) {
  std::map<int32_t, std::pair<int64_t, std::vector<uint32_t>>> heads;
  for (uint32_t k = 0; k < graph.nodes.size(); ++k) {
    if (graph.nodes[k].rank != rank || !scope.On(k)) continue;
    auto [it, added] = heads.try_emplace(
        scope.folding.column[k], layers.layer[k], std::vector<uint32_t>{});
    auto& [first_layer, nodes] = it->second;
    if (layers.layer[k] < first_layer) {
      first_layer = layers.layer[k];
      nodes.clear();
    }
    if (layers.layer[k] == first_layer) nodes.push_back(k);
  }
  if (heads.size() < 2) return;
  std::vector<std::string> anchors;
  for (const auto& [column, head] : heads) {
    anchors.push_back(absl::StrFormat("\"column_r%d_c%d\"", rank, column));
    absl::StrAppendFormat(out,
                          "%s%s [style=invis, shape=point, width=0, height=0, "
                          "label=\"\"];\n",
                          indent, anchors.back());
    for (uint32_t k : head.second) {
      absl::StrAppendFormat(out, "%s%s -> \"%s\" [style=invis];\n", indent,
                            anchors.back(),
                            connectors.edge_kind.count(k) > 0
                                ? ConnectorKey(graph.nodes[k])
                                : VizGraph::NodeKey(graph.nodes[k]));
    }
  }
  absl::StrAppend(out, indent, "{ rank=same; ", absl::StrJoin(anchors, " -> "),
                  " [style=invis]; }\n");
}

}  // namespace

// Edges are sorted by (from, to, kind) and kData < kCtrl: a control edge that
// repeats a data edge adds no order and would double every line, so it is not
// drawn.
bool IsDrawnEdge(const VizGraph& graph, size_t k) {
  const VizEdge& e = graph.edges[k];
  return !(e.kind == EdgeKind::kCtrl && k > 0 &&
           graph.edges[k - 1].kind == EdgeKind::kData &&
           graph.edges[k - 1].from == e.from && graph.edges[k - 1].to == e.to);
}

size_t DrawnEdgeCount(const VizGraph& graph) {
  size_t count = 0;
  for (size_t k = 0; k < graph.edges.size(); ++k)
    count += IsDrawnEdge(graph, k) ? 1 : 0;
  return count;
}

DrawnSize DrawnSizeOf(const VizGraph& graph, const PagePlan* plan,
                      int32_t page) {
  const PageFolding folding =
      plan == nullptr ? FoldForPage(graph, LayerNodes(graph)) : PageFolding{};
  const DrawScope scope{plan == nullptr ? folding : plan->folding, plan, page};
  const Connectors connectors = MakeConnectors(graph, scope);
  DrawnSize out{connectors.edge_kind.size(), connectors.edge_kind.size()};
  out.connector_edges = connectors.edges;
  for (uint32_t k = 0; k < graph.nodes.size(); ++k) out.nodes += scope.On(k);
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    const VizEdge& e = graph.edges[k];
    if (IsDrawnEdge(graph, k) && scope.On(e.from) && scope.On(e.to) &&
        !ViaConnector(graph, scope, k))
      ++out.edges;
  }
  return out;
}

namespace {

// On a printed page: which page, rank and columns it is.
std::string PageLine(const VizGraph& graph, const DotOptions& options) {
  if (options.plan == nullptr) return "";
  const PagePlan::Span& span = options.plan->spans[options.page];
  const int32_t columns = options.plan->folding.rank_columns.at(span.rank);
  const auto nodes = std::count(options.plan->page.begin(),
                                options.plan->page.end(), options.page);
  return absl::StrFormat(
      "page %d of %d (%d nodes): %s%s", options.page + 1, options.plan->pages,
      nodes,
      graph.ranks.size() > 1 ? absl::StrCat("rank ", span.rank, ", ") : "",
      span.first_column == span.last_column
          ? absl::StrFormat("part %d of %d", span.first_column + 1, columns)
          : absl::StrFormat("parts %d-%d of %d", span.first_column + 1,
                            span.last_column + 1, columns));
}

// The title's lines: the input and what the drawing holds.
std::vector<std::string> DrawingTitle(const VizGraph& graph,
                                      const DotOptions& options) {
  std::vector<std::string> lines(1);
  std::string& title = lines[0];
  title = absl::StrFormat("%s%s%d of %d nodes, %d edges", options.title,
                          options.title.empty() ? "" : ": ", graph.nodes.size(),
                          graph.input_nodes, graph.edges.size());
  if (!graph.repeats.empty()) {
    lines.push_back(absl::StrFormat(
        "%d more nodes in %d repeated runs folded (boxes marked x N)",
        graph.repeat_folded_nodes, graph.repeats.size()));
  }
  lines.push_back(PageLine(graph, options));
  return lines;
}

}  // namespace

std::string WriteDot(const VizGraph& graph, const DotOptions& options) {
  std::string out = "digraph et {\n";
  absl::StrAppend(&out,
                  "  graph [rankdir=TB, newrank=true, fontname=\"Helvetica\", ",
                  "fontsize=10, nodesep=0.18, ranksep=0.3, labelloc=t, label=",
                  LegendLabel(graph, DrawingTitle(graph, options)), "];\n");
  absl::StrAppend(
      &out,
      "  node [fontname=\"Helvetica\", fontsize=9, style=\"rounded,filled\", ",
      "margin=\"0.06,0.03\", height=0.3];\n");
  absl::StrAppend(&out, "  edge [arrowsize=0.6, penwidth=0.9];\n");
  // Group node indices: rank -> page column -> track -> nodes (maps keep the
  // output deterministic).
  const NodeLayers layers = LayerNodes(graph);
  const PageFolding own_folding =
      options.plan == nullptr ? FoldForPage(graph, layers) : PageFolding{};
  const DrawScope scope{
      options.plan == nullptr ? own_folding : options.plan->folding,
      options.plan, options.page};
  const PageFolding& folding = scope.folding;
  std::map<int, std::map<int32_t, std::map<Queue, std::vector<uint32_t>>>>
      groups;
  for (uint32_t k = 0; k < graph.nodes.size(); ++k) {
    if (!scope.On(k)) continue;
    groups[graph.nodes[k].rank][folding.column[k]][graph.nodes[k].queue]
        .push_back(k);
  }
  const Connectors connectors = MakeConnectors(graph, scope);
  const std::vector<std::string> no_connectors;
  const bool multi_rank = groups.size() > 1;
  for (const auto& [rank, columns] : groups) {
    std::string indent = "  ";
    if (multi_rank) {
      absl::StrAppendFormat(
          &out,
          "  subgraph \"cluster_r%d\" {\n    label=\"rank %d\"; "
          "style=\"rounded\"; color=\"#7f7f7f\"; fontsize=12;\n",
          rank, rank);
      indent = "    ";
    }
    for (const auto& [column, tracks] : columns) {
      auto it = connectors.nodes.find({rank, column});
      AppendColumn(graph, rank, column, folding.rank_columns.at(rank), tracks,
                   it == connectors.nodes.end() ? no_connectors : it->second,
                   indent, &out);
    }
    AppendColumnAnchors(graph, rank, scope, layers, connectors, indent, &out);
    if (multi_rank) absl::StrAppend(&out, "  }\n");
  }
  for (const auto& [to, kind] : connectors.edge_kind) {
    // The connector sits above its node: its edge ranks them, whatever kind.
    absl::StrAppendFormat(&out, "  \"%s\" -> \"%s\" [%s];\n",
                          ConnectorKey(graph.nodes[to]),
                          VizGraph::NodeKey(graph.nodes[to]),
                          absl::StrReplaceAll(EdgeAttrs(kind, false),
                                              {{", constraint=false", ""}}));
  }
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    const VizEdge& e = graph.edges[k];
    if (!IsDrawnEdge(graph, k) || !scope.On(e.from) || !scope.On(e.to) ||
        ViaConnector(graph, scope, k))
      continue;
    absl::StrAppendFormat(
        &out, "  \"%s\" -> \"%s\" [%s];\n",
        VizGraph::NodeKey(graph.nodes[e.from]),
        VizGraph::NodeKey(graph.nodes[e.to]),
        EdgeAttrs(e.kind, folding.column[e.from] != folding.column[e.to]));
  }
  out += "}\n";
  return out;
}

}  // namespace et::viz
