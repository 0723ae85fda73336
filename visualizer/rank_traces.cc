// Loading the per-rank inputs of et-viz into node models; see rank_traces.h.
#include "visualizer/rank_traces.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "proto/file_util.h"
#include "proto/status_macros.h"

namespace et::viz {

RankTrace MakeRankTrace(NodeModel model, int rank, std::string path) {
  RankTrace trace;
  trace.rank = rank;
  trace.path = std::move(path);
  trace.model = std::move(model);
  trace.hierarchy = OpHierarchy::Build(trace.model);
  return trace;
}

std::optional<int> RankFromFileName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  absl::string_view name =
      slash == absl::string_view::npos ? path : path.substr(slash + 1);
  if (absl::EndsWith(name, ".gz")) name.remove_suffix(3);
  if (!absl::EndsWith(name, ".et")) return std::nullopt;
  name.remove_suffix(3);
  const size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos) return std::nullopt;
  absl::string_view digits = name.substr(dot + 1);
  int rank = 0;
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(digits, &rank)) {
    return std::nullopt;
  }
  return rank;
}

absl::StatusOr<std::vector<RankTrace>> LoadRankTraces(
    const std::vector<std::string>& paths, bool keep_input_shapes) {
  ModelOptions options;
  options.keep_io = keep_input_shapes;
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
