// In-memory Chakra graph; see graph.h.
#include "model/graph.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "proto/et_reader.h"
#include "proto/et_writer.h"
#include "proto/node_checks.h"

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
  std::vector<uint64_t> ids;
  ids.reserve(g.nodes_.size());
  CsrRows<uint64_t> data, ctrl;
  for (const ChakraProtoMsg::Node& node : g.nodes_) {
    ids.push_back(node.id());
    data.targets.insert(data.targets.end(), node.data_deps().begin(),
                        node.data_deps().end());
    data.EndRow();
    ctrl.targets.insert(ctrl.targets.end(), node.ctrl_deps().begin(),
                        node.ctrl_deps().end());
    ctrl.EndRow();
  }
  g.deps_ = DepGraph::Build(std::move(ids), data, ctrl);
  return g;
}

absl::StatusOr<Graph> LoadGraph(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, EtReader::Open(path));
  std::vector<ChakraProtoMsg::Node> nodes;
  // Repeated ids are refused, not resolved: Build would keep the first copy
  // and the second's deps and times would silently vanish.
  absl::flat_hash_set<uint64_t> ids;
  RETURN_IF_ERROR(ForEachCheckedNode(
      reader.get(), [&](ChakraProtoMsg::Node* node) -> absl::Status {
        if (!ids.insert(node->id()).second) {
          return absl::InvalidArgumentError(
              absl::StrFormat("%s: node %d: id repeated (message #%d)", path,
                              node->id(), nodes.size()));
        }
        nodes.push_back(std::move(*node));
        *node = ChakraProtoMsg::Node();
        return absl::OkStatus();
      }));
  return Graph::Build(reader->metadata(), std::move(nodes));
}

absl::Status SaveGraph(const Graph& graph, const std::string& path) {
  return WriteEtFile(path, graph.metadata(), graph.nodes());
}

}  // namespace et
