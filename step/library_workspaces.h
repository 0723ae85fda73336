// Memory that libraries take from PyTorch's CUDA caching allocator outside any
// tensor of the trace, and keep across steps: cuBLAS's workspace, one per
// (cuBLAS handle, stream). torch.cuda.max_memory_allocated counts it, the
// trace's tensors do not show it. The rule and its source are in
// docs/memory-model.md. Pure functions of the model; thread-safe.
#ifndef STEP_LIBRARY_WORKSPACES_H_
#define STEP_LIBRARY_WORKSPACES_H_

#include <cstdint>
#include <vector>

#include "model/node_model.h"
#include "step/storage_lives.h"

namespace et {

// The bytes PyTorch gives each cuBLAS handle's workspace on a GPU of this
// compute capability (major * 10 + minor; 0 unknown), with
// CUBLAS_WORKSPACE_CONFIG unset.
int64_t CublasWorkspaceBytes(int64_t compute_capability);

// One persistent life (kind kWorkspace) per (GPU, host thread, stream) that
// launched a cuBLAS GEMM: PyTorch keeps a cuBLAS handle per thread and a
// workspace per (handle, stream), made at the first GEMM (during warm-up)
// and never freed. A training step launches its forward GEMMs from the
// Python thread and its backward GEMMs from the autograd engine's thread of
// that GPU: two workspaces.
std::vector<StorageLife> CublasWorkspaceLives(const NodeModel& model);

}  // namespace et

#endif  // STEP_LIBRARY_WORKSPACES_H_
