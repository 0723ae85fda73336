// Page folding for drawings; see page_layout.h.
#include "visualizer/page_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>

#include "visualizer/dot_writer.h"

namespace et::viz {
namespace {

// Box size with spacing, in points (Helvetica 9 pt, as dot_writer draws), and
// the page's height over its width.
constexpr double kNodeHeightPt = 50;
constexpr double kNodeBaseWidthPt = 20;
constexpr double kWidthPtPerChar = 4.6;
constexpr size_t kMinLabelChars = 12;
constexpr size_t kMaxLabelChars = 44;  // dot_writer cuts names there
constexpr double kPageAspect = 1.3;
constexpr double kVirtualNodeWidthPt = 18;  // nodesep 0.18 in + the line

// A rank's typical box width: from the median name length of its nodes.
double NodeWidthPt(std::vector<size_t> name_chars) {
  if (name_chars.empty()) return kNodeBaseWidthPt;
  auto mid = name_chars.begin() + name_chars.size() / 2;
  std::nth_element(name_chars.begin(), mid, name_chars.end());
  const size_t chars = std::clamp(*mid, kMinLabelChars, kMaxLabelChars);
  return kNodeBaseWidthPt + kWidthPtPerChar * static_cast<double>(chars);
}

bool Constrains(const VizGraph& graph, size_t k) {
  const EdgeKind kind = graph.edges[k].kind;
  return IsDrawnEdge(graph, k) && kind != EdgeKind::kCollective &&
         kind != EdgeKind::kPeer;
}

// Each node's column: its layer over its rank's layers per column.
void AssignColumns(const VizGraph& graph, const NodeLayers& layers,
                   const std::map<int, int64_t>& layers_per_column,
                   PageFolding* out) {
  out->column.assign(graph.nodes.size(), 0);
  out->layers_per_column = layers_per_column;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const int rank = graph.nodes[i].rank;
    out->column[i] =
        static_cast<int32_t>(layers.layer[i] / layers_per_column.at(rank));
    int32_t& columns = out->rank_columns[rank];
    columns = std::max(columns, out->column[i] + 1);
    out->max_columns = std::max(out->max_columns, columns);
  }
}

}  // namespace

NodeLayers LayerNodes(const VizGraph& graph) {
  const size_t n = graph.nodes.size();
  std::vector<uint32_t> pending(n, 0);
  std::vector<std::vector<uint32_t>> users(n);
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    if (!Constrains(graph, k)) continue;
    users[graph.edges[k].from].push_back(graph.edges[k].to);
    ++pending[graph.edges[k].to];
  }
  // Kahn's algorithm; nodes left in cycles are never ranked.
  NodeLayers out{std::vector<int64_t>(n, 0), std::vector<uint8_t>(n, 0)};
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const uint32_t i = ready.back();
    ready.pop_back();
    out.ranked[i] = 1;
    for (uint32_t u : users[i]) {
      out.layer[u] = std::max(out.layer[u], out.layer[i] + 1);
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  return out;
}

PageFolding FoldForPage(const VizGraph& graph, const NodeLayers& layers) {
  PageFolding out;
  // Per rank: nodes per layer, to find its height and widest layer.
  std::map<int, std::map<int64_t, int64_t>> width_of_layer;
  std::map<int, std::vector<size_t>> name_chars;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ++width_of_layer[graph.nodes[i].rank][layers.layer[i]];
    name_chars[graph.nodes[i].rank].push_back(graph.nodes[i].name.size());
  }
  // Per rank: virtual nodes dot puts where edges span layers, each about
  // kVirtualNodeWidthPt wide; they widen every layer they pass.
  std::map<int, int64_t> virtual_nodes;
  for (size_t k = 0; k < graph.edges.size(); ++k) {
    const VizEdge& e = graph.edges[k];
    if (!Constrains(graph, k) ||
        graph.nodes[e.from].rank != graph.nodes[e.to].rank)
      continue;
    virtual_nodes[graph.nodes[e.from].rank] += std::max<int64_t>(
        std::llabs(layers.layer[e.to] - layers.layer[e.from]) - 1, 0);
  }
  std::map<int, int64_t> layers_per_column;
  for (const auto& [rank, widths] : width_of_layer) {
    const int64_t height = widths.rbegin()->first + 1;
    int64_t widest = 1;
    for (const auto& [layer, count] : widths) widest = std::max(widest, count);
    const double row_width_pt = widest * NodeWidthPt(name_chars[rank]) +
                                kVirtualNodeWidthPt *
                                    static_cast<double>(virtual_nodes[rank]) /
                                    static_cast<double>(height);
    const double ideal = std::sqrt(static_cast<double>(height) * kNodeHeightPt /
                                   (kPageAspect * row_width_pt));
    const int64_t columns =
        height <= kMinFoldedLayers
            ? 1
            : std::clamp<int64_t>(static_cast<int64_t>(std::lround(ideal)), 1,
                                  kMaxPageColumns);
    layers_per_column[rank] = (height + columns - 1) / columns;
  }
  AssignColumns(graph, layers, layers_per_column, &out);
  return out;
}

PageFolding FoldToLayers(const VizGraph& graph, const NodeLayers& layers,
                         int64_t layers_per_column) {
  PageFolding out;
  std::map<int, int64_t> per_rank;
  for (const VizNode& n : graph.nodes)
    per_rank[n.rank] = std::max<int64_t>(layers_per_column, 1);
  AssignColumns(graph, layers, per_rank, &out);
  return out;
}

PagePlan PlanPages(const VizGraph& graph, PageFolding folding,
                   int32_t columns_per_page) {
  columns_per_page = std::max(columns_per_page, 1);
  return PlanPages(graph, std::move(folding),
                   [columns_per_page](int, int32_t first, int32_t last) {
                     return last - first < columns_per_page;
                   });
}

PagePlan PlanPages(const VizGraph& graph, PageFolding folding,
                   const std::function<bool(int, int32_t, int32_t)>& fits) {
  PagePlan plan;
  // Page of each (rank, column), numbered in rank then column order.
  std::map<std::pair<int, int32_t>, int32_t> page_of_column;
  for (const auto& [rank, columns] : folding.rank_columns) {
    for (int32_t first = 0; first < columns;) {
      int32_t last = first;
      while (last + 1 < columns && fits(rank, first, last + 1)) ++last;
      for (int32_t c = first; c <= last; ++c)
        page_of_column[{rank, c}] = static_cast<int32_t>(plan.spans.size());
      plan.spans.push_back({rank, first, last});
      first = last + 1;
    }
  }
  plan.pages = static_cast<int32_t>(plan.spans.size());
  plan.page.resize(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    plan.page[i] = page_of_column[{graph.nodes[i].rank, folding.column[i]}];
  plan.folding = std::move(folding);
  return plan;
}

}  // namespace et::viz
