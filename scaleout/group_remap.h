// A recorded rank's process groups re-mapped onto a bigger job: each group
// keeps the dimensions it spans (recorded tp=8 stays a group of 8 at dp=64; a
// recorded data-parallel group, or the world of a DDP trace, becomes the new
// dp), and its members are placed by the target layout, so the network model
// costs its collectives on the links those members share. Every rank runs the
// same program (rank symmetry), so rank 0's instance of each group stands for
// all of them.
#ifndef SCALEOUT_GROUP_REMAP_H_
#define SCALEOUT_GROUP_REMAP_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/process_group.h"
#include "scaleout/parallel_layout.h"
#include "scaleout/recorded_layout.h"

namespace et::scaleout {

// The pg_name of the data-parallel group added when the trace has none (for
// the synthesized gradient sync, scaleout/dp_sync.h).
inline constexpr char kDpGroupName[] = "scaleout:dp";

struct ScaledGroups {
  ParallelLayout layout;             // the target
  ParallelLayout recorded;           // the layout the trace was recorded with
  ProcessGroup all_ranks;            // what collectives without a group span
  std::vector<ProcessGroup> groups;  // the trace's, same names, re-mapped
  // The group data-parallel collectives use: a recorded dp group, else the
  // one appended to `groups` (kDpGroupName) when the target has dp > 1.
  std::string dp_group_name;
  bool dp_recorded = false;  // the trace holds data-parallel collectives
  // The tensor-parallel group appended for synthesized tensor parallelism
  // (scaleout/tensor_parallel.h's kTpGroupName), when asked for; on a
  // recorded tp re-split, the recorded tensor-parallel group; else "".
  std::string tp_group_name;
  // Likewise the expert-parallel group (scaleout/expert_parallel.h's
  // kEpGroupName).
  std::string ep_group_name;
};

// Errors (one line) when `target` changes a dimension other than dp: a
// recorded dimension keeps its size (the ops are sharded for it), and one the
// trace does not record cannot be added (there are no ops for it) unless it is
// in `synthesized`: the caller makes its ops, and its group is appended (tp:
// a recorded tp in `synthesized` is re-split instead, its recorded group
// placed at the new tp and named by ScaledGroups::tp_group_name;
// scaleout/tensor_parallel.h, kTpGroupName; pp: scaleout/pipeline_schedule.h,
// kPpGroupName; ep: scaleout/expert_parallel.h, kEpGroupName).
absl::StatusOr<ScaledGroups> RemapGroups(
    const std::vector<ProcessGroup>& groups, const RecordedLayout& recorded,
    const ParallelLayout& target, DimMask synthesized = 0);

}  // namespace et::scaleout

#endif  // SCALEOUT_GROUP_REMAP_H_
