// Joins communication across ranks for multi-rank drawings: the k-th collective
// of a process group on one rank is the same operation as the k-th collective
// of that group on every other rank (the order NCCL and gloo require), so those
// nodes are linked; the k-th send from rank a to rank b is linked to the k-th
// receive on b from a. When the converter recorded a collective sequence number
// (attr comm_seq) it is used instead of the ordinal. Stateless; thread-safe.
#ifndef VISUALIZER_CROSS_RANK_LINKS_H_
#define VISUALIZER_CROSS_RANK_LINKS_H_

#include <cstdint>
#include <vector>

#include "visualizer/graph_filter.h"
#include "visualizer/rank_traces.h"
#include "visualizer/viz_graph.h"

namespace et::viz {

inline constexpr uint32_t kNotDrawn = UINT32_MAX;

// `viz_index[t][i]`: the VizGraph node standing for node i of trace t, or
// kNotDrawn. Appends kCollective and kPeer edges to `graph->edges` (unsorted)
// and counts type mismatches in graph->collective_type_mismatches.
void AddCrossRankEdges(const std::vector<RankTrace>& traces,
                       const std::vector<std::vector<uint32_t>>& viz_index,
                       VizGraph* graph);

}  // namespace et::viz

#endif  // VISUALIZER_CROSS_RANK_LINKS_H_
