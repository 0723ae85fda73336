// See replicated_job.h.
#include "scaleout/replicated_job.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_reader.h"

namespace et::scaleout {
namespace {

// One recorded group and the groups it becomes in the N-rank world.
struct GroupTiling {
  ProcessGroup recorded;
  int64_t block = 0;               // members per tile (N: the whole world)
  std::vector<std::string> names;  // by tile index
};

std::vector<int64_t> Range(int64_t begin, int64_t count) {
  std::vector<int64_t> out(count);
  std::iota(out.begin(), out.end(), begin);
  return out;
}

absl::StatusOr<int64_t> LargestIntegerName(
    const std::vector<ProcessGroup>& groups) {
  int64_t largest = 0;
  for (const ProcessGroup& g : groups) {
    int64_t id = 0;
    if (!absl::SimpleAtoi(g.name, &id)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "group '", g.name,
          "': new groups are named by integers after the recorded ones, and "
          "this name is not one"));
    }
    largest = std::max(largest, id);
  }
  return largest;
}

// The tile size of `g` in a world of `world` ranks (see the header).
absl::StatusOr<int64_t> TileSize(const ProcessGroup& g, int64_t recorded_world,
                                 int64_t world) {
  const int64_t k = static_cast<int64_t>(g.ranks.size());
  if (g.ranks.empty() || (recorded_world > 0 && k >= recorded_world))
    return world;
  std::vector<int64_t> sorted = g.ranks;
  std::sort(sorted.begin(), sorted.end());
  const bool block = sorted == Range(sorted.front(), k) &&
                     sorted.front() >= 0 && sorted.front() % k == 0;
  if (!block || world % k != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "group '", g.name, "' (ranks [", absl::StrJoin(g.ranks, ","),
        "]) is neither the whole recorded world nor a block of consecutive "
        "ranks that tiles ",
        world, " ranks; re-mapping it needs the parallel layout"));
  }
  return k;
}

