// Where a drawing's nodes go on a page. Graphviz's dot stacks a graph by its
// dependency layers, so one long chain of ops (a thread's ops in order) comes
// out as a strip a few hundred points wide and thousands tall, unreadable in a
// page view. This folds each rank's layers into side-by-side columns, like
// newspaper columns, so the drawing's shape is close to a page's. Pure
// functions of the graph; deterministic.
#ifndef VISUALIZER_PAGE_LAYOUT_H_
#define VISUALIZER_PAGE_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "visualizer/viz_graph.h"

namespace et::viz {

// Longest-path layer of every node over the drawn edges that constrain dot's
// ranking (data and control; collective and peer edges do not), as dot ranks
// them. Nodes in cycles keep layer 0 and are reported by `ranked` false.
struct NodeLayers {
  std::vector<int64_t> layer;
  std::vector<uint8_t> ranked;
};
NodeLayers LayerNodes(const VizGraph& graph);

// The column of every node (0 = leftmost of its rank) and the columns per
// rank. An edge between two columns must not constrain the ranking
// (constraint=false), or dot stacks the columns again.
struct PageFolding {
  std::vector<int32_t> column;  // per node
  int32_t max_columns = 1;      // over all ranks; 1 = nothing folded
  // Per rank: its columns and the layers in each (the last may hold fewer).
  std::map<int, int32_t> rank_columns;
  std::map<int, int64_t> layers_per_column;
};

// A node box with its spacing is about 50 pt tall and 20 + 4.6 pt per
// character of its rank's median name wide (names are cut at 44 characters:
// 222 pt; 12 at least); a rank with L layers and W nodes in its widest layer
// gets C = round(sqrt(L * 50 / (1.3 * W * width))) columns (a portrait page,
// 1.3 times as tall as wide), at most kMaxPageColumns. A rank of at most
// kMinFoldedLayers layers (~800 pt) fits a page as it is and is not folded.
inline constexpr int64_t kMinFoldedLayers = 16;
inline constexpr int32_t kMaxPageColumns = 12;
PageFolding FoldForPage(const VizGraph& graph, const NodeLayers& layers);

// Every rank folded into columns of at most `layers_per_column` layers (at
// least 1), as many columns as that takes: the folding of a drawing split
// over several printed pages, whose column height is a page's.
PageFolding FoldToLayers(const VizGraph& graph, const NodeLayers& layers,
                         int64_t layers_per_column);

// A drawing split over printed pages: each page holds consecutive page
// columns of one rank (ranks in order, columns left to right), at most
// `columns_per_page` of them. Every node is on exactly one page.
struct PagePlan {
  PageFolding folding;
  std::vector<int32_t> page;  // per node, 0-based
  int32_t pages = 1;
  // Per page: its rank and its first and last column.
  struct Span {
    int rank = 0;
    int32_t first_column = 0;
    int32_t last_column = 0;
  };
  std::vector<Span> spans;
};
PagePlan PlanPages(const VizGraph& graph, PageFolding folding,
                   int32_t columns_per_page);
// The same, each page as many columns as `fits(rank, first, last)` allows
// (columns first..last of `rank` on one page; one column always fits).
PagePlan PlanPages(const VizGraph& graph, PageFolding folding,
                   const std::function<bool(int, int32_t, int32_t)>& fits);

}  // namespace et::viz

#endif  // VISUALIZER_PAGE_LAYOUT_H_
