// Graph validation; see graph_validation.h.
#include "proto/graph_validation.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et {
namespace {

// Finds up to `max_cycles` distinct cycles among the nodes Kahn's algorithm
// cannot order. Each residual node is walked at most once, so this is linear in
// the graph.
std::vector<std::vector<uint64_t>> FindCycles(const Graph& g, DepSelection sel,
                                              size_t max_cycles) {
  const size_t n = g.size();
  const bool use_data = sel != DepSelection::kCtrlOnly;
  const bool use_ctrl = sel != DepSelection::kDataOnly;
  std::vector<uint32_t> pending(n, 0);
  std::vector<NodeIndex> stack;
  for (NodeIndex i = 0; i < n; ++i) {
    if (use_data) pending[i] += g.data_deps(i).size();
    if (use_ctrl) pending[i] += g.ctrl_deps(i).size();
    if (pending[i] == 0) stack.push_back(i);
  }
  while (!stack.empty()) {
    NodeIndex i = stack.back();
    stack.pop_back();
    auto release = [&](absl::Span<const NodeIndex> users) {
      for (NodeIndex u : users) {
        if (--pending[u] == 0) stack.push_back(u);
      }
    };
    if (use_data) release(g.data_users(i));
    if (use_ctrl) release(g.ctrl_users(i));
  }
  // 0 = not walked, 1 = on the current walk, 2 = walked before.
  std::vector<uint8_t> state(n, 0);
  std::vector<std::vector<uint64_t>> cycles;
  std::vector<NodeIndex> path;
  for (NodeIndex start = 0; start < n && cycles.size() < max_cycles; ++start) {
    if (pending[start] == 0 || state[start] != 0) continue;
    path.clear();
    NodeIndex cur = start;
    while (state[cur] == 0) {
      state[cur] = 1;
      path.push_back(cur);
      NodeIndex next = cur;
      bool found = false;
      auto pick = [&](absl::Span<const NodeIndex> row) {
        for (NodeIndex d : row) {
          if (pending[d] != 0) {
            next = d;
            found = true;
            return;
          }
        }
      };
      if (use_data) pick(g.data_deps(cur));
      if (!found && use_ctrl) pick(g.ctrl_deps(cur));
      cur = next;
    }
    if (state[cur] == 1) {  // closed a new cycle on this walk
      auto pos = std::find(path.begin(), path.end(), cur);
      std::vector<uint64_t> cycle;
      for (auto it = pos; it != path.end(); ++it)
        cycle.push_back(g.node(*it).id());
      std::reverse(cycle.begin(), cycle.end());
      cycles.push_back(std::move(cycle));
    }
    for (NodeIndex p : path) state[p] = 2;
  }
  return cycles;
}

std::string CycleText(const std::vector<uint64_t>& cycle) {
  constexpr size_t kShown = 12;
  if (cycle.size() <= kShown) return absl::StrJoin(cycle, " -> ");
  std::vector<uint64_t> head(cycle.begin(), cycle.begin() + kShown);
  return absl::StrCat(absl::StrJoin(head, " -> "), " -> ... (", cycle.size(),
                      " nodes)");
}

}  // namespace

ValidationReport ValidateGraph(const Graph& graph,
                               const ValidationOptions& options) {
  ValidationReport r;
  for (NodeIndex i = 1; i < graph.size(); ++i) {
    if (graph.node(i).id() == graph.node(i - 1).id() &&
        (r.duplicate_ids.empty() ||
         r.duplicate_ids.back() != graph.node(i).id())) {
      r.duplicate_ids.push_back(graph.node(i).id());
    }
  }
  for (NodeIndex i = 0; i < graph.size(); ++i) {
    const auto& node = graph.node(i);
    auto check = [&](uint64_t dep, DepKind kind) {
      if (dep == node.id()) ++r.self_deps;
      if (graph.Find(dep).has_value()) return;
      (kind == DepKind::kData ? r.missing_data_deps : r.missing_ctrl_deps)++;
      if (r.missing_deps.size() < options.max_listed) {
        r.missing_deps.push_back({node.id(), dep, kind});
      }
    };
    for (uint64_t d : node.data_deps()) check(d, DepKind::kData);
    for (uint64_t d : node.ctrl_deps()) check(d, DepKind::kCtrl);
  }
  r.data_cycles =
      FindCycles(graph, DepSelection::kDataOnly, options.max_listed);
  r.all_dep_cycles = FindCycles(graph, DepSelection::kAll, options.max_listed);
  return r;
}

std::string ValidationReport::ToString() const {
  std::string out;
  if (!duplicate_ids.empty()) {
    absl::StrAppend(&out, duplicate_ids.size(), " duplicate node ids, first ",
                    duplicate_ids.front(), "\n");
  }
  if (missing_data_deps + missing_ctrl_deps > 0) {
    absl::StrAppendFormat(&out,
                          "%d data deps and %d ctrl deps name missing nodes",
                          missing_data_deps, missing_ctrl_deps);
    if (!missing_deps.empty()) {
      absl::StrAppendFormat(&out, ", first: node %d -> %d",
                            missing_deps[0].node_id, missing_deps[0].dep_id);
    }
    out += "\n";
  }
  if (self_deps > 0)
    absl::StrAppend(&out, self_deps, " nodes depend on themselves\n");
  for (const auto& c : data_cycles) {
    absl::StrAppend(&out, "data-dep cycle: ", CycleText(c), "\n");
  }
  if (data_cycles.empty()) {
    for (const auto& c : all_dep_cycles) {
      absl::StrAppend(&out, "dependency cycle (data+ctrl): ", CycleText(c),
                      "\n");
    }
  }
  if (out.empty()) out = "graph is valid\n";
  return out;
}

}  // namespace et
