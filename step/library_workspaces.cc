// cuBLAS workspaces from the trace's GEMM launches (docs/memory-model.md,
// "Memory outside the tensors").
#include "step/library_workspaces.h"

#include <optional>
#include <tuple>

#include "absl/container/btree_set.h"
#include "absl/strings/match.h"

namespace et {
namespace {

// PyTorch's aten/src/ATen/cuda/CublasHandlePool.cpp, parseChosenWorkspaceSize()
// with CUBLAS_WORKSPACE_CONFIG unset: ":4096:8" (8 chunks of 4096 KiB) on
// sm_90, ":4096:2:16:8" elsewhere. cuBLASLt shares it (the unified workspace,
// TORCH_CUBLASLT_UNIFIED_WORKSPACE unset).
constexpr int64_t kKiB = 1024;
constexpr int64_t kSm90WorkspaceBytes = 4096 * kKiB * 8;
constexpr int64_t kDefaultWorkspaceBytes = 4096 * kKiB * 2 + 16 * kKiB * 8;

// A trace converted before the capability was stamped: the Hopper parts are
// sm_90 (NVIDIA's CUDA GPUs compute capability table).
int64_t CapabilityOf(const TraceInfo& info) {
  if (info.device_compute_capability > 0) return info.device_compute_capability;
  for (const char* hopper : {"H100", "H200", "H800"})
    if (absl::StrContains(info.device_name, hopper)) return 90;
  return 0;
}

// The host op that launched a device op: its first host dependency, control
// before data (as the step model links them).
std::optional<NodeIndex> Launcher(const NodeModel& m, NodeIndex i) {
  for (NodeIndex d : m.ctrl_deps(i))
    if (m.on_host(d)) return d;
  for (NodeIndex d : m.data_deps(i))
    if (m.on_host(d)) return d;
  return std::nullopt;
}

}  // namespace

int64_t CublasWorkspaceBytes(int64_t compute_capability) {
  return compute_capability == 90 ? kSm90WorkspaceBytes
                                  : kDefaultWorkspaceBytes;
}

std::vector<StorageLife> CublasWorkspaceLives(const NodeModel& model) {
  // (device, launching thread, stream), in order: deterministic lives.
  absl::btree_set<std::tuple<int32_t, int64_t, int64_t>> handles;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    if (model.kind(i) != NodeKind::kGemm || model.on_host(i) ||
        model.device(i) < 0)
      continue;
    std::optional<NodeIndex> launcher = Launcher(model, i);
    const int64_t thread = launcher ? model.queue(*launcher).number : -1;
    handles.insert({model.device(i), thread, model.queue(i).number});
  }
  const int64_t bytes = CublasWorkspaceBytes(CapabilityOf(model.info()));
  std::vector<StorageLife> lives;
  for (const auto& [device, thread, stream] : handles) {
    StorageLife life;
    life.device = device;
    life.bytes = bytes;
    life.persistent = true;
    life.kind = MemoryKind::kWorkspace;
    lives.push_back(life);
  }
  return lives;
}

}  // namespace et
