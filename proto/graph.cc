// In-memory Chakra graph; see graph.h.
#include "proto/graph.h"

#include <algorithm>
#include <queue>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "proto/et_reader.h"
#include "proto/et_writer.h"
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
  // Walk back from any unfinished node through unfinished deps until a node
  // repeats.
  std::vector<int64_t> seen_at(n, -1);
  std::vector<NodeIndex> path;
  NodeIndex cur = 0;
  while (pending[cur] == 0) ++cur;
  while (seen_at[cur] < 0) {
    seen_at[cur] = static_cast<int64_t>(path.size());
    path.push_back(cur);
    NodeIndex next = cur;
    auto pick = [&](absl::Span<const NodeIndex> row) {
      for (NodeIndex d : row) {
        if (pending[d] != 0) {
          next = d;
          return true;
        }
      }
      return false;
    };
    if (!(use_data && pick(data_deps_.row(cur)))) {
      if (use_ctrl) pick(ctrl_deps_.row(cur));
    }
    cur = next;
  }
  std::vector<uint64_t> cycle;
  for (size_t k = static_cast<size_t>(seen_at[cur]); k < path.size(); ++k) {
    cycle.push_back(nodes_[path[k]].id());
  }
  std::reverse(cycle.begin(), cycle.end());
  return absl::FailedPreconditionError(absl::StrFormat(
      "dependency cycle through nodes %s (%d nodes not orderable)",
      absl::StrJoin(cycle, " -> "), n - order.size()));
}

absl::StatusOr<Graph> LoadGraph(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, EtReader::Open(path));
  std::vector<ChakraProtoMsg::Node> nodes;
  ChakraProtoMsg::Node node;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&node));
    if (!more) break;
    nodes.push_back(std::move(node));
    node = ChakraProtoMsg::Node();
  }
  return Graph::Build(reader->metadata(), std::move(nodes));
}

absl::Status SaveGraph(const Graph& graph, const std::string& path) {
  return WriteEtFile(path, graph.metadata(), graph.nodes());
}

}  // namespace et
