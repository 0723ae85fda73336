// Where a drawing's nodes go on a page. Graphviz's dot stacks a graph by its
// dependency layers, so one long chain of ops (a thread's ops in order) comes
// out as a strip a few hundred points wide and thousands tall, unreadable in a
// page view. This folds each rank's layers into side-by-side columns, like
// newspaper columns, so the drawing's shape is close to a page's. Pure
// functions of the graph; deterministic.
#ifndef VISUALIZER_PAGE_LAYOUT_H_
#define VISUALIZER_PAGE_LAYOUT_H_

#include <cstdint>
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

}  // namespace et::viz

#endif  // VISUALIZER_PAGE_LAYOUT_H_
