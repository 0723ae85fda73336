// Cross-rank collective consistency; see cross_rank_check.h.
#include "converter/cross_rank_check.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "model/comm_type.h"

namespace et::convert {
namespace {

std::string TypeName(int64_t type) {
  return ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(type))
             ? std::string(CommTypeName(
                   static_cast<ChakraProtoMsg::CollectiveCommType>(type)))
             : absl::StrFormat("type %d", type);
}

// "1323 nodes (COMM_COLL_NODE 3, COMP_NODE 1320), by step 441 441 441".
std::string ShapeOf(const GraphDigest& r) {
  std::map<std::string, int64_t> by_type_name;  // in the order of the names
  for (const auto& [type, n] : r.nodes_by_type) {
    by_type_name[ChakraProtoMsg::NodeType_Name(
        static_cast<ChakraProtoMsg::NodeType>(type))] += n;
  }
  std::vector<std::string> types, steps;
  for (const auto& [type, n] : by_type_name)
    types.push_back(absl::StrCat(type, " ", n));
  for (const auto& [step, n] : r.nodes_by_step) {
    if (step >= 0) steps.push_back(absl::StrCat(n));
  }
  std::string shape =
      absl::StrFormat("%d nodes (%s)", r.nodes, absl::StrJoin(types, ", "));
  if (!steps.empty())
    absl::StrAppend(&shape, ", by step ", absl::StrJoin(steps, " "));
  return shape;
}

// Ranks of each distinct shape, in rank order; the line that lists them when
// there is more than one.
void CompareShapes(const std::vector<RankTrace>& ranks,
                   const std::vector<GraphDigest>& all, CrossRankCheck* out) {
  std::map<std::string, std::vector<int>> ranks_by_shape;
  std::vector<std::string> order;
  for (size_t k = 0; k < ranks.size(); ++k) {
    const std::string shape = ShapeOf(all[k]);
    auto [it, fresh] = ranks_by_shape.try_emplace(shape);
    if (fresh) order.push_back(shape);
    it->second.push_back(ranks[k].rank);
  }
  if (order.size() <= 1) {
    out->shape = order.empty() ? "" : order[0];
    return;
  }
  std::vector<std::string> parts;
  for (const std::string& shape : order) {
    const std::vector<int>& r = ranks_by_shape[shape];
    parts.push_back(absl::StrFormat("%s %s: %s",
                                    r.size() == 1 ? "rank" : "ranks",
                                    absl::StrJoin(r, ","), shape));
  }
  // The same nodes, some in another step: a step boundary the ranks recorded
  // at different points (an op that ran as one step ended on one rank and
  // after it on another), not another program.
  auto same_nodes = [&](const GraphDigest& a, const GraphDigest& b) {
    return a.nodes == b.nodes && a.nodes_by_type == b.nodes_by_type;
  };
  const bool moved_only =
      std::all_of(all.begin(), all.end(),
                  [&](const auto& d) { return same_nodes(d, all.front()); });
  out->shape_mismatch =
      moved_only
          ? absl::StrCat(
                "the ranks' graphs hold the same nodes, but some fall in "
                "another step on some ranks (a step boundary recorded at a "
                "different point, not another program): ",
                absl::StrJoin(parts, "; "))
          : absl::StrCat(
                "the ranks' graphs differ in shape (ranks of one SPMD "
                "program, as in DDP, should match; a pipeline's stages may "
                "not): ",
                absl::StrJoin(parts, "; "));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> CheckCollectivesAcrossRanks(
    const std::vector<RankTrace>& ranks, size_t max_reports) {
  ASSIGN_OR_RETURN(CrossRankCheck check, CheckRanksAgree(ranks, max_reports));
  return std::move(check.collective_mismatches);
}

absl::StatusOr<CrossRankCheck> CheckRanksAgree(
    const std::vector<RankTrace>& ranks, size_t max_reports) {
  std::vector<GraphDigest> all;
  for (const RankTrace& r : ranks) {
    if (r.digest != nullptr) {
      all.push_back(*r.digest);
      continue;
    }
    ASSIGN_OR_RETURN(GraphDigest d, ReadGraphDigest(r.et_path));
    all.push_back(std::move(d));
  }
  CrossRankCheck check;
  CompareShapes(ranks, all, &check);
  std::vector<std::string>& reports = check.collective_mismatches;
  std::map<std::string, std::vector<size_t>>
      members;  // pg -> indices into `ranks`
  for (size_t k = 0; k < ranks.size(); ++k) {
    for (const auto& [pg, list] : all[k].by_group) members[pg].push_back(k);
  }
  // A group's members from any rank's table that lists them: a rank may list
  // only its own groups (the recorder's table of a tp x dp run), and a rank
  // outside a group issues none of its collectives.
  std::map<std::string, std::vector<int64_t>> listed;
  for (const GraphDigest& d : all) {
    for (const ProcessGroup& g : d.groups) {
      if (!g.ranks.empty()) listed.try_emplace(g.name, g.ranks);
    }
  }
  for (const auto& [pg, idx] : members) {
    // Explicit membership narrows the ranks compared; none listed means every
    // rank given.
    std::vector<size_t> compared;
    auto it = listed.find(pg);
    for (size_t k = 0; k < ranks.size(); ++k) {
      if (it == listed.end() || std::find(it->second.begin(), it->second.end(),
                                          ranks[k].rank) != it->second.end()) {
        compared.push_back(k);
      }
    }
    if (compared.size() < 2) continue;
    const size_t ref = compared[0];
    const auto& ref_list = all[ref].by_group[pg];
    for (size_t c = 1; c < compared.size() && reports.size() < max_reports;
         ++c) {
      const size_t k = compared[c];
      const auto& list = all[k].by_group[pg];
      const size_t n = std::min(list.size(), ref_list.size());
      for (size_t i = 0; i < n && reports.size() < max_reports; ++i) {
        if (list[i].type == ref_list[i].type &&
            list[i].size_bytes == ref_list[i].size_bytes) {
          continue;
        }
        reports.push_back(absl::StrFormat(
            "process group '%s', collective #%d: rank %d node %d is %s of %d "
            "bytes, rank %d "
            "node %d is %s of %d bytes",
            pg, i, ranks[ref].rank, ref_list[i].node_id,
            TypeName(ref_list[i].type), ref_list[i].size_bytes, ranks[k].rank,
            list[i].node_id, TypeName(list[i].type), list[i].size_bytes));
        break;  // later ones are off by the same shift; one report per rank
                // pair
      }
      if (list.size() != ref_list.size() && reports.size() < max_reports) {
        reports.push_back(absl::StrFormat(
            "process group '%s': rank %d issued %d collectives, rank %d issued "
            "%d",
            pg, ranks[ref].rank, ref_list.size(), ranks[k].rank, list.size()));
      }
    }
  }
  return check;
}

}  // namespace et::convert
