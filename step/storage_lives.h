// The allocations of a recorded trace: every tensor storage its ops touch,
// when each is allocated and last used, how many bytes it holds and what it
// is for (parameters, gradients, optimizer state, activations kept for the
// backward pass, temporaries, communication buffers). The memory timeline
// (step/memory_timeline.h) sums them; scaleout/memory_at_layout.h reshapes
// them for another layout. The rules and their sources are in
// docs/memory-model.md. Pure functions of the model; thread-safe.
#ifndef STEP_STORAGE_LIVES_H_
#define STEP_STORAGE_LIVES_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/node_model.h"

namespace et {

enum class MemoryKind : uint8_t {
  kParameter,       // held across steps, read by forward and optimizer
  kGradient,        // what AccumulateGrad reads or writes
  kOptimizerState,  // held across steps, touched by the optimizer only
  kActivation,      // made by the forward pass, used by the backward pass
  kTemporary,       // anything else made and dropped within a step
  kCommBuffer,      // held across steps, what collectives move (DDP buckets)
  kOther,           // held across steps otherwise (inputs, module buffers)
  kWorkspace,  // held by a library, no tensor of the trace (cuBLAS's workspace:
               // step/library_workspaces.h)
};
inline constexpr int kMemoryKinds = 8;
// "parameters", "gradients", "optimizer_state", "activations", "temporaries",
// "comm_buffers", "other", "workspaces": the JSON keys and report words.
absl::string_view MemoryKindName(MemoryKind kind);

using MemoryByKind = std::array<int64_t, kMemoryKinds>;
inline constexpr NodeIndex kNoNode = ~NodeIndex{0};

// One allocation: a storage from the op that allocates it (or, for storages
// the trace never allocates, its first use) to its last use.
struct StorageLife {
  uint64_t storage_id = 0;
  int32_t device = kHostDevice;  // io_shapes.h: kHostDevice, or the GPU
  int64_t bytes = 0;             // requested: the storage's extent
  NodeIndex first = 0;           // allocated (or first used) by this node
  NodeIndex last = 0;            // last used by this node
  // Held for the whole trace: allocated before it and used in more than one
  // of its steps (or the trace has one step): parameters, optimizer state,
  // inputs. Such a life counts from before the first node to after the last.
  bool persistent = false;
  MemoryKind kind = MemoryKind::kTemporary;
  // The optimizer's first use (kNoNode: none), and the parameter whose update
  // made or used it: the parameter the optimizer touched last before (an
  // index into the lives; -1 none). Optimizers update one parameter at a
  // time, so its state and temporaries follow it; ZeRO-1 keeps a rank's own.
  NodeIndex optimizer_first = kNoNode;
  int32_t owner = -1;
  // `first` before the hidden-activation rule (docs/memory-model.md) dated
  // it earlier: the node that used it first.
  NodeIndex first_use = 0;
  // For a life no op of the trace allocates (made inside an op the converter
  // folded, or before the trace): the op the trace's ids say made it, where
  // tensor ids count with op ids (PyTorch 1.13's ET); kNoNode when unknown
  // (other schemas) or allocated by an op of the trace (then `first`). The
  // memory timeline does not read it (a one-step trace's backward-only life
  // keeps its start at its first use, docs/memory-model.md); a synthesized
  // pipeline stashes an activation with the forward that made it
  // (scaleout/pipeline_plan.h).
  NodeIndex hidden_maker = kNoNode;
};

struct StorageLivesResult {
  std::vector<StorageLife> lives;  // in order of discovery
  int64_t tensors = 0;             // tensor references read
  int64_t other_device = 0;        // references not on a CPU or CUDA device
  int64_t steps = 0;               // distinct steps the trace's nodes carry
};

// Reads every node's recorded tensors (NodeModel built with keep_tensors) in
// id order, the order the ops started. Nodes on a GPU stream are skipped: the
// host op that launched them records the same tensors when it ran. Adds the
// libraries' workspaces the GEMMs imply (step/library_workspaces.h):
// persistent lives without a storage id.
StorageLivesResult FindStorageLives(const NodeModel& model);

}  // namespace et

#endif  // STEP_STORAGE_LIVES_H_
