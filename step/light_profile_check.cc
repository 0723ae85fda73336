// The light profile's usability on a GPU trace; see light_profile_check.h.
#include "step/light_profile_check.h"

#include <cstdint>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace et {
namespace {

bool IsKernel(const NodeModel& graph, NodeIndex i) {
  return !graph.on_host(i) && (graph.kind(i) == NodeKind::kKernel ||
                               graph.kind(i) == NodeKind::kGemm);
}

// Whether a host range around kernel i's launch is the kernel's own record:
// one that bears the kernel's name, or an Inductor Triton kernel's
// (`triton_poi_fused_add_0`; older Tritons name the kernel `triton__0d1d2de`
// apart from its record); the host ops it depends on and their enclosing
// ranges, a few levels up.
bool RecordedUnderItsOwnName(const NodeModel& graph, NodeIndex i) {
  constexpr int kLevels = 4;
  for (const auto& deps : {graph.ctrl_deps(i), graph.data_deps(i)}) {
    for (NodeIndex d : deps) {
      if (!graph.on_host(d)) continue;
      std::optional<NodeIndex> at = d;
      for (int level = 0; at && level < kLevels; ++level) {
        if (graph.name(*at) == graph.name(i) ||
            absl::StartsWith(graph.name(*at), "triton_")) {
          return true;
        }
        const uint64_t parent = graph.parent_id(*at);
        at = parent == 0 ? std::nullopt : graph.Find(parent);
      }
    }
  }
  return false;
}

}  // namespace

LightProfileVerdict CheckLightProfile(const NodeModel& graph,
                                      const HostTimeModel& model) {
  LightProfileVerdict v;
  for (NodeIndex i = 0; i < graph.size(); ++i) {
    if (!IsKernel(graph, i)) continue;
    ++v.kernels;
    v.kernels_in_own_record += RecordedUnderItsOwnName(graph, i);
  }
  if (model.light_step_ns > 0 && v.kernels > 0 &&
      v.kernels_in_own_record >= kPerKernelRecordShare * v.kernels) {
    v.usable = false;
    v.why = absl::StrFormat(
        "%d of the trace's %d GPU kernels are launched inside a host range of "
        "their own (torch.compile's Inductor wrapper under a profiler records "
        "one per kernel), so the light profile times those records, not the "
        "program",
        v.kernels_in_own_record, v.kernels);
  }
  return v;
}

}  // namespace et
