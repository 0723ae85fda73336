// The in-memory Chakra graph every tool works on: nodes in ascending id order
// under dense indices, an id -> index map, and CSR adjacency for data and
// control dependencies in both directions (deps and users). Deps to ids absent
// from the graph are kept on the node but left out of the adjacency and
// counted, so that a graph with dangling deps still loads. Immutable after
// Build(); safe to read from several threads.
#ifndef PROTO_GRAPH_H_
#define PROTO_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "proto/et_def.pb.h"

namespace et {

using NodeIndex = uint32_t;

enum class DepKind { kData, kCtrl };

// Which dependency lists a traversal follows.
enum class DepSelection { kAll, kDataOnly, kCtrlOnly };

class Graph {
 public:
  // Takes the nodes in any order; sorts them by id. Duplicate ids are kept
  // (both copies) and reported by Validate(); Find() returns the first.
  static Graph Build(ChakraProtoMsg::GlobalMetadata metadata,
                     std::vector<ChakraProtoMsg::Node> nodes);

  const ChakraProtoMsg::GlobalMetadata& metadata() const { return metadata_; }
  size_t size() const { return nodes_.size(); }
  const ChakraProtoMsg::Node& node(NodeIndex i) const { return nodes_[i]; }
  const std::vector<ChakraProtoMsg::Node>& nodes() const { return nodes_; }
  std::optional<NodeIndex> Find(uint64_t id) const;

  // Dependencies that resolve to nodes in the graph, and their reverse edges.
  absl::Span<const NodeIndex> data_deps(NodeIndex i) const;
  absl::Span<const NodeIndex> ctrl_deps(NodeIndex i) const;
  absl::Span<const NodeIndex> data_users(NodeIndex i) const;
  absl::Span<const NodeIndex> ctrl_users(NodeIndex i) const;

  // Dependencies naming ids that are not in the graph (counted, not followed).
  int64_t missing_dep_count() const { return missing_dep_count_; }

  // Kahn's algorithm, ties broken by ascending id (deterministic). Fails with
  // the ids of one cycle when the selected deps are cyclic. Iterative: safe on
  // 10^6-node chains.
  absl::StatusOr<std::vector<NodeIndex>> TopologicalOrder(
      DepSelection deps = DepSelection::kAll) const;

  // Up to `max_cycles` distinct cycles among the nodes the selected deps cannot
  // order, each as node ids in dependency order. Linear in the graph; empty
  // when acyclic.
  std::vector<std::vector<uint64_t>> FindCycles(DepSelection deps,
                                                size_t max_cycles) const;

 private:
  struct Csr {
    std::vector<uint32_t> offsets;  // size() + 1
    std::vector<NodeIndex> targets;
    absl::Span<const NodeIndex> row(NodeIndex i) const {
      return absl::MakeConstSpan(targets.data() + offsets[i],
                                 offsets[i + 1] - offsets[i]);
    }
  };
  void BuildAdjacency();

  ChakraProtoMsg::GlobalMetadata metadata_;
  std::vector<ChakraProtoMsg::Node> nodes_;
  absl::flat_hash_map<uint64_t, NodeIndex> index_;
  Csr data_deps_, ctrl_deps_, data_users_, ctrl_users_;
  int64_t missing_dep_count_ = 0;
};

// Loads a whole .et file (plain or gzip) into a Graph.
absl::StatusOr<Graph> LoadGraph(const std::string& path);

// Writes a graph to `path` (nodes in ascending id order).
absl::Status SaveGraph(const Graph& graph, const std::string& path);

}  // namespace et

#endif  // PROTO_GRAPH_H_
