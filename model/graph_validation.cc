// Graph validation; see graph_validation.h.
#include "model/graph_validation.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et {
namespace {

std::string CycleText(const std::vector<uint64_t>& cycle) {
  constexpr size_t kShown = 12;
  if (cycle.size() <= kShown) return absl::StrJoin(cycle, " -> ");
  std::vector<uint64_t> head(cycle.begin(), cycle.begin() + kShown);
  return absl::StrCat(absl::StrJoin(head, " -> "), " -> ... (", cycle.size(),
                      " nodes)");
}

}  // namespace

ValidationReport ValidateGraph(const Graph& graph,
                               const ValidationOptions& options) {
  ValidationReport r;
  for (NodeIndex i = 1; i < graph.size(); ++i) {
    if (graph.node(i).id() == graph.node(i - 1).id() &&
        (r.duplicate_ids.empty() ||
         r.duplicate_ids.back() != graph.node(i).id())) {
      r.duplicate_ids.push_back(graph.node(i).id());
    }
  }
  for (NodeIndex i = 0; i < graph.size(); ++i) {
    const auto& node = graph.node(i);
    auto check = [&](uint64_t dep, DepKind kind) {
      if (dep == node.id()) ++r.self_deps;
      if (graph.Find(dep).has_value()) return;
      (kind == DepKind::kData ? r.missing_data_deps : r.missing_ctrl_deps)++;
      if (r.missing_deps.size() < options.max_listed) {
        r.missing_deps.push_back({node.id(), dep, kind});
      }
    };
    for (uint64_t d : node.data_deps()) check(d, DepKind::kData);
    for (uint64_t d : node.ctrl_deps()) check(d, DepKind::kCtrl);
  }
  r.data_cycles = graph.FindCycles(DepSelection::kDataOnly, options.max_listed);
  r.all_dep_cycles = graph.FindCycles(DepSelection::kAll, options.max_listed);
  return r;
}

std::string ValidationReport::ToString() const {
  std::string out;
  if (!duplicate_ids.empty()) {
    absl::StrAppend(&out, duplicate_ids.size(), " duplicate node ids, first ",
                    duplicate_ids.front(), "\n");
  }
  if (missing_data_deps + missing_ctrl_deps > 0) {
    absl::StrAppendFormat(&out,
                          "%d data deps and %d ctrl deps name missing nodes",
                          missing_data_deps, missing_ctrl_deps);
    if (!missing_deps.empty()) {
      absl::StrAppendFormat(&out, ", first: node %d -> %d",
                            missing_deps[0].node_id, missing_deps[0].dep_id);
    }
    out += "\n";
  }
  if (self_deps > 0)
    absl::StrAppend(&out, self_deps, " nodes depend on themselves\n");
  for (const auto& c : data_cycles) {
    absl::StrAppend(&out, "data-dep cycle: ", CycleText(c), "\n");
  }
  if (data_cycles.empty()) {
    for (const auto& c : all_dep_cycles) {
      absl::StrAppend(&out, "dependency cycle (data+ctrl): ", CycleText(c),
                      "\n");
    }
  }
  if (out.empty()) out = "graph is valid\n";
  return out;
}

}  // namespace et
