// Group re-mapping onto the target layout; see group_remap.h.
#include "scaleout/group_remap.h"

#include "absl/strings/str_format.h"
#include "scaleout/expert_parallel.h"
#include "scaleout/pipeline_plan.h"
#include "scaleout/tensor_parallel.h"

namespace et::scaleout {
namespace {

ProcessGroup Placed(const ProcessGroup& recorded, const ParallelLayout& target,
                    DimMask mask) {
  ProcessGroup g = recorded;
  g.ranks = target.GroupOf(0, mask);
  g.size = static_cast<int64_t>(g.ranks.size());
  return g;
}

}  // namespace

absl::StatusOr<ScaledGroups> RemapGroups(
    const std::vector<ProcessGroup>& groups, const RecordedLayout& recorded,
    const ParallelLayout& target, DimMask synthesized) {
  // The layout that keeps every recorded dimension and takes the target's dp:
  // what a user who wrote only the dp they want (`--layout dp=8` on a tp=2
  // trace) means.
  ParallelLayout kept = target;
  for (Dim d : {Dim::kTp, Dim::kPp, Dim::kEp})
    kept.of(d) = recorded.layout.of(d);
  for (Dim d : {Dim::kTp, Dim::kPp, Dim::kEp}) {
    const int64_t was = recorded.layout.of(d), now = target.of(d);
    if (was == now) continue;
    // Synthesized: added on a trace recorded without it, or (tp) re-split
    // from the recorded tp (scaleout/tensor_parallel.h).
    if ((synthesized & MaskOf(d)) != 0 && (was == 1 || d == Dim::kTp)) continue;
    if (was > 1 && d == Dim::kTp) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--layout %s: the trace records tp=%d (recorded as %s), and tp=1 "
          "would merge its shards (its recorded all-reduces would go; a "
          "one-rank trace is the source for that): a recorded tp is re-split "
          "to another tp > 1 only; use --layout %s",
          target.ToString(), was, recorded.layout.ToString(), kept.ToString()));
    }
    if (was > 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--layout %s: the trace records %s=%d (recorded as %s), and a "
          "recorded dimension keeps its size (its ops are sharded for it); "
          "only dp scales: use --layout %s",
          target.ToString(), DimName(d), was, recorded.layout.ToString(),
          kept.ToString()));
    }
    // What adding the dimension would take, and what exists instead.
    const char* needs =
        d == Dim::kTp
            ? "tensor parallelism is synthesized only from the trace itself "
              "(scaleout/tensor_parallel.h)"
        : d == Dim::kPp
            ? "pipeline parallelism is synthesized only by et-sim's "
              "simulation (simulator/simulation_pipeline.cc)"
            : "expert parallelism is synthesized only from the trace itself "
              "(scaleout/expert_parallel.h)";
    return absl::InvalidArgumentError(absl::StrFormat(
        "--layout %s: the trace records no %s (%s), and %s; dp scales, and tp, "
        "pp and ep are synthesized on a trace recorded without them",
        target.ToString(), DimName(d), recorded.layout.ToString(), needs));
  }
  ScaledGroups out;
  out.layout = target;
  out.recorded = recorded.layout;
  out.all_ranks.name = kAllRanksGroupName;
  out.all_ranks.ranks = target.GroupOf(0, recorded.all_ranks_mask);
  out.all_ranks.size = static_cast<int64_t>(out.all_ranks.ranks.size());
  const DimMask dp = MaskOf(Dim::kDp);
  for (size_t i = 0; i < groups.size(); ++i) {
    const GroupRole& role = recorded.roles[i];
    out.groups.push_back(role.kept ? groups[i]
                                   : Placed(groups[i], target, role.mask));
    if (!role.kept && role.mask == dp && out.dp_group_name.empty())
      out.dp_group_name = groups[i].name;
  }
  // A DDP trace's collectives without a group are its data-parallel ones.
  if (out.dp_group_name.empty() && recorded.all_ranks_mask == dp)
    out.dp_group_name = kAllRanksGroupName;
  out.dp_recorded =
      !out.dp_group_name.empty() && recorded.layout.of(Dim::kDp) > 1;
  if (out.dp_group_name.empty() && target.of(Dim::kDp) > 1) {
    ProcessGroup g;
    g.name = kDpGroupName;
    g.desc = "data_parallel (scaleout)";
    out.groups.push_back(Placed(g, target, dp));
    out.dp_group_name = kDpGroupName;
  }
  const bool tp_resplit = recorded.layout.of(Dim::kTp) > 1;
  if ((synthesized & MaskOf(Dim::kTp)) != 0 && tp_resplit) {
    // Re-split: the recorded tensor-parallel group, placed at the new tp
    // above, carries the recorded all-reduces and any synthesized ones.
    // The group that says it is tensor-parallel (Megatron's description),
    // else the first that spans tp alone.
    for (size_t i = 0; i < groups.size(); ++i) {
      if (recorded.roles[i].kept || recorded.roles[i].mask != MaskOf(Dim::kTp))
        continue;
      if (out.tp_group_name.empty() ||
          RoleFromDescription(groups[i]) == MaskOf(Dim::kTp))
        out.tp_group_name = groups[i].name;
    }
    if (out.tp_group_name.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--layout %s: the trace records tp=%d (%s) but no process group of "
          "its tensor-parallel ranks alone, so the recorded all-reduces have "
          "no group to resize; record with PyTorch >= 2.1 (its process group "
          "table) or give the group a Megatron description",
          target.ToString(), recorded.layout.of(Dim::kTp),
          recorded.layout.ToString()));
    }
  } else if ((synthesized & MaskOf(Dim::kTp)) != 0 && target.of(Dim::kTp) > 1) {
    ProcessGroup g;
    g.name = kTpGroupName;
    g.desc = "tensor_parallel (synthesized)";
    out.groups.push_back(Placed(g, target, MaskOf(Dim::kTp)));
    out.tp_group_name = kTpGroupName;
  }
  if ((synthesized & MaskOf(Dim::kEp)) != 0 && target.of(Dim::kEp) > 1) {
    ProcessGroup g;
    g.name = kEpGroupName;
    g.desc = "expert_parallel (synthesized)";
    out.groups.push_back(Placed(g, target, MaskOf(Dim::kEp)));
    out.ep_group_name = kEpGroupName;
  }
  if ((synthesized & MaskOf(Dim::kPp)) != 0 && target.of(Dim::kPp) > 1) {
    ProcessGroup g;
    g.name = kPpGroupName;
    g.desc = "pipeline_parallel (synthesized)";
    out.groups.push_back(Placed(g, target, MaskOf(Dim::kPp)));
  }
  return out;
}

}  // namespace et::scaleout
