// Median gap between queued GPU ops of one stream (gpu_queued_gap.h).
#include "converter/kineto/gpu_queued_gap.h"

#include <algorithm>
#include <map>
#include <utility>

namespace et::convert {

std::optional<QueuedGap> MeasureQueuedGap(
    const std::vector<kineto::GpuOp>& gpu_ops) {
  std::map<std::pair<int64_t, int64_t>, std::vector<const kineto::GpuOp*>>
      by_stream;
  for (const kineto::GpuOp& op : gpu_ops)
    by_stream[{op.device, op.stream}].push_back(&op);
  std::vector<int64_t> gaps;
  for (auto& [stream, ops] : by_stream) {
    std::sort(ops.begin(), ops.end(),
              [](const kineto::GpuOp* a, const kineto::GpuOp* b) {
                return a->start_ns < b->start_ns;
              });
    for (size_t k = 1; k < ops.size(); ++k) {
      const kineto::GpuOp& prev = *ops[k - 1];
      const kineto::GpuOp& next = *ops[k];
      // An NCCL kernel's start also waits for its peers: not the front end.
      if (prev.is_nccl || next.is_nccl) continue;
      if (next.launch_ns < 0 || next.launch_ns >= prev.start_ns) continue;
      const int64_t gap = next.start_ns - (prev.start_ns + prev.dur_ns);
      if (gap >= 0) gaps.push_back(gap);
    }
  }
  if (static_cast<int64_t>(gaps.size()) < kMinQueuedPairs) return std::nullopt;
  auto mid = gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2);
  std::nth_element(gaps.begin(), mid, gaps.end());
  return QueuedGap{*mid, static_cast<int64_t>(gaps.size())};
}

}  // namespace et::convert
