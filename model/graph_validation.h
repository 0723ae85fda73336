// Structural checks of a Graph: duplicate ids, dependencies on missing ids, and
// cycles (with the ids of each cycle found). Reports problems instead of
// failing on the first.
#ifndef MODEL_GRAPH_VALIDATION_H_
#define MODEL_GRAPH_VALIDATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/graph.h"

namespace et {

struct MissingDep {
  uint64_t node_id;
  uint64_t dep_id;
  DepKind kind;
};

struct ValidationReport {
  std::vector<uint64_t> duplicate_ids;
  std::vector<MissingDep>
      missing_deps;  // at most `max_listed`, see counts below
  int64_t missing_data_deps = 0;
  int64_t missing_ctrl_deps = 0;
  int64_t self_deps = 0;
  // Each entry is one cycle: node ids in dependency order (a -> b means b
  // depends on a).
  std::vector<std::vector<uint64_t>> data_cycles;
  // Cycles when data and control deps are followed together (includes the data
  // cycles).
  std::vector<std::vector<uint64_t>> all_dep_cycles;

  bool ok() const {
    return duplicate_ids.empty() && missing_data_deps == 0 &&
           missing_ctrl_deps == 0 && all_dep_cycles.empty();
  }
  // Multi-line human summary; one line per problem kind.
  std::string ToString() const;
};

struct ValidationOptions {
  size_t max_listed = 20;  // missing deps and cycles listed individually
};

ValidationReport ValidateGraph(const Graph& graph,
                               const ValidationOptions& options = {});

}  // namespace et

#endif  // MODEL_GRAPH_VALIDATION_H_
