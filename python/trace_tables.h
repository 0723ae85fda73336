// A recorded trace as tables: the .et files an input names (one file, a rank
// pattern with its rank count, or a folder, by base/rank_files.h's rule, as
// et-sim reads them), each decoded by the node model every tool compiles from
// (model/node_model.h), and their nodes, dependencies and process groups as
// column tables for Python (python/table.h).
#ifndef PYTHON_TRACE_TABLES_H_
#define PYTHON_TRACE_TABLES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/node_model.h"
#include "python/table.h"

namespace et::python {

struct LoadedTrace {
  std::vector<std::string> files;  // in rank order
  std::vector<int64_t> ranks;      // each file's recorded rank, else its place
  std::vector<NodeModel> models;
};

// Loads the files `path` names; `pattern_ranks` is --ranks (0 for none).
// Errors name the file and node, as et-sim's do.
absl::StatusOr<LoadedTrace> LoadTrace(const std::string& path,
                                      int64_t pattern_ranks);

// One row per node of every rank, in rank then id order: id, name, kind, node
// type, rank, queue (thread, stream or comm group) and its number, recorded
// start and duration in us (NaN: not recorded), FLOPs, bytes, step,
// communication type (a collective's Chakra type, else send or recv), bytes,
// group, peer.
Table NodesTable(const LoadedTrace& trace);

// One row per dependency: rank, the node that waits (dst), the node it waits
// for (src), and whether it is a data or control dependency.
Table DepsTable(const LoadedTrace& trace);

// One row per process group of each rank: name, description, backend,
// members (a space-separated list; "" every rank) and size.
Table GroupsTable(const LoadedTrace& trace);

// Per file, what it was decoded from (schema, rank, world, device, the
// global metadata as Chakra's protobuf JSON) and the loading notes, as JSON.
std::string MetadataJson(const LoadedTrace& trace);

}  // namespace et::python

#endif  // PYTHON_TRACE_TABLES_H_
