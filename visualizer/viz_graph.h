// The graph et-viz draws: the selected nodes of one or more ranks with what a
// picture needs (kind, device, track, label facts), and the edges between them:
// data and control dependencies (lifted to the shown node when their ends were
// folded), collectives of one process group joined across ranks, and sends
// joined to their receives. Every writer (DOT, GraphML, JSON) renders this one
// structure, so they agree on nodes and edges. Plain data; built once, then
// read.
#ifndef VISUALIZER_VIZ_GRAPH_H_
#define VISUALIZER_VIZ_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/et_def.pb.h"
#include "visualizer/graph_filter.h"
#include "visualizer/node_class.h"
#include "visualizer/rank_traces.h"

namespace et::viz {

struct VizNode {
  int rank = 0;
  uint64_t id = 0;
  std::string name;
  ChakraProtoMsg::NodeType type = ChakraProtoMsg::INVALID_NODE;
  DrawKind kind = DrawKind::kOther;
  Device device = Device::kGpu;
  Queue queue;  // the model's queue: the track it is drawn on
  int64_t duration_ns = 0;
  int64_t bytes = 0;
  std::string comm_type;  // "ALL_REDUCE", "SEND", ... for communication
  std::string pg_name;    // process group of a collective
  int64_t folded = 0;     // hidden descendants drawn as part of this node
  // Index into VizGraph::repeats when this node is in the drawn instance of a
  // run of repeated structure (repeat_folding.h); -1 otherwise.
  int32_t repeat = -1;
};

// A run of repeated structure on one rank's track: `count` consecutive
// instances of `period` nodes each, ids first_id..last_id; the first instance
// is drawn, the other count - 1 are folded into it (repeat_folding.h).
struct RepeatRun {
  int rank = 0;
  Queue queue;
  int64_t count = 0;
  int64_t period = 0;
  uint64_t first_id = 0;
  uint64_t last_id = 0;
  int64_t folded_nodes() const { return (count - 1) * period; }
};

enum class EdgeKind {
  kData,        // data dependency
  kCtrl,        // control dependency
  kCollective,  // the same collective on two ranks (undirected in meaning)
  kPeer,        // a send and its receive on another rank
};
absl::string_view EdgeKindName(
    EdgeKind kind);  // "data", "ctrl", "collective", "peer"

struct VizEdge {
  uint32_t from =
      0;  // index into VizGraph::nodes: the dependency (or lower rank)
  uint32_t to = 0;  // the dependent
  EdgeKind kind = EdgeKind::kData;
};

struct VizGraph {
  std::vector<VizNode> nodes;  // by rank, then id
  std::vector<VizEdge> edges;  // sorted by (from, to, kind); no duplicates
  std::vector<int> ranks;      // ranks with at least one shown node
  int64_t input_nodes = 0;     // nodes in all inputs before filtering
  int64_t collective_type_mismatches =
      0;                            // joined collectives whose types differ
  std::vector<RepeatRun> repeats;   // empty unless FoldRepeats ran
  int64_t repeat_folded_nodes = 0;  // sum of the runs' folded_nodes()

  // "r<rank>_<id>": unique across ranks; used as node id by every writer.
  static std::string NodeKey(const VizNode& node);
};

// Builds the drawable graph from the traces and their selections (from
// SelectNodes).
VizGraph BuildVizGraph(const std::vector<RankTrace>& traces,
                       const std::vector<RankSelection>& selections);

}  // namespace et::viz

#endif  // VISUALIZER_VIZ_GRAPH_H_
