// et-viz's memory timeline (see memory_track.h).
#include "visualizer/memory_track.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "step/memory_timeline.h"
#include "step/storage_lives.h"

namespace et::viz {
namespace {

std::string Mib(int64_t bytes) {
  return absl::StrFormat("%.2f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

std::vector<MemoryTrack> BuildMemoryTracks(const std::vector<RankTrace>& traces,
                                           int samples) {
  std::vector<MemoryTrack> tracks;
  for (const RankTrace& t : traces) {
    const NodeModel& m = t.model;
    const StorageLivesResult lives = FindStorageLives(m);
    if (lives.lives.empty()) continue;
    const MemoryTimelineResult timeline =
        BuildMemoryTimeline(lives.lives, m.size(), /*curve=*/true);
    const DeviceMemory* d = timeline.main();
    if (d == nullptr) continue;
    MemoryTrack track;
    track.rank = t.rank;
    track.device = d->device < 0 ? "host" : absl::StrCat("cuda:", d->device);
    track.peak_bytes = d->peak_bytes;
    track.baseline_bytes = d->baseline_bytes;
    track.peak_node_id = m.id(d->peak_node);
    track.peak_node_name = std::string(m.name(d->peak_node));
    if (std::optional<RecordedMemory> r = RecordedMemoryOf(m))
      track.recorded_peak_bytes = r->peak_bytes;
    const size_t n = d->curve.size();
    const size_t k = std::max<size_t>(1, std::min<size_t>(samples, n));
    for (size_t s = 0; s < k && n > 0; ++s) {
      const size_t begin = s * n / k,
                   end = std::max(begin + 1, (s + 1) * n / k);
      track.samples.push_back(
          *std::max_element(d->curve.begin() + begin, d->curve.begin() + end));
    }
    tracks.push_back(std::move(track));
  }
  return tracks;
}

std::string FormatMemoryTracks(const std::vector<MemoryTrack>& tracks) {
  if (tracks.empty()) return "";
  // Eight levels between the baseline and the peak, as block characters.
  static const char* const kLevels[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                        "\u2585", "\u2586", "\u2587", "\u2588"};
  std::string out =
      "\nMemory per rank (predicted from the trace's tensors, allocated bytes; "
      "docs/memory-model.md)\n";
  for (const MemoryTrack& t : tracks) {
    absl::StrAppendFormat(&out,
                          "  rank %d %s: peak %s at node %d (%s), %s held "
                          "before the first op",
                          t.rank, t.device, Mib(t.peak_bytes), t.peak_node_id,
                          t.peak_node_name, Mib(t.baseline_bytes));
    if (t.recorded_peak_bytes > 0) {
      absl::StrAppendFormat(
          &out, "; recorded peak %s (%+.1f%%)", Mib(t.recorded_peak_bytes),
          100.0 * static_cast<double>(t.peak_bytes - t.recorded_peak_bytes) /
              static_cast<double>(t.recorded_peak_bytes));
    }
    std::string line;
    const double span = static_cast<double>(
        std::max<int64_t>(1, t.peak_bytes - t.baseline_bytes));
    for (int64_t v : t.samples) {
      const double f = static_cast<double>(v - t.baseline_bytes) / span;
      line += kLevels[std::clamp(static_cast<int>(f * 7.999), 0, 7)];
    }
    absl::StrAppend(&out, "\n    ", line, "  (node order, baseline to peak)\n");
  }
  return out;
}

}  // namespace et::viz
