// Cross-rank collective and send/recv links from the node models' comm specs;
// see cross_rank_links.h.
#include "visualizer/cross_rank_links.h"

#include <map>
#include <string>
#include <tuple>

namespace et::viz {
namespace {

struct CommRef {
  int rank;
  uint32_t viz;      // kNotDrawn if not drawn
  std::string type;  // CommTypeLabel
};

void LinkCollectives(const std::map<std::pair<std::string, int64_t>,
                                    std::vector<CommRef>>& by_key,
                     VizGraph* graph) {
  for (const auto& [key, refs] : by_key) {
    // refs are in rank order (traces are sorted by rank); chain the drawn ones.
    const CommRef* prev = nullptr;
    for (const CommRef& ref : refs) {
      if (ref.viz == kNotDrawn) continue;
      if (prev != nullptr && prev->viz != ref.viz) {
        graph->edges.push_back({prev->viz, ref.viz, EdgeKind::kCollective});
        if (prev->type != ref.type) ++graph->collective_type_mismatches;
      }
      prev = &ref;
    }
  }
}

}  // namespace

void AddCrossRankEdges(const std::vector<RankTrace>& traces,
                       const std::vector<std::vector<uint32_t>>& viz_index,
                       VizGraph* graph) {
  if (traces.size() < 2) return;
  // (pg_name, sequence) -> the collective on each rank.
  std::map<std::pair<std::string, int64_t>, std::vector<CommRef>> collectives;
  // (src rank, dst rank, ordinal on that link) -> drawn send / receive.
  using P2pKey = std::tuple<int, int, int64_t>;
  std::map<P2pKey, uint32_t> sends;
  std::map<P2pKey, uint32_t> recvs;
  for (size_t t = 0; t < traces.size(); ++t) {
    const RankTrace& trace = traces[t];
    std::map<std::string, int64_t> next_seq;          // per process group
    std::map<std::pair<int, int>, int64_t> next_p2p;  // per (src, dst)
    const NodeModel& model = trace.model;
    for (NodeIndex i = 0; i < model.size(); ++i) {
      const uint32_t viz = viz_index[t][i];
      const CommSpec* comm = model.comm(i);
      if (model.type(i) == ChakraProtoMsg::COMM_COLL_NODE) {
        // A collective whose type the model could not decode has no spec (no
        // pg_name, no comm_seq): it is still counted, in the sequence of
        // collectives without a process group.
        std::string pg;
        if (comm != nullptr) pg = std::string(model.string(comm->pg_name));
        int64_t seq = next_seq[pg]++;
        if (comm != nullptr && comm->seq >= 0) seq = comm->seq;
        collectives[{pg, seq}].push_back(
            {trace.rank, viz, CommTypeLabel(model, i)});
      } else if (model.type(i) == ChakraProtoMsg::COMM_SEND_NODE) {
        if (comm != nullptr && comm->peer >= 0) {
          const std::pair<int, int> link{trace.rank, comm->peer};
          sends[{link.first, link.second, next_p2p[link]++}] = viz;
        }
      } else if (model.type(i) == ChakraProtoMsg::COMM_RECV_NODE) {
        if (comm != nullptr && comm->peer >= 0) {
          const std::pair<int, int> link{comm->peer, trace.rank};
          recvs[{link.first, link.second, next_p2p[link]++}] = viz;
        }
      }
    }
  }
  LinkCollectives(collectives, graph);
  for (const auto& [key, send_viz] : sends) {
    auto recv = recvs.find(key);
    if (recv == recvs.end() || send_viz == kNotDrawn ||
        recv->second == kNotDrawn || send_viz == recv->second) {
      continue;
    }
    graph->edges.push_back({send_viz, recv->second, EdgeKind::kPeer});
  }
}

}  // namespace et::viz
