// The inputs of one et-viz run: one .et file per rank, each loaded into a Graph
// with its op nesting. The rank of a file is its metadata `rank` attribute,
// else the rank its name carries (`trace.3.et`; the rule every tool shares,
// proto/rank_files.h), else its position on the command line. Owns the graphs;
// immutable after loading.
#ifndef VISUALIZER_RANK_TRACES_H_
#define VISUALIZER_RANK_TRACES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/graph.h"
#include "visualizer/op_hierarchy.h"

namespace et::viz {

struct RankTrace {
  int rank = 0;
  std::string path;
  Graph graph;
  OpHierarchy hierarchy;
};

// Wraps an in-memory graph (tests, tools that already hold one).
RankTrace MakeRankTrace(Graph graph, int rank, std::string path);

// Loads each file, and each directory's per-rank files (ListRankFiles in
// proto/rank_files.h); fails on a file that does not load or on two files with
// one rank. The result is ordered by rank.
absl::StatusOr<std::vector<RankTrace>> LoadRankTraces(
    const std::vector<std::string>& inputs);

}  // namespace et::viz

#endif  // VISUALIZER_RANK_TRACES_H_
