// The inputs of one et-viz run: one .et file per rank, each decoded into the
// typed node model (model/node_model.h) with its op nesting. The rank of a file
// is its metadata `rank` attribute, else the rank its name carries
// (`trace.3.et`; the rule every tool shares, base/rank_files.h), else its
// position on the command line. Owns the models; immutable after loading.
#ifndef VISUALIZER_RANK_TRACES_H_
#define VISUALIZER_RANK_TRACES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/node_model.h"
#include "visualizer/op_hierarchy.h"

namespace et::viz {

struct RankTrace {
  int rank = 0;
  std::string path;
  NodeModel model;
  OpHierarchy hierarchy;
};

// Wraps a model already built (tests build one with NodeModel::FromGraph).
RankTrace MakeRankTrace(NodeModel model, int rank, std::string path);

// Loads each file, and each directory's per-rank files (ListRankFiles in
// base/rank_files.h); fails on a file that does not load or on two files with
// one rank. The result is ordered by rank. The IO table is dropped unless
// `keep_input_shapes` (report rows by input shapes): nothing else in et-viz
// reads it, and it is most of a model's memory.
// `keep_tensors` keeps every node's recorded tensors (the memory timeline).
absl::StatusOr<std::vector<RankTrace>> LoadRankTraces(
    const std::vector<std::string>& inputs, bool keep_input_shapes = false,
    bool keep_tensors = false);

}  // namespace et::viz

#endif  // VISUALIZER_RANK_TRACES_H_
