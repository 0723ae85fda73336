// A graph's digest for the cross-rank check; see graph_digest.h.
#include "converter/graph/graph_digest.h"

#include "base/status_macros.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_reader.h"

namespace et::convert {

void GraphDigest::SetMetadata(const ChakraProtoMsg::GlobalMetadata& metadata) {
  groups = DecodeProcessGroups(metadata.attr());
}

void GraphDigest::Add(const ChakraProtoMsg::Node& node) {
  ++nodes;
  ++nodes_by_type[node.type()];
  ++nodes_by_step[GetInt(node, attr::kStep).value_or(-1)];
  if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) return;
  by_group[GetString(node, attr::kPgName).value_or("")].push_back(
      {node.id(), GetInt(node, attr::kCommType).value_or(0),
       GetInt(node, attr::kCommSize).value_or(0)});
}

absl::StatusOr<GraphDigest> ReadGraphDigest(const std::string& path) {
  ASSIGN_OR_RETURN(auto reader, EtReader::Open(path));
  GraphDigest digest;
  digest.SetMetadata(reader->metadata());
  ChakraProtoMsg::Node node;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&node));
    if (!more) break;
    digest.Add(node);
  }
  return digest;
}

}  // namespace et::convert
