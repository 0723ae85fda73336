// The dependency structure of a graph, apart from what its nodes are: node ids
// in ascending order under dense indices, an id -> index map, and CSR rows of
// data and control dependencies in both directions (deps and users). Deps on
// ids absent from the graph are left out of the rows and counted, so a graph
// with dangling deps still loads. Shared by Graph (protobuf nodes) and
// NodeModel (typed columns). Immutable after Build(); thread-safe reads.
#ifndef MODEL_DEP_GRAPH_H_
#define MODEL_DEP_GRAPH_H_

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace et {

using NodeIndex = uint32_t;

enum class DepKind { kData, kCtrl };

// Which dependency lists a traversal follows.
enum class DepSelection { kAll, kDataOnly, kCtrlOnly };

// Rows of uint64 ids or uint32 indices; offsets has one entry per row + 1.
template <typename T>
struct CsrRows {
  std::vector<uint32_t> offsets{0};
  std::vector<T> targets;
  size_t rows() const { return offsets.size() - 1; }
  absl::Span<const T> row(size_t i) const {
    return absl::MakeConstSpan(targets.data() + offsets[i],
                               offsets[i + 1] - offsets[i]);
  }
  void EndRow() { offsets.push_back(static_cast<uint32_t>(targets.size())); }
};

class DepGraph {
 public:
  // `ids` ascending (duplicates allowed: the first copy is the one found);
  // row i of `data_dep_ids` / `ctrl_dep_ids` holds node i's deps as ids.
  static DepGraph Build(std::vector<uint64_t> ids,
                        const CsrRows<uint64_t>& data_dep_ids,
                        const CsrRows<uint64_t>& ctrl_dep_ids);
  // This graph with more: nodes `ids` appended (ascending, each above every
  // id here) with their rows of deps, and `added_data_deps` (node here, dep
  // id) appended to the data rows of nodes here, in the order given. The
  // same as Build over the extended rows, the deps this graph left out
  // still counted (et-sim adds a data-parallel sync to a loaded model).
  DepGraph Extended(
      std::vector<uint64_t> ids, const CsrRows<uint64_t>& data_dep_ids,
      const CsrRows<uint64_t>& ctrl_dep_ids,
      absl::Span<const std::pair<NodeIndex, uint64_t>> added_data_deps) const;

  size_t size() const { return ids_.size(); }
  uint64_t id(NodeIndex i) const { return ids_[i]; }
  std::optional<NodeIndex> Find(uint64_t id) const;

  absl::Span<const NodeIndex> data_deps(NodeIndex i) const {
    return data_deps_.row(i);
  }
  absl::Span<const NodeIndex> ctrl_deps(NodeIndex i) const {
    return ctrl_deps_.row(i);
  }
  absl::Span<const NodeIndex> data_users(NodeIndex i) const {
    return data_users_.row(i);
  }
  absl::Span<const NodeIndex> ctrl_users(NodeIndex i) const {
    return ctrl_users_.row(i);
  }
  int64_t missing_data_deps() const { return missing_data_deps_; }
  int64_t missing_ctrl_deps() const { return missing_ctrl_deps_; }
  int64_t missing_dep_count() const {
    return missing_data_deps_ + missing_ctrl_deps_;
  }

  // Kahn's algorithm, ties broken by ascending id (deterministic). Fails with
  // the ids of one cycle when the selected deps are cyclic. Iterative.
  absl::StatusOr<std::vector<NodeIndex>> TopologicalOrder(
      DepSelection deps = DepSelection::kAll) const;
  // The same, ties broken by ascending `key` (one per node), then id: among the
  // ready nodes the one with the earliest key goes first. A real-time replay
  // issues by recorded start this way.
  absl::StatusOr<std::vector<NodeIndex>> TopologicalOrder(
      DepSelection deps, absl::Span<const int64_t> key) const;

  // Up to `max_cycles` distinct cycles among the nodes the selected deps
  // cannot order, each as node ids in dependency order. Linear; empty when
  // acyclic.
  std::vector<std::vector<uint64_t>> FindCycles(DepSelection deps,
                                                size_t max_cycles) const;

 private:
  int64_t Resolve(const CsrRows<uint64_t>& dep_ids, CsrRows<NodeIndex>* deps,
                  CsrRows<NodeIndex>* users) const;

  std::vector<uint64_t> ids_;
  absl::flat_hash_map<uint64_t, NodeIndex> index_;
  CsrRows<NodeIndex> data_deps_, ctrl_deps_, data_users_, ctrl_users_;
  int64_t missing_data_deps_ = 0;
  int64_t missing_ctrl_deps_ = 0;
};

}  // namespace et

#endif  // MODEL_DEP_GRAPH_H_
