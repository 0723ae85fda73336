// Building the drawable graph from the ranks' node models; see viz_graph.h.
#include "visualizer/viz_graph.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "visualizer/cross_rank_links.h"

namespace et::viz {
namespace {

VizNode MakeVizNode(const RankTrace& trace, NodeIndex i) {
  const NodeModel& model = trace.model;
  VizNode v;
  v.rank = trace.rank;
  v.id = model.id(i);
  v.name = std::string(model.name(i));
  v.type = model.type(i);
  v.kind = KindOf(model, i);
  v.device = DeviceOf(model, i);
  v.queue = model.queue(i);
  v.duration_ns = DurationNs(model, i);
  v.bytes = BytesOf(model, i);
  v.comm_type = CommTypeLabel(model, i);
  if (v.kind == DrawKind::kCollective) {
    if (const CommSpec* comm = model.comm(i)) {
      v.pg_name = std::string(model.string(comm->pg_name));
    }
  }
  return v;
}

// Data and control deps of every drawn or folded node, lifted to the nodes that
// stand for their ends; edges inside one folded node disappear.
void AddDependencyEdges(const RankTrace& trace,
                        const std::vector<uint32_t>& viz_index,
                        VizGraph* graph) {
  for (NodeIndex i = 0; i < trace.model.size(); ++i) {
    const uint32_t to = viz_index[i];
    if (to == kNotDrawn) continue;
    auto add = [&](absl::Span<const NodeIndex> deps, EdgeKind kind) {
      for (NodeIndex dep : deps) {
        const uint32_t from = viz_index[dep];
        if (from != kNotDrawn && from != to)
          graph->edges.push_back({from, to, kind});
      }
    };
    add(trace.model.data_deps(i), EdgeKind::kData);
    add(trace.model.ctrl_deps(i), EdgeKind::kCtrl);
  }
}

}  // namespace

absl::string_view EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kData:
      return "data";
    case EdgeKind::kCtrl:
      return "ctrl";
    case EdgeKind::kCollective:
      return "collective";
    case EdgeKind::kPeer:
      return "peer";
  }
  return "data";
}

std::string VizGraph::NodeKey(const VizNode& node) {
  return absl::StrCat("r", node.rank, "_", node.id);
}

VizGraph BuildVizGraph(const std::vector<RankTrace>& traces,
                       const std::vector<RankSelection>& selections) {
  VizGraph graph;
  std::vector<std::vector<uint32_t>> viz_index(traces.size());
  for (size_t t = 0; t < traces.size(); ++t) {
    const RankTrace& trace = traces[t];
    const RankSelection& sel = selections[t];
    graph.input_nodes += static_cast<int64_t>(trace.model.size());
    std::vector<uint32_t>& index = viz_index[t];
    index.assign(trace.model.size(), kNotDrawn);
    for (NodeIndex i = 0; i < trace.model.size(); ++i) {
      if (!sel.shown[i]) continue;
      index[i] = static_cast<uint32_t>(graph.nodes.size());
      graph.nodes.push_back(MakeVizNode(trace, i));
    }
    for (NodeIndex i = 0; i < trace.model.size(); ++i) {
      const NodeIndex rep = sel.fold_into[i];
      if (sel.shown[i] || rep == OpHierarchy::kNoParent) continue;
      index[i] = index[rep];
      ++graph.nodes[index[rep]].folded;
    }
    if (sel.shown_count > 0) graph.ranks.push_back(trace.rank);
    AddDependencyEdges(trace, index, &graph);
  }
  AddCrossRankEdges(traces, viz_index, &graph);
  auto key = [](const VizEdge& e) {
    return std::make_tuple(e.from, e.to, e.kind);
  };
  std::sort(
      graph.edges.begin(), graph.edges.end(),
      [&](const VizEdge& a, const VizEdge& b) { return key(a) < key(b); });
  graph.edges.erase(std::unique(graph.edges.begin(), graph.edges.end(),
                                [&](const VizEdge& a, const VizEdge& b) {
                                  return key(a) == key(b);
                                }),
                    graph.edges.end());
  return graph;
}

}  // namespace et::viz
