// In-memory Chakra graph; see graph.h.
#include "proto/graph.h"

#include <algorithm>
#include <queue>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "proto/et_reader.h"
#include "proto/et_writer.h"
#include "proto/node_checks.h"
#include "proto/status_macros.h"

namespace et {

Graph Graph::Build(ChakraProtoMsg::GlobalMetadata metadata,
                   std::vector<ChakraProtoMsg::Node> nodes) {
  Graph g;
  g.metadata_ = std::move(metadata);
  g.nodes_ = std::move(nodes);
  std::stable_sort(
      g.nodes_.begin(), g.nodes_.end(),
      [](const ChakraProtoMsg::Node& a, const ChakraProtoMsg::Node& b) {
        return a.id() < b.id();
      });
  g.index_.reserve(g.nodes_.size());
  for (NodeIndex i = 0; i < g.nodes_.size(); ++i) {
    g.index_.try_emplace(g.nodes_[i].id(),
                         i);  // first copy of a duplicate wins
  }
  g.BuildAdjacency();
  return g;
}

std::optional<NodeIndex> Graph::Find(uint64_t id) const {
  auto it = index_.find(id);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

absl::Span<const NodeIndex> Graph::data_deps(NodeIndex i) const {
  return data_deps_.row(i);
}
absl::Span<const NodeIndex> Graph::ctrl_deps(NodeIndex i) const {
  return ctrl_deps_.row(i);
}
absl::Span<const NodeIndex> Graph::data_users(NodeIndex i) const {
  return data_users_.row(i);
}
absl::Span<const NodeIndex> Graph::ctrl_users(NodeIndex i) const {
  return ctrl_users_.row(i);
}

void Graph::BuildAdjacency() {
  const size_t n = nodes_.size();
  // Forward rows straight from the protos; reverse rows by counting sort.
  auto build = [&](bool data, Csr* fwd, Csr* rev) {
    fwd->offsets.assign(n + 1, 0);
    rev->offsets.assign(n + 1, 0);
    fwd->targets.clear();
    for (NodeIndex i = 0; i < n; ++i) {
      const auto& deps = data ? nodes_[i].data_deps() : nodes_[i].ctrl_deps();
      for (uint64_t dep : deps) {
        auto it = index_.find(dep);
        if (it == index_.end()) {
          ++missing_dep_count_;
          continue;
        }
        fwd->targets.push_back(it->second);
        ++rev->offsets[it->second + 1];
      }
      fwd->offsets[i + 1] = static_cast<uint32_t>(fwd->targets.size());
    }
    for (size_t i = 0; i < n; ++i) rev->offsets[i + 1] += rev->offsets[i];
    rev->targets.assign(fwd->targets.size(), 0);
    std::vector<uint32_t> cursor(rev->offsets.begin(), rev->offsets.end() - 1);
    for (NodeIndex i = 0; i < n; ++i) {
      for (NodeIndex dep : fwd->row(i)) rev->targets[cursor[dep]++] = i;
    }
  };
  build(/*data=*/true, &data_deps_, &data_users_);
  build(/*data=*/false, &ctrl_deps_, &ctrl_users_);
}

absl::StatusOr<std::vector<NodeIndex>> Graph::TopologicalOrder(
    DepSelection deps) const {
  const size_t n = nodes_.size();
  const bool use_data = deps != DepSelection::kCtrlOnly;
  const bool use_ctrl = deps != DepSelection::kDataOnly;
  std::vector<uint32_t> pending(n, 0);
  for (NodeIndex i = 0; i < n; ++i) {
    if (use_data) pending[i] += data_deps_.row(i).size();
    if (use_ctrl) pending[i] += ctrl_deps_.row(i).size();
  }
  // Min-heap on index == min on id, since nodes are sorted by id.
  std::priority_queue<NodeIndex, std::vector<NodeIndex>,
                      std::greater<NodeIndex>>
      ready;
  for (NodeIndex i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<NodeIndex> order;
  order.reserve(n);
  while (!ready.empty()) {
    NodeIndex i = ready.top();
    ready.pop();
    order.push_back(i);
    auto release = [&](absl::Span<const NodeIndex> users) {
      for (NodeIndex u : users) {
        if (--pending[u] == 0) ready.push(u);
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
std::vector<std::vector<uint64_t>> Graph::FindCycles(DepSelection sel,
                                                     size_t max_cycles) const {
  const Graph& g = *this;
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

absl::StatusOr<Graph> LoadGraph(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, EtReader::Open(path));
  std::vector<ChakraProtoMsg::Node> nodes;
  // Repeated ids are refused, not resolved: Build would keep the first copy
  // and the second's deps and times would silently vanish.
  absl::flat_hash_set<uint64_t> ids;
  ChakraProtoMsg::Node node;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&node));
    if (!more) break;
    if (absl::Status s = CheckNodeFields(node); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s", path, s.message()));
    }
    if (!ids.insert(node.id()).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: node %d: id repeated (message #%d)", path,
                          node.id(), nodes.size()));
    }
    nodes.push_back(std::move(node));
    node = ChakraProtoMsg::Node();
  }
  return Graph::Build(reader->metadata(), std::move(nodes));
}

absl::Status SaveGraph(const Graph& graph, const std::string& path) {
  return WriteEtFile(path, graph.metadata(), graph.nodes());
}

}  // namespace et
