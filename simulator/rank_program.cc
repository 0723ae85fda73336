// Graph -> RankProgram: classification of nodes, resource assignment,
// dependency CSR.
#include "simulator/rank_program.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/checked_math.h"
#include "proto/comm_type.h"

namespace et::sim {
namespace {

using ChakraProtoMsg::Node;

OpKind Classify(const Node& n) {
  switch (n.type()) {
    case ChakraProtoMsg::COMM_COLL_NODE:
      return OpKind::kCollective;
    case ChakraProtoMsg::COMM_SEND_NODE:
      return OpKind::kSend;
    case ChakraProtoMsg::COMM_RECV_NODE:
      return OpKind::kRecv;
    case ChakraProtoMsg::COMP_NODE:
      return OpKind::kCompute;
    default:
      return OpKind::kNoop;
  }
}

bool IsGpuOp(const Node& n) {
  if (std::optional<bool> g = GetBool(n, attr::kIsGpuOp)) return *g;
  if (std::optional<bool> c = GetBool(n, attr::kIsCpuOp)) return !*c;
  return false;
}

// Resource key: (class, id). Class 0 = CPU thread, 1 = GPU stream, 2 = comm
// channel.
std::pair<int, int64_t> ResourceKey(const Node& n, OpKind kind, int32_t group,
                                    SchedulingMode mode) {
  const bool comm = kind == OpKind::kCollective || kind == OpKind::kSend ||
                    kind == OpKind::kRecv;
  if (mode == SchedulingMode::kAstraCompat) {
    if (comm) return {2, 0};
    return {IsGpuOp(n) ? 1 : 0, 0};
  }
  if (comm) {
    if (std::optional<int64_t> s = GetInt(n, attr::kStream)) return {1, *s};
    return {2, group};
  }
  if (IsGpuOp(n)) return {1, GetInt(n, attr::kStream).value_or(0)};
  return {0, GetInt(n, attr::kTid).value_or(0)};
}

std::string ResourceName(std::pair<int, int64_t> key,
                         const ProgramGroups& groups) {
  switch (key.first) {
    case 0:
      return absl::StrCat("cpu tid ", key.second);
    case 1:
      return absl::StrCat("gpu stream ", key.second);
    default:
      return absl::StrCat(
          "comm ", key.second < static_cast<int64_t>(groups.groups.size())
                       ? groups.groups[key.second].name
                       : std::to_string(key.second));
  }
}

}  // namespace

int32_t ProgramGroups::Find(const std::string& name) const {
  for (size_t i = 1; i < groups.size(); ++i) {
    if (groups[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

absl::StatusOr<RankProgram> CompileRankProgram(
    const Graph& graph, const SimOptions& options,
    const ComputeCostModel& compute) {
  RankProgram p;
  p.graph = &graph;
  const size_t n = graph.size();
  p.groups.groups.push_back(ProcessGroup{});
  p.groups.groups[0].name = "<all>";
  std::vector<ProcessGroup> groups =
      options.groups_override.empty()
          ? DecodeProcessGroups(graph.metadata().attr())
          : options.groups_override;
  for (ProcessGroup& g : groups) p.groups.groups.push_back(std::move(g));
  // A group file describes the simulated world: its ranks are taken as they
  // are, not scaled from the recorded world (recorded_world_size 0 turns that
  // off).
  p.recorded_world_size =
      options.groups_override.empty()
          ? GetInt(graph.metadata().attr(), attr::kWorldSize).value_or(0)
          : 0;

  // Which deps to follow: all, unless control deps are cyclic (old converters).
  DepSelection deps = DepSelection::kAll;
  if (absl::StatusOr<std::vector<NodeIndex>> order =
          graph.TopologicalOrder(deps);
      !order.ok()) {
    deps = DepSelection::kDataOnly;
    absl::StatusOr<std::vector<NodeIndex>> data_order =
        graph.TopologicalOrder(deps);
    if (!data_order.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "data dependencies are cyclic: ", data_order.status().message()));
    }
    p.ctrl_deps_ignored = true;
    p.note = absl::StrCat("ctrl_deps are cyclic (", order.status().message(),
                          "); simulated with data_deps only");
  }
  if (graph.missing_dep_count() > 0) {
    absl::StrAppend(&p.note, p.note.empty() ? "" : "; ",
                    graph.missing_dep_count(),
                    " deps name ids not in the graph (ignored)");
  }

  p.kind.resize(n);
  p.resource.resize(n);
  p.compute_ns.assign(n, 0);
  p.recorded_ns.assign(n, 0);
  p.comm_type.assign(n, ChakraProtoMsg::ALL_REDUCE);
  p.comm_bytes.assign(n, 0);
  p.group.assign(n, 0);
  p.peer.assign(n, -1);
  p.dep_count.assign(n, 0);
  std::map<std::pair<int, int64_t>, uint32_t> resources;
  for (NodeIndex i = 0; i < n; ++i) {
    const Node& node = graph.node(i);
    const OpKind kind = Classify(node);
    p.kind[i] = kind;
    if (kind == OpKind::kCompute) {
      p.compute_ns[i] = compute.DurationNs(node);
    } else if (kind != OpKind::kNoop) {
      p.comm_type[i] = static_cast<ChakraProtoMsg::CollectiveCommType>(
          GetInt(node, attr::kCommType).value_or(ChakraProtoMsg::ALL_REDUCE));
      p.comm_bytes[i] =
          static_cast<uint64_t>(GetInt(node, attr::kCommSize).value_or(0));
      if (std::optional<std::string> pg = GetString(node, attr::kPgName)) {
        const int32_t g = p.groups.Find(*pg);
        p.group[i] = g < 0 ? 0 : g;
      }
      if (kind == OpKind::kSend)
        p.peer[i] = GetInt(node, attr::kCommDst).value_or(-1);
      if (kind == OpKind::kRecv)
        p.peer[i] = GetInt(node, attr::kCommSrc).value_or(-1);
      if (std::optional<int64_t> ns = GetInt(node, attr::kDurationNs);
          ns && *ns > 0) {
        p.recorded_ns[i] = *ns;
      } else {
        p.recorded_ns[i] = MicrosToNanosSaturating(node.duration_micros());
      }
    }
    const auto key = ResourceKey(node, kind, p.group[i], options.scheduling);
    auto [it, inserted] =
        resources.emplace(key, static_cast<uint32_t>(resources.size()));
    if (inserted) {
      p.resource_names.push_back(ResourceName(key, p.groups));
      p.resource_is_compute.push_back(key.first != 2);
    }
    p.resource[i] = it->second;
  }

  // Users CSR over the followed deps.
  p.user_offsets.assign(n + 1, 0);
  for (NodeIndex i = 0; i < n; ++i) {
    uint32_t count = static_cast<uint32_t>(graph.data_deps(i).size());
    if (deps == DepSelection::kAll) count += graph.ctrl_deps(i).size();
    p.dep_count[i] = count;
    for (NodeIndex d : graph.data_deps(i)) ++p.user_offsets[d + 1];
    if (deps == DepSelection::kAll) {
      for (NodeIndex d : graph.ctrl_deps(i)) ++p.user_offsets[d + 1];
    }
  }
  for (size_t i = 0; i < n; ++i) p.user_offsets[i + 1] += p.user_offsets[i];
  p.users.resize(p.user_offsets[n]);
  std::vector<uint32_t> fill(p.user_offsets.begin(), p.user_offsets.end() - 1);
  for (NodeIndex i = 0; i < n; ++i) {
    for (NodeIndex d : graph.data_deps(i)) p.users[fill[d]++] = i;
    if (deps == DepSelection::kAll) {
      for (NodeIndex d : graph.ctrl_deps(i)) p.users[fill[d]++] = i;
    }
  }
  return p;
}

}  // namespace et::sim
