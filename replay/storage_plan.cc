// Storage sizes and lifetimes over the issue order; see storage_plan.h.
#include "replay/storage_plan.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"

namespace et::replay {
namespace {

bool HoldsDeviceMemory(ReplayOpKind kind) {
  return kind == ReplayOpKind::kGemm || kind == ReplayOpKind::kKernel ||
         IsCommunication(kind);
}

}  // namespace

StoragePlan StoragePlan::Build(const NodeModel& graph, const ReplayPlan& plan) {
  StoragePlan sp;
  absl::flat_hash_map<uint64_t, uint32_t> dense;
  std::vector<size_t> first_use, last_use;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    if (HoldsDeviceMemory(op.kind)) {
      for (int side = 0; side < 2; ++side) {
        for (const IoTensor& t : graph.recorded_tensors(op.node, side == 1)) {
          if (t.elem_bytes == 0 || t.num_elems == 0) continue;
          auto [it, inserted] = dense.emplace(
              t.storage_id, static_cast<uint32_t>(sp.storage_bytes_.size()));
          if (inserted) {
            sp.storage_bytes_.push_back(0);
            first_use.push_back(i);
            last_use.push_back(i);
          }
          const uint32_t s = it->second;
          sp.storage_bytes_[s] =
              std::max(sp.storage_bytes_[s], t.extent_bytes());
          last_use[s] = i;
          sp.uses_.targets.push_back({s, t.offset_elems * t.elem_bytes,
                                      t.num_elems * t.elem_bytes, side == 1});
        }
      }
    }
    sp.uses_.offsets.push_back(static_cast<uint32_t>(sp.uses_.targets.size()));
  }
  // Bucket first and last uses by op (counting sort: storages are dense).
  std::vector<std::vector<uint32_t>> alloc_at(plan.ops.size()),
      free_at(plan.ops.size());
  for (uint32_t s = 0; s < sp.storage_bytes_.size(); ++s) {
    alloc_at[first_use[s]].push_back(s);
    free_at[last_use[s]].push_back(s);
  }
  uint64_t live = 0;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    for (uint32_t s : alloc_at[i]) {
      sp.alloc_.targets.push_back(s);
      live += sp.storage_bytes_[s];
    }
    sp.alloc_.offsets.push_back(
        static_cast<uint32_t>(sp.alloc_.targets.size()));
    if (live > sp.peak_bytes_) {
      sp.peak_bytes_ = live;
      sp.peak_op_ = i;
    }
    for (uint32_t s : free_at[i]) {
      sp.free_.targets.push_back(s);
      live -= sp.storage_bytes_[s];
    }
    sp.free_.offsets.push_back(static_cast<uint32_t>(sp.free_.targets.size()));
  }
  return sp;
}

absl::Status StoragePlan::CheckCap(const ReplayPlan& plan,
                                   uint64_t cap_bytes) const {
  if (peak_bytes_ <= cap_bytes) return absl::OkStatus();
  const ReplayOp& op = plan.ops[peak_op_];
  return absl::ResourceExhaustedError(
      absl::StrFormat("node %d (%s): the trace needs %.3f GiB of device memory "
                      "live at this op, more than "
                      "the cap of %.3f GiB (--memory-cap-gib)",
                      op.node_id, plan.name(op), peak_bytes_ / 1073741824.0,
                      cap_bytes / 1073741824.0));
}

}  // namespace et::replay
