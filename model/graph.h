// A Chakra graph as protobuf nodes, in ascending id order under dense indices,
// with its dependency structure (DepGraph). For writers and for checking what
// a converter wrote; the tools read NodeModel (model/node_model.h) instead.
// Immutable after Build(); safe to read from several threads.
#ifndef MODEL_GRAPH_H_
#define MODEL_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/dep_graph.h"
#include "proto/et_def.pb.h"

namespace et {

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
  std::optional<NodeIndex> Find(uint64_t id) const { return deps_.Find(id); }

  // Dependencies that resolve to nodes in the graph, and their reverse edges.
  absl::Span<const NodeIndex> data_deps(NodeIndex i) const {
    return deps_.data_deps(i);
  }
  absl::Span<const NodeIndex> ctrl_deps(NodeIndex i) const {
    return deps_.ctrl_deps(i);
  }
  absl::Span<const NodeIndex> data_users(NodeIndex i) const {
    return deps_.data_users(i);
  }
  absl::Span<const NodeIndex> ctrl_users(NodeIndex i) const {
    return deps_.ctrl_users(i);
  }
  // Dependencies naming ids that are not in the graph (counted, not followed).
  int64_t missing_dep_count() const { return deps_.missing_dep_count(); }
  const DepGraph& deps() const { return deps_; }

  // See DepGraph.
  absl::StatusOr<std::vector<NodeIndex>> TopologicalOrder(
      DepSelection deps = DepSelection::kAll) const {
    return deps_.TopologicalOrder(deps);
  }
  std::vector<std::vector<uint64_t>> FindCycles(DepSelection deps,
                                                size_t max_cycles) const {
    return deps_.FindCycles(deps, max_cycles);
  }

 private:
  ChakraProtoMsg::GlobalMetadata metadata_;
  std::vector<ChakraProtoMsg::Node> nodes_;
  DepGraph deps_;
};

// Loads a whole .et file (plain or gzip) into a Graph.
absl::StatusOr<Graph> LoadGraph(const std::string& path);

// Writes a graph to `path` (nodes in ascending id order).
absl::Status SaveGraph(const Graph& graph, const std::string& path);

}  // namespace et

#endif  // MODEL_GRAPH_H_
