// The GPU front end's spacing between consecutive ops of one stream, measured
// from a Kineto trace: even when a kernel is queued long before its stream
// frees, it starts a little after the previous op ends (1.1-1.7 us on the H100
// traces). Summing kernel durations back to back misses that time on every
// GPU-bound step, so the converter records it for the simulator.
#ifndef CONVERTER_KINETO_GPU_QUEUED_GAP_H_
#define CONVERTER_KINETO_GPU_QUEUED_GAP_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "converter/kineto/link_types.h"

namespace et::convert {

struct QueuedGap {
  int64_t median_ns = 0;
  int64_t pairs = 0;  // consecutive same-stream pairs it is the median of
};

// Fewer queued pairs than this say nothing reliable about the front end.
inline constexpr int64_t kMinQueuedPairs = 20;

// Median start-to-previous-end gap over consecutive ops of a stream whose
// second op was launched before the first one started (so it waited only for
// the stream); nullopt below kMinQueuedPairs. Negative gaps (overlapping
// records) are not gaps and are left out.
std::optional<QueuedGap> MeasureQueuedGap(
    const std::vector<kineto::GpuOp>& gpu_ops);

}  // namespace et::convert

#endif  // CONVERTER_KINETO_GPU_QUEUED_GAP_H_
