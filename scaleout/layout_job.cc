// Per-rank graphs of a --layout job; see layout_job.h.
#include "scaleout/layout_job.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/expert_parallel.h"
#include "scaleout/group_remap.h"
#include "scaleout/peer_remap.h"
#include "scaleout/pipeline_plan.h"
#include "scaleout/replicated_job.h"
#include "scaleout/tensor_parallel.h"

namespace et::scaleout {
namespace {

// One group of the graph's table and the dimensions it varies.
struct GroupKind {
  ProcessGroup recorded;
  DimMask mask = 0;
};

// The job's group ids: per dimension set, the first id of its instances (0
// for the whole world, which has one instance named "0").
class GroupIds {
 public:
  explicit GroupIds(const ParallelLayout& target) : target_(target) {}

  // The name of `rank`'s instance of the groups varying `mask`.
  std::string NameFor(DimMask mask, int64_t rank) {
    const int64_t size = target_.GroupSize(mask);
    if (size == target_.world()) return "0";
    auto [it, inserted] = first_id_.emplace(mask, next_id_);
    if (inserted) next_id_ += target_.world() / size;
    return std::to_string(it->second + Instance(mask, rank));
  }

 private:
  // `rank`'s group among those varying `mask`: its coordinates along the
  // other dimensions, inner first.
  int64_t Instance(DimMask mask, int64_t rank) const {
    int64_t index = 0, scale = 1;
    for (Dim d : kDims) {
      if (mask & MaskOf(d)) continue;
      index += target_.coord(rank, d) * scale;
      scale *= target_.of(d);
    }
    return index;
  }

  ParallelLayout target_;
  std::map<DimMask, int64_t> first_id_;
  int64_t next_id_ = 1;
};

absl::StatusOr<std::vector<GroupKind>> KindsOf(const Graph& graph,
                                               const RecordedLayout& recorded) {
  std::vector<GroupKind> kinds;
  for (const ProcessGroup& g : DecodeProcessGroups(graph.metadata().attr())) {
    GroupKind kind{g, 0};
    bool found = false;
    for (const GroupRole& role : recorded.roles) {
      if (role.name != g.name) continue;
      if (role.kept) {
        return absl::FailedPreconditionError(absl::StrCat(
            "group '", g.name,
            "' fits no set of the layout's dimensions (it keeps its recorded "
            "ranks), so no rank of a bigger job can be given its instance"));
      }
      kind.mask = role.mask;
      found = true;
      break;
    }
    if (!found && g.name == kDpGroupName) {
      kind.mask = MaskOf(Dim::kDp);
      found = true;
    }
    if (!found && g.name == kTpGroupName) {
      kind.mask = MaskOf(Dim::kTp);
      found = true;
    }
    if (!found && g.name == kEpGroupName) {
      kind.mask = MaskOf(Dim::kEp);
      found = true;
    }
    if (!found && g.name == kPpGroupName) {
      kind.mask = MaskOf(Dim::kPp);
      found = true;
    }
    if (!found && g.name == kAllRanksGroupName) {
      kind.mask = recorded.all_ranks_mask;
      found = true;
    }
    if (!found) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group '", g.name, "' is not one of the recorded layout's groups"));
    }
    kinds.push_back(std::move(kind));
  }
  return kinds;
}

// A send's destination or a receive's source, moved to `rank` of the job
// (peer_remap.h): the recorded peer belongs to the recorded rank `from`.
absl::Status MovePeers(const RecordedLayout& recorded,
                       const ParallelLayout& target, int64_t from, int64_t rank,
                       ChakraProtoMsg::Node* node) {
  const char* field = node->type() == ChakraProtoMsg::COMM_SEND_NODE
                          ? attr::kCommDst
                          : attr::kCommSrc;
  const std::optional<int64_t> peer = GetInt(node->attr(), field);
  if (!peer.has_value()) return absl::OkStatus();
  if (from < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", node->id(), " (", node->name(), ") talks to rank ", *peer,
        " but the trace records no rank of its own (metadata 'rank'), so "
        "its peer cannot be placed on the new job; convert with --rank"));
  }
  absl::StatusOr<int64_t> moved =
      MovePeer(recorded.layout, from, *peer, target, rank);
  if (!moved.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node ", node->id(), " (", node->name(),
                     "): ", moved.status().message()));
  }
  if (*moved != *peer)
    SetInt32(node->mutable_attr(), field, static_cast<int32_t>(*moved));
  return absl::OkStatus();
}

