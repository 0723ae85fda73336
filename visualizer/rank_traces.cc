// Loading the per-rank inputs of et-viz into node models; see rank_traces.h.
#include "visualizer/rank_traces.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"

namespace et::viz {

RankTrace MakeRankTrace(NodeModel model, int rank, std::string path) {
  RankTrace trace;
  trace.rank = rank;
  trace.path = std::move(path);
  trace.model = std::move(model);
  trace.hierarchy = OpHierarchy::Build(trace.model);
  return trace;
}

absl::StatusOr<std::vector<RankTrace>> LoadRankTraces(
    const std::vector<std::string>& inputs, bool keep_input_shapes,
    bool keep_tensors) {
  ModelOptions options;
  options.keep_io = keep_input_shapes;
  options.keep_tensors = keep_tensors;
  // A directory stands for its per-rank files, in rank order.
  std::vector<std::string> paths;
  for (const std::string& input : inputs) {
    if (!IsDirectory(input)) {
      paths.push_back(input);
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<std::string> listed,
                     ListRankFiles(input, ".et"));
    paths.insert(paths.end(), listed.begin(), listed.end());
  }
  std::vector<RankTrace> traces;
  traces.reserve(paths.size());
  for (size_t k = 0; k < paths.size(); ++k) {
    auto model = NodeModel::Load(paths[k], options);
    if (!model.ok()) {
      return absl::Status(model.status().code(),
                          PrefixPath(paths[k], model.status().message()));
    }
    int rank = static_cast<int>(k);
    if (const int64_t meta_rank = model->info().rank; meta_rank >= 0) {
      rank = static_cast<int>(meta_rank);
    } else if (auto name_rank = RankFromFileName(paths[k])) {
      rank = *name_rank;
    }
    for (const RankTrace& other : traces) {
      if (other.rank == rank) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: rank %d is also the rank of %s (ranks come "
                            "from the metadata `rank` "
                            "attribute, else from names like trace.<rank>.et)",
                            paths[k], rank, other.path));
      }
    }
    traces.push_back(MakeRankTrace(*std::move(model), rank, paths[k]));
  }
  std::sort(
      traces.begin(), traces.end(),
      [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  return traces;
}

}  // namespace et::viz