absl::StatusOr<std::vector<GroupTiling>> PlanTilings(
    const std::vector<ProcessGroup>& groups, int64_t recorded_world,
    int64_t world) {
  std::vector<GroupTiling> out;
  int64_t next_id = -1;  // found when the first tiled group needs it
  for (const ProcessGroup& g : groups) {
    GroupTiling t{g, 0, {}};
    auto tile = TileSize(g, recorded_world, world);
    if (!tile.ok()) return tile.status();
    t.block = *tile;
    const int64_t tiles = world / t.block;
    const int64_t recorded_tile =
        t.block == world ? 0 : (g.ranks.front() / t.block) % tiles;
    for (int64_t i = 0; i < tiles; ++i) {
      if (i == recorded_tile) {
        t.names.push_back(g.name);
        continue;
      }
      if (next_id < 0) {
        auto largest = LargestIntegerName(groups);
        if (!largest.ok()) return largest.status();
        next_id = *largest + 1;
      }
      t.names.push_back(std::to_string(next_id++));
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Rank `rank`'s copy of `recorded` under the tilings.
Graph RankCopy(const Graph& recorded, const std::vector<GroupTiling>& tilings,
               int64_t rank) {
  std::vector<ProcessGroup> table;
  absl::flat_hash_map<std::string, std::string> renamed;
  for (const GroupTiling& t : tilings) {
    const int64_t tile = rank / t.block;
    ProcessGroup g = t.recorded;
    g.name = t.names[tile];
    g.ranks = Range(tile * t.block, t.block);
    g.size = t.block;
    renamed.emplace(t.recorded.name, g.name);
    table.push_back(std::move(g));
  }
  ChakraProtoMsg::GlobalMetadata metadata = recorded.metadata();
  ReplaceGroupTable(table, metadata.mutable_attr());
  std::vector<ChakraProtoMsg::Node> nodes = recorded.nodes();
  for (ChakraProtoMsg::Node& node : nodes) {
    if (GetStringList(node.attr(), attr::kPgNames).has_value())
      ReplaceGroupTable(table, node.mutable_attr());
    const std::optional<std::string> pg = GetString(node, attr::kPgName);
    if (!pg.has_value()) continue;
    auto it = renamed.find(*pg);
    if (it != renamed.end() && it->second != *pg)
      SetString(node.mutable_attr(), attr::kPgName, it->second);
  }
  return Graph::Build(std::move(metadata), std::move(nodes));
}

bool IsGroupTableAttr(const std::string& name) {
  return name == attr::kPgNames || name == attr::kPgDescs ||
         name == attr::kPgBackends || name == attr::kPgSizes ||
         absl::StartsWith(name, attr::kPgRanksPrefix);
}

}  // namespace

void ReplaceGroupTable(const std::vector<ProcessGroup>& groups,
                       AttrList* attrs) {
  AttrList kept;
  for (const auto& a : *attrs)
    if (!IsGroupTableAttr(a.name())) *kept.Add() = a;
  attrs->Swap(&kept);
  EncodeProcessGroups(groups, attrs);
}

absl::StatusOr<RankGraphSource> ReplicatedRankSource(const Graph& recorded,
                                                     int64_t world_size) {
  const std::vector<ProcessGroup> groups =
      DecodeProcessGroups(recorded.metadata().attr());
  const int64_t recorded_world =
      GetInt(recorded.metadata().attr(), attr::kWorldSize).value_or(0);
  auto tilings = PlanTilings(groups, recorded_world, world_size);
  if (!tilings.ok()) return tilings.status();
  if (tilings->empty()) {
    // No group to tile: every rank is the recorded graph (the writer sets
    // each file's rank), so it is shared, not copied.
    std::shared_ptr<const Graph> same(std::shared_ptr<const Graph>(),
                                      &recorded);
    return RankGraphSource(
        [same](int64_t) -> absl::StatusOr<std::shared_ptr<const Graph>> {
          return same;
        });
  }
  return RankGraphSource([&recorded, plan = std::move(*tilings)](int64_t rank)
                             -> absl::StatusOr<std::shared_ptr<const Graph>> {
    return std::make_shared<const Graph>(RankCopy(recorded, plan, rank));
  });
}

absl::StatusOr<RankStreamSource> ReplicatedFileSource(const std::string& path,
                                                      int64_t world_size) {
  std::vector<GroupTiling> plan;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<EtReader> reader, EtReader::Open(path));
    const auto& attrs = reader->metadata().attr();
    ASSIGN_OR_RETURN(
        plan,
        PlanTilings(DecodeProcessGroups(attrs),
                    GetInt(attrs, attr::kWorldSize).value_or(0), world_size));
  }
  if (plan.empty()) {
    return RankStreamSource([path](int64_t, RankSink* sink) -> absl::Status {
      ASSIGN_OR_RETURN(std::unique_ptr<EtReader> reader, EtReader::Open(path));
      RETURN_IF_ERROR(sink->Begin(reader->metadata()));
      return ForEachCheckedNode(reader.get(), [sink](ChakraProtoMsg::Node* n) {
        return sink->Add(*n);
      });
    });
  }
  ASSIGN_OR_RETURN(Graph loaded, LoadGraph(path));
  auto recorded = std::make_shared<const Graph>(std::move(loaded));
  return RankStreamSource(
      [recorded, plan = std::move(plan)](int64_t rank, RankSink* sink) {
        return StreamGraph(RankCopy(*recorded, plan, rank), sink);
      });
}

std::string JobStemFor(const std::string& trace_path) {
  std::string name = std::filesystem::path(trace_path).filename().string();
  absl::string_view stem = name;
  absl::ConsumeSuffix(&stem, ".gz");
  if (!absl::ConsumeSuffix(&stem, ".et")) absl::ConsumeSuffix(&stem, ".json");
  return stem.empty() ? "rank" : std::string(stem);
}

}  // namespace et::scaleout
