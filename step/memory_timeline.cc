// The memory timeline: storage lives summed per device (docs/memory-model.md).
#include "step/memory_timeline.h"

#include <algorithm>
#include <map>

#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et {
namespace {

// c10/cuda/CUDACachingAllocator.cpp: kMinBlockSize = 512, and round_size()
// rounds every request up to a multiple of it; the allocated-bytes statistic
// (torch.cuda.max_memory_allocated) counts these block sizes.
constexpr int64_t kCudaBlockBytes = 512;

}  // namespace

int64_t AllocatedBytes(int32_t device, int64_t bytes) {
  if (bytes <= 0) return 0;
  if (device < 0) return bytes;  // c10's alloc_cpu: posix_memalign(nbytes)
  return (bytes + kCudaBlockBytes - 1) / kCudaBlockBytes * kCudaBlockBytes;
}

const DeviceMemory* MemoryTimelineResult::main() const {
  const DeviceMemory* best = nullptr;
  for (const DeviceMemory& d : devices) {
    if (d.device < 0) continue;
    if (best == nullptr || d.peak_bytes > best->peak_bytes) best = &d;
  }
  if (best != nullptr) return best;
  return devices.empty() ? nullptr : &devices.front();
}

MemoryTimelineResult BuildMemoryTimeline(const std::vector<StorageLife>& lives,
                                         size_t nodes, bool curve) {
  // Per device: the persistent bytes, and the change of live bytes at each
  // node (+ where a life starts, - after it ends).
  std::map<int32_t, std::vector<int64_t>> deltas;
  std::map<int32_t, int64_t> baseline;
  for (const StorageLife& life : lives) {
    const int64_t b = AllocatedBytes(life.device, life.bytes);
    if (b == 0) continue;
    std::vector<int64_t>& d = deltas[life.device];
    if (d.empty()) d.assign(nodes + 1, 0);
    if (life.persistent) {
      baseline[life.device] += b;
      continue;
    }
    d[life.first] += b;
    d[life.last + 1] -= b;
  }
  MemoryTimelineResult result;
  for (auto& [device, d] : deltas) {
    DeviceMemory mem;
    mem.device = device;
    mem.baseline_bytes = baseline[device];
    int64_t live = mem.baseline_bytes;
    mem.peak_bytes = live;
    bool rose = false;  // above the baseline somewhere
    if (curve) mem.curve.assign(nodes, 0);
    for (size_t i = 0; i < nodes; ++i) {
      live += d[i];
      if (curve) mem.curve[i] = live;
      if (live > mem.peak_bytes) {
        rose = true;
        mem.peak_bytes = live;
        mem.peak_node = static_cast<NodeIndex>(i);
      }
    }
    for (const StorageLife& life : lives) {
      if (life.device != device) continue;
      if (life.persistent ||
          (rose && life.first <= mem.peak_node && life.last >= mem.peak_node)) {
        mem.peak_parts[static_cast<int>(life.kind)] +=
            AllocatedBytes(device, life.bytes);
      }
    }
    result.devices.push_back(std::move(mem));
  }
  return result;
}

std::vector<MemoryByKind> MemoryCurveByKind(
    const std::vector<StorageLife>& lives, size_t nodes, int32_t device) {
  // As BuildMemoryTimeline: persistent bytes everywhere, the others as a
  // change where a life starts and after it ends; per kind.
  std::vector<MemoryByKind> curve(nodes + 1, MemoryByKind{});
  MemoryByKind live{};
  for (const StorageLife& life : lives) {
    const int64_t b = AllocatedBytes(life.device, life.bytes);
    if (life.device != device || b == 0) continue;
    const int k = static_cast<int>(life.kind);
    if (life.persistent) {
      live[k] += b;
      continue;
    }
    curve[life.first][k] += b;
    curve[life.last + 1][k] -= b;
  }
  curve.pop_back();
  for (MemoryByKind& at : curve) {
    for (int k = 0; k < kMemoryKinds; ++k) {
      live[k] += at[k];
      at[k] = live[k];
    }
  }
  return curve;
}

std::optional<RecordedMemory> RecordedMemoryOf(const NodeModel& model) {
  const auto& meta = model.metadata().attr();
  std::optional<int64_t> peak = GetInt(meta, attr::kUnprofiledPeakBytes);
  if (!peak || *peak <= 0) return std::nullopt;
  RecordedMemory r;
  r.peak_bytes = *peak;
  r.start_bytes = GetInt(meta, attr::kUnprofiledStartBytes).value_or(-1);
  return r;
}

}  // namespace et
