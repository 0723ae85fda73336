// "Will it fit?": each simulated rank's predicted memory peak (allocated
// bytes: the memory model of docs/memory-model.md), what it is made of, the
// truth the recorder measured where there is one, and the verdict against
// the device's capacity with what would shrink it most. Plain data, built by
// Simulation; formatted into et-sim's text and JSON reports.
#ifndef SIMULATOR_REPORT_MEMORY_REPORT_H_
#define SIMULATOR_REPORT_MEMORY_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "step/memory_timeline.h"
#include "step/storage_lives.h"

namespace et::sim {

// One rank class's memory.
struct MemoryRow {
  int32_t device = kHostDevice;  // the device it is about (a GPU, else host)
  int64_t peak_bytes = 0;        // allocated, at the peak
  int64_t baseline_bytes = 0;    // held before the trace's first node
  MemoryByKind parts{};          // the peak by kind
  uint64_t peak_node_id = 0;
  std::string peak_node_name;
  int64_t recorded_peak_bytes = -1;  // the recorder's truth; -1 none
  // A layout other than the recorded one: a prediction with no truth.
  bool at_layout = false;
  // The allocated bytes through the trace, in node order, sampled for a
  // chart (the HTML report): at most kMemoryCurvePoints (node position,
  // bytes), each the largest of its stretch of nodes, so the peak is kept.
  std::vector<std::pair<int64_t, int64_t>> curve;
};
inline constexpr size_t kMemoryCurvePoints = 600;

// The largest rank against the device's memory.
struct MemorySummary {
  int64_t peak_bytes = 0;
  int64_t capacity_bytes =
      0;  // 0: unknown (a host trace, no --device-memory-gib)
  std::string capacity_source;  // "H100 preset", "--device-memory-gib"
  bool fits = true;
  std::string advice;  // when it does not fit: what shrinks it most
  // Why a capacity that was known is not checked ("" when none was known):
  // a GPU preset's memory against a host trace's tensors.
  std::string capacity_unchecked;
};

// The row of a class from its timeline (`model` names the peak's node).
MemoryRow MakeMemoryRow(const NodeModel& model,
                        const MemoryTimelineResult& timeline, bool at_layout);

// The verdict for the largest of `rows` against `capacity_bytes`; the advice
// weighs ZeRO's stages at `dp` and the activations.
MemorySummary SummarizeMemory(const std::vector<MemoryRow>& rows,
                              int64_t capacity_bytes,
                              const std::string& capacity_source, int64_t dp);

// A size as the text prints it: GiB above 1 GiB, MiB above 1 MiB, else bytes.
std::string MemorySizeText(int64_t bytes);

// The text section (a few lines) and the JSON pieces.
std::string FormatMemoryText(const std::vector<MemoryRow>& rows,
                             const std::vector<std::string>& labels,
                             const MemorySummary& summary);
nlohmann::json MemoryRowJson(const MemoryRow& row);
nlohmann::json MemorySummaryJson(const MemorySummary& summary);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_MEMORY_REPORT_H_