// A synthesized pipeline's send or receive: its peer is rank 0's replica's
// neighbour stage; `rank`'s is as far from it as `rank` is from its stage's
// first rank.
void MovePipelinePeer(const ParallelLayout& target, int64_t rank,
                      ChakraProtoMsg::Node* node) {
  const char* field = node->type() == ChakraProtoMsg::COMM_SEND_NODE
                          ? attr::kCommDst
                          : attr::kCommSrc;
  const std::optional<int64_t> peer = GetInt(node->attr(), field);
  if (!peer.has_value()) return;
  const int64_t first = target.coord(rank, Dim::kPp) * target.stride(Dim::kPp);
  SetInt32(node->mutable_attr(), field,
           static_cast<int32_t>(*peer + rank - first));
}

absl::StatusOr<Graph> RankCopy(const Graph& graph,
                               const std::vector<GroupKind>& kinds,
                               const RecordedLayout& recorded,
                               const ParallelLayout& target, int64_t rank) {
  GroupIds ids(target);
  std::vector<ProcessGroup> table;
  absl::flat_hash_map<std::string, std::string> renamed;
  auto add = [&](const ProcessGroup& g, DimMask mask) {
    ProcessGroup placed = g;
    placed.name = ids.NameFor(mask, rank);
    placed.ranks = target.GroupOf(rank, mask);
    placed.size = static_cast<int64_t>(placed.ranks.size());
    for (const ProcessGroup& t : table) {
      if (t.name == placed.name) return t.name;
    }
    table.push_back(placed);
    return placed.name;
  };
  for (const GroupKind& kind : kinds)
    renamed.emplace(kind.recorded.name, add(kind.recorded, kind.mask));
  ProcessGroup world_group;
  world_group.desc = "recorded world";
  const std::string unnamed = add(world_group, recorded.all_ranks_mask);
  ChakraProtoMsg::GlobalMetadata metadata = graph.metadata();
  ReplaceGroupTable(table, metadata.mutable_attr());
  const int64_t from =
      GetInt(graph.metadata().attr(), attr::kRank).value_or(-1);
  std::vector<ChakraProtoMsg::Node> nodes = graph.nodes();
  for (ChakraProtoMsg::Node& node : nodes) {
    if (GetStringList(node.attr(), attr::kPgNames).has_value())
      ReplaceGroupTable(table, node.mutable_attr());
    const bool p2p = node.type() == ChakraProtoMsg::COMM_SEND_NODE ||
                     node.type() == ChakraProtoMsg::COMM_RECV_NODE;
    if (p2p && GetString(node, attr::kPgName) == kPpGroupName) {
      MovePipelinePeer(target, rank, &node);
      SetString(node.mutable_attr(), attr::kPgName, renamed.at(kPpGroupName));
      continue;
    }
    if (p2p) {
      absl::Status s = MovePeers(recorded, target, from, rank, &node);
      if (!s.ok()) return s;
    }
    if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    const std::optional<std::string> pg = GetString(node, attr::kPgName);
    auto it = pg.has_value() ? renamed.find(*pg) : renamed.end();
    const std::string& name = it != renamed.end() ? it->second : unnamed;
    if (!pg.has_value() || *pg != name)
      SetString(node.mutable_attr(), attr::kPgName, name);
  }
  return Graph::Build(std::move(metadata), std::move(nodes));
}

}  // namespace

absl::StatusOr<RankGraphSource> LayoutRankSource(const Graph& graph,
                                                 const RecordedLayout& recorded,
                                                 const ParallelLayout& target) {
  absl::StatusOr<std::vector<GroupKind>> kinds = KindsOf(graph, recorded);
  if (!kinds.ok()) return kinds.status();
  return RankGraphSource(
      [&graph, kinds = std::move(*kinds), recorded,
       target](int64_t rank) -> absl::StatusOr<std::shared_ptr<const Graph>> {
        ASSIGN_OR_RETURN(Graph copy,
                         RankCopy(graph, kinds, recorded, target, rank));
        return std::make_shared<const Graph>(std::move(copy));
      });
}

absl::StatusOr<RankGraphSource> PipelineRankSource(
    const std::vector<Graph>& stages, const RecordedLayout& recorded,
    const ParallelLayout& target) {
  std::vector<std::vector<GroupKind>> kinds;
  for (const Graph& g : stages) {
    absl::StatusOr<std::vector<GroupKind>> k = KindsOf(g, recorded);
    if (!k.ok()) return k.status();
    kinds.push_back(std::move(*k));
  }
  return RankGraphSource(
      [&stages, kinds = std::move(kinds), recorded,
       target](int64_t rank) -> absl::StatusOr<std::shared_ptr<const Graph>> {
        const size_t s = static_cast<size_t>(target.coord(rank, Dim::kPp));
        ASSIGN_OR_RETURN(Graph copy,
                         RankCopy(stages[s], kinds[s], recorded, target, rank));
        return std::make_shared<const Graph>(std::move(copy));
      });
}

}  // namespace et::scaleout
