// What the cross-rank check (cross_rank_check.h) needs of one rank's graph:
// its collectives per process group in issue order, its process groups, and
// its shape (nodes by type and by step). Collected by the converter as it
// writes each node, so that a multi-rank conversion need not read its outputs
// back (re-reading 220 MB of .et was ~11% of a 100 MB nsys conversion), or
// read from a .et file that was not converted in this run.
#ifndef CONVERTER_GRAPH_GRAPH_DIGEST_H_
#define CONVERTER_GRAPH_GRAPH_DIGEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/process_group.h"
#include "proto/et_def.pb.h"

namespace et::convert {

struct GraphDigest {
  struct Issued {
    uint64_t node_id;
    int64_t type;
    int64_t size_bytes;
  };
  std::map<std::string, std::vector<Issued>> by_group;  // pg ("" = default)
  std::vector<ProcessGroup> groups;
  int64_t nodes = 0;
  std::map<int, int64_t> nodes_by_type;      // NodeType -> count
  std::map<int64_t, int64_t> nodes_by_step;  // -1: outside every step

  // The graph's process groups, from its metadata.
  void SetMetadata(const ChakraProtoMsg::GlobalMetadata& metadata);
  // One node, in the order of the file.
  void Add(const ChakraProtoMsg::Node& node);
};

// The digest of a .et file, read through.
absl::StatusOr<GraphDigest> ReadGraphDigest(const std::string& path);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_GRAPH_DIGEST_H_
