// Dependency structure shared by Graph and NodeModel; see dep_graph.h.
#include "model/dep_graph.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et {

DepGraph DepGraph::Build(std::vector<uint64_t> ids,
                         const CsrRows<uint64_t>& data_dep_ids,
                         const CsrRows<uint64_t>& ctrl_dep_ids) {
  DepGraph g;
  g.ids_ = std::move(ids);
  g.index_.reserve(g.ids_.size());
  for (NodeIndex i = 0; i < g.ids_.size(); ++i) {
    g.index_.try_emplace(g.ids_[i], i);  // the first copy of a duplicate wins
  }
  g.missing_data_deps_ = g.Resolve(data_dep_ids, &g.data_deps_, &g.data_users_);
  g.missing_ctrl_deps_ = g.Resolve(ctrl_dep_ids, &g.ctrl_deps_, &g.ctrl_users_);
  return g;
}

DepGraph DepGraph::Extended(
    std::vector<uint64_t> ids, const CsrRows<uint64_t>& data_dep_ids,
    const CsrRows<uint64_t>& ctrl_dep_ids,
    absl::Span<const std::pair<NodeIndex, uint64_t>> added_data_deps) const {
  // The added deps by node, each node's in the order given.
  std::vector<std::pair<NodeIndex, uint64_t>> added(added_data_deps.begin(),
                                                    added_data_deps.end());
  std::stable_sort(
      added.begin(), added.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint64_t> all_ids;
  all_ids.reserve(ids_.size() + ids.size());
  all_ids.insert(all_ids.end(), ids_.begin(), ids_.end());
  all_ids.insert(all_ids.end(), ids.begin(), ids.end());
  CsrRows<uint64_t> data, ctrl;
  data.offsets.reserve(all_ids.size() + 1);
  ctrl.offsets.reserve(all_ids.size() + 1);
  data.targets.reserve(data_deps_.targets.size() + added.size() +
                       data_dep_ids.targets.size());
  ctrl.targets.reserve(ctrl_deps_.targets.size() + ctrl_dep_ids.targets.size());
  size_t next = 0;
  for (NodeIndex i = 0; i < ids_.size(); ++i) {
    for (NodeIndex d : data_deps(i)) data.targets.push_back(ids_[d]);
    for (; next < added.size() && added[next].first == i; ++next)
      data.targets.push_back(added[next].second);
    data.EndRow();
    for (NodeIndex d : ctrl_deps(i)) ctrl.targets.push_back(ids_[d]);
    ctrl.EndRow();
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    for (uint64_t d : data_dep_ids.row(k)) data.targets.push_back(d);
    data.EndRow();
    for (uint64_t d : ctrl_dep_ids.row(k)) ctrl.targets.push_back(d);
    ctrl.EndRow();
  }
  DepGraph g = Build(std::move(all_ids), data, ctrl);
  g.missing_data_deps_ += missing_data_deps_;
  g.missing_ctrl_deps_ += missing_ctrl_deps_;
  return g;
}

std::optional<NodeIndex> DepGraph::Find(uint64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

// Forward rows from the ids, reverse rows by counting sort. Returns the
// number of deps naming absent ids.
int64_t DepGraph::Resolve(const CsrRows<uint64_t>& dep_ids,
                          CsrRows<NodeIndex>* deps,
                          CsrRows<NodeIndex>* users) const {
  const size_t n = ids_.size();
  int64_t missing = 0;
  deps->offsets.assign(1, 0);
  deps->offsets.reserve(n + 1);
  deps->targets.reserve(dep_ids.targets.size());
  users->offsets.assign(n + 1, 0);
  for (NodeIndex i = 0; i < n; ++i) {
    for (uint64_t dep : dep_ids.row(i)) {
      auto it = index_.find(dep);
      if (it == index_.end()) {
        ++missing;
        continue;
      }
      deps->targets.push_back(it->second);
      ++users->offsets[it->second + 1];
    }
    deps->EndRow();
  }
  for (size_t i = 0; i < n; ++i) users->offsets[i + 1] += users->offsets[i];
  users->targets.assign(deps->targets.size(), 0);
  std::vector<uint32_t> cursor(users->offsets.begin(),
                               users->offsets.end() - 1);
  for (NodeIndex i = 0; i < n; ++i) {
    for (NodeIndex dep : deps->row(i)) users->targets[cursor[dep]++] = i;
  }
  return missing;
}

absl::StatusOr<std::vector<NodeIndex>> DepGraph::TopologicalOrder(
    DepSelection deps) const {
  // Nodes are sorted by id: their index is an id-ordered key.
  std::vector<int64_t> key(ids_.size());
  for (NodeIndex i = 0; i < key.size(); ++i) key[i] = i;
  return TopologicalOrder(deps, key);
}

absl::StatusOr<std::vector<NodeIndex>> DepGraph::TopologicalOrder(
    DepSelection deps, absl::Span<const int64_t> key) const {
  const size_t n = ids_.size();
  const bool use_data = deps != DepSelection::kCtrlOnly;
  const bool use_ctrl = deps != DepSelection::kDataOnly;
  std::vector<uint32_t> pending(n, 0);
  for (NodeIndex i = 0; i < n; ++i) {
    if (use_data) pending[i] += data_deps_.row(i).size();
    if (use_ctrl) pending[i] += ctrl_deps_.row(i).size();
  }
  using Ready = std::pair<int64_t, NodeIndex>;  // (key, index): a min-heap
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
  auto key_of = [&](NodeIndex i) { return i < key.size() ? key[i] : 0; };
  for (NodeIndex i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push({key_of(i), i});
  }
  std::vector<NodeIndex> order;
  order.reserve(n);
  while (!ready.empty()) {
    const NodeIndex i = ready.top().second;
    ready.pop();
    order.push_back(i);
    auto release = [&](absl::Span<const NodeIndex> users) {
      for (NodeIndex u : users) {
        if (--pending[u] == 0) ready.push({key_of(u), u});
      }
    };
    if (use_data) release(data_users_.row(i));
    if (use_ctrl) release(ctrl_users_.row(i));
  }
  if (order.size() == n) return order;
  const std::vector<uint64_t> cycle = FindCycles(deps, 1).front();
  return absl::FailedPreconditionError(absl::StrFormat(
      "dependency cycle through nodes %s (%d nodes not orderable)",
      absl::StrJoin(cycle, " -> "), n - order.size()));
}

// Finds up to `max_cycles` distinct cycles among the nodes Kahn's algorithm
// cannot order. Each residual node is walked at most once, so this is linear in
// the graph.
std::vector<std::vector<uint64_t>> DepGraph::FindCycles(
    DepSelection sel, size_t max_cycles) const {
  const DepGraph& g = *this;
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
      for (auto it = pos; it != path.end(); ++it) cycle.push_back(g.id(*it));
      std::reverse(cycle.begin(), cycle.end());
      cycles.push_back(std::move(cycle));
    }
    for (NodeIndex p : path) state[p] = 2;
  }
  return cycles;
}

}  // namespace et
