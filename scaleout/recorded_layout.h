// The layout a trace was recorded with, and the part of it each recorded
// process group spans. Read from the trace's process groups (PyTorch's
// `## process_group:init ##` table: Megatron's and DeepSpeed's group
// descriptions, else the rank lists' strides under Megatron's placement), or
// given (`--recorded-layout tp=8`) and then checked against those groups.
#ifndef SCALEOUT_RECORDED_LAYOUT_H_
#define SCALEOUT_RECORDED_LAYOUT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/process_group.h"
#include "scaleout/parallel_layout.h"

namespace et::scaleout {

// What one recorded group is in the layout.
struct GroupRole {
  std::string name;  // the group's pg_name
  DimMask mask = 0;  // the dimensions it varies (0 with `kept`)
  // The group fits no dimension set (e.g. Megatron's embedding group, the
  // first and last pipeline stage): it keeps its recorded ranks.
  bool kept = false;
};

struct RecordedLayout {
  ParallelLayout layout;
  std::string source;            // where `layout` comes from, for notes
  std::vector<GroupRole> roles;  // parallel to the groups given
  // What a collective without a group (or on a group of every rank) spans:
  // every recorded dimension larger than 1.
  DimMask all_ranks_mask = 0;
};

// `groups`: the trace's process groups. `recorded_world`: the ranks recorded
// (the trace's world_size, or the number of per-rank files; 0 = unknown).
// `given`: --recorded-layout, checked against the groups. Errors (one line):
// a given dimension that a named group contradicts, a group no set of the
// layout's dimensions makes (a dimension that does not divide it), a product
// other than the recorded world.
absl::StatusOr<RecordedLayout> DetectRecordedLayout(
    const std::vector<ProcessGroup>& groups, int64_t recorded_world,
    const std::optional<ParallelLayout>& given);

// Checks a given --recorded-layout (`recorded`, from DetectRecordedLayout)
// against the trace's gradient all-reduces: `gradient_collectives` counts the
// collectives issued from `torch::autograd::AccumulateGrad` (where DDP's
// reducer all-reduces its buckets) by the group they name ("" for none: every
// rank). Each must run on a group that layout makes data-parallel; else a
// one-line error naming the group, its size and what the trace shows.
absl::Status CheckGradientGroups(
    const RecordedLayout& recorded, const std::vector<ProcessGroup>& groups,
    const std::map<std::string, int64_t>& gradient_collectives);

// The dimension a group's description (or name) says it is, as Megatron
// ("TENSOR_MODEL_PARALLEL_GROUP", "tp", ...) and DeepSpeed ("ep_size_4",
// "expert_parallel_group_...") write them; 0 when it says none (or, like
// Megatron's "TENSOR_AND_DATA_PARALLEL_GROUP", several: then the mask of all).
DimMask RoleFromDescription(const ProcessGroup& group);

}  // namespace et::scaleout

#endif  // SCALEOUT_RECORDED_LAYOUT_H_
