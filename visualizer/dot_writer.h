// Graphviz DOT text for a VizGraph. Shape says the kind (box compute, hexagon
// collective, cds send/recv, cylinder memory, note metadata), fill colour the
// kind and device (CPU blue, GPU green), border the device; the label holds
// name, id, duration and bytes. Data edges are solid, control edges dashed,
// cross-rank collective links bold orange and peer (send->recv) links gold;
// neither cross-rank kind constrains the layout. A control edge that doubles a
// data edge between the same two nodes is not drawn. One cluster per CPU
// thread, GPU stream or process group channel (NodeModel::queue), nested in one
// cluster per rank when several ranks are drawn. A rank folded into page
// columns (page_layout.h) draws the edges into a node from other columns as
// one off-page connector box above it naming their sources; DrawnSizeOf counts
// what the drawing then holds. A legend sits in the graph label (no extra
// nodes). Stateless; thread-safe.
#ifndef VISUALIZER_DOT_WRITER_H_
#define VISUALIZER_DOT_WRITER_H_

#include <cstdint>
#include <string>

#include "visualizer/page_layout.h"
#include "visualizer/viz_graph.h"

namespace et::viz {

struct DotOptions {
  std::string title;  // first line of the graph label, e.g. the input file
  // A drawing split over printed pages: draw page `page` of `plan` (its nodes,
  // the edges between them, and every edge into them from another page as an
  // off-page connector). Null: the whole graph, folded by FoldForPage.
  const PagePlan* plan = nullptr;
  int32_t page = 0;
};

std::string WriteDot(const VizGraph& graph, const DotOptions& options);

// Whether graph.edges[k] is drawn (false for a control edge doubling a data
// edge), and how many edges the drawing has.
bool IsDrawnEdge(const VizGraph& graph, size_t k);
size_t DrawnEdgeCount(const VizGraph& graph);

// The nodes and edges of WriteDot's drawing (of page `page` of `plan`, when
// given): the graph's nodes and its drawn edges, where each node with edges
// from other page columns or pages has one connector node more and one edge
// from it instead of theirs (`connector_edges` counts theirs).
struct DrawnSize {
  size_t nodes = 0;
  size_t edges = 0;
  size_t connector_edges = 0;
};
DrawnSize DrawnSizeOf(const VizGraph& graph, const PagePlan* plan = nullptr,
                      int32_t page = 0);

}  // namespace et::viz

#endif  // VISUALIZER_DOT_WRITER_H_
