// A rank's memory timeline for et-viz --report: the memory model's live bytes
// through the trace (step/memory_timeline.h, docs/memory-model.md), its peak
// and the op at it, and the curve reduced to a fixed number of samples (the
// largest value in each stretch of nodes, so that no peak is lost). Needs the
// traces loaded with their tensors (LoadRankTraces's keep_tensors). Pure
// computation; plain data.
#ifndef VISUALIZER_MEMORY_TRACK_H_
#define VISUALIZER_MEMORY_TRACK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "visualizer/rank_traces.h"

namespace et::viz {

struct MemoryTrack {
  int rank = 0;
  std::string device;  // "host", "cuda:0"
  int64_t peak_bytes = 0;
  int64_t baseline_bytes = 0;
  uint64_t peak_node_id = 0;
  std::string peak_node_name;
  int64_t recorded_peak_bytes = -1;  // the recorder's truth; -1 none
  std::vector<int64_t> samples;      // max live bytes per stretch of nodes
};

// One track per rank that records tensors, `samples` points each.
std::vector<MemoryTrack> BuildMemoryTracks(const std::vector<RankTrace>& traces,
                                           int samples = 60);

// Text: per rank a line with the peak and a sparkline of the samples.
std::string FormatMemoryTracks(const std::vector<MemoryTrack>& tracks);

}  // namespace et::viz

#endif  // VISUALIZER_MEMORY_TRACK_H_
