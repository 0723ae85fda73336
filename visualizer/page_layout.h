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

// A node box is about 210 x 40 pt with its spacing (44-character labels at
// 9 pt); a rank with L layers and W nodes in its widest layer gets
// C = sqrt(L * 40 / (1.3 * W * 210)) columns (portrait page, height 1.3 x
// width), at most kMaxPageColumns.
inline constexpr int32_t kMaxPageColumns = 12;
PageFolding FoldForPage(const VizGraph& graph, const NodeLayers& layers);

}  // namespace et::viz

#endif  // VISUALIZER_PAGE_LAYOUT_H_
