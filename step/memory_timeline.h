// The bytes live on each device through a recorded trace, from its storage
// lives (step/storage_lives.h): the peak, the node it happens at and what it
// is made of, the bytes held before the first node, and optionally the whole
// curve (et-viz draws it). Allocator rules (docs/memory-model.md): a CUDA
// device counts each allocation as the caching allocator's block (512-byte
// multiples), the host as c10's CPU allocator requests it (exact bytes).
// Pure functions; thread-safe.
#ifndef STEP_MEMORY_TIMELINE_H_
#define STEP_MEMORY_TIMELINE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "model/node_model.h"
#include "step/storage_lives.h"

namespace et {

// Bytes the allocator of `device` charges for a request of `bytes`: CUDA's
// caching allocator rounds to 512-byte blocks (at least one); c10's CPU
// allocator takes the request as is. Zero bytes allocate nothing.
int64_t AllocatedBytes(int32_t device, int64_t bytes);

struct DeviceMemory {
  int32_t device = kHostDevice;
  int64_t baseline_bytes = 0;  // held before the trace's first node
  int64_t peak_bytes = 0;      // allocated, at the peak
  NodeIndex peak_node = 0;     // the node during which it peaks
  MemoryByKind peak_parts{};   // the peak by kind (sums to peak_bytes)
  // Bytes live during each node (by NodeIndex) when asked for; 0 between.
  std::vector<int64_t> curve;
};

struct MemoryTimelineResult {
  std::vector<DeviceMemory> devices;  // host first, then GPUs by index
  // The device a rank's answer is about: its busiest GPU, else the host.
  const DeviceMemory* main() const;
};

// Sums `lives` over `nodes` positions (the model's size). A life counts from
// its `first` node through its `last` (persistent ones from before the first
// node to after the last). `curve` keeps the per-node bytes.
MemoryTimelineResult BuildMemoryTimeline(const std::vector<StorageLife>& lives,
                                         size_t nodes, bool curve = false);

// The bytes live on `device` during each of `nodes` positions, by kind
// (MemoryKind): the curve BuildMemoryTimeline keeps, split as its peak's
// parts are (each position's kinds sum to that device's curve there, so the
// largest sum is its peak_bytes).
std::vector<MemoryByKind> MemoryCurveByKind(
    const std::vector<StorageLife>& lives, size_t nodes, int32_t device);

// The memory truth the recorder stored (examples/record_trace.py:
// `unprofiled_peak_bytes`, `unprofiled_start_bytes`), when there is one.
struct RecordedMemory {
  int64_t peak_bytes = 0;
  int64_t start_bytes = -1;  // -1: not recorded
};
std::optional<RecordedMemory> RecordedMemoryOf(const NodeModel& model);

}  // namespace et

#endif  // STEP_MEMORY_TIMELINE_H_
