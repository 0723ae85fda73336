// One Simulation per sweep point; the rows are read off each point's report.
#include "simulator/layout_sweep.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/path.h"
#include "base/status_macros.h"
#include "model/node_model.h"
#include "nlohmann/json.hpp"
#include "scaleout/recorded_layout.h"

namespace et::sim {
namespace {

using scaleout::Dim;
using scaleout::DimName;
using scaleout::ParallelLayout;

// The dimensions the sweep does not change: --layout's, else the recorded
// ones. When the trace does not say how it was recorded, all 1: the point's
// simulation then reports what to pass (--recorded-layout).
absl::StatusOr<ParallelLayout> BaseLayout(const std::string& file,
                                          const SimOptions& base) {
  if (base.layout) return *base.layout;
  ASSIGN_OR_RETURN(NodeModel model, NodeModel::Load(file));
  absl::StatusOr<scaleout::RecordedLayout> recorded =
      scaleout::DetectRecordedLayout(model.groups(), model.info().world_size,
                                     base.recorded_layout);
  return recorded.ok() ? recorded->layout : ParallelLayout{};
}

}  // namespace

absl::Status CheckLayoutSweep(const SimOptions& base,
                              const scaleout::LayoutSweep& sweep) {
  const std::string name(DimName(sweep.dim));
  if (base.layout && base.layout->of(sweep.dim) != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--sweep %s with --layout %s: the sweep sets %s; give --layout the "
        "other dimensions only",
        name, base.layout->ToString(), name));
  }
  absl::flat_hash_set<int64_t> seen;
  for (int64_t v : sweep.values) {
    if (!seen.insert(v).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--sweep %s: %d given twice", name, v));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SweepResult> RunLayoutSweep(const SimInput& input,
                                           const SimOptions& base,
                                           const scaleout::LayoutSweep& sweep) {
  RETURN_IF_ERROR(CheckLayoutSweep(base, sweep));
  ASSIGN_OR_RETURN(std::vector<std::string> files, ResolveRankFiles(input));
  if (files.size() != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --sweep takes one rank's trace (every rank of each point runs "
        "it), got %d per-rank files",
        input.path, files.size()));
  }
  ASSIGN_OR_RETURN(ParallelLayout other, BaseLayout(files[0], base));
  SweepResult result;
  result.dim = sweep.dim;
  result.trace = input.path;
  for (int64_t value : sweep.values) {
    SimOptions options = base;
    options.layout = other;
    options.layout->of(sweep.dim) = value;
    absl::StatusOr<std::unique_ptr<Simulation>> sim =
        Simulation::Run(input, options);
    if (!sim.ok()) {
      return absl::Status(
          sim.status().code(),
          absl::StrCat("--sweep point ", options.layout->ToString(), ": ",
                       sim.status().message()));
    }
    if (result.recorded_layout.empty() && (*sim)->scaled_groups()) {
      result.recorded_layout = (*sim)->scaled_groups()->recorded.ToString();
    }
    result.rows.push_back(SweepRowOf((*sim)->report(), *options.layout, value));
  }
  return result;
}

}  // namespace et::sim
