// The simulated run as a track view for the HTML report: a track per thread,
// stream and communication channel of each simulated rank, the run's time cut
// into kTimelineBins equal bins, each bin drawn as the op that holds most of
// it (a run of bins with the same op is one mark, its tooltip the op, the
// ops it stands for and their busy time). Sampled so that a trace of any size
// makes a page of bounded size (at most kTimelineBins marks per track); the
// full run is in the Perfetto trace --timeline writes. From the finished
// timeline; nothing is re-simulated.
#ifndef SIMULATOR_REPORT_SAMPLED_TIMELINE_H_
#define SIMULATOR_REPORT_SAMPLED_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/engine/engine.h"
#include "simulator/engine/rank_program.h"

namespace et::sim {

inline constexpr int64_t kTimelineBins = 1200;
inline constexpr size_t kTimelineMaxTracks = 64;

// The HTML of the track view (names beside a zoomable SVG, a time axis in
// ms and a legend) over [0, span_ns).
std::string SampledTimelineHtml(const std::vector<RankClass>& classes,
                                const SimResult& result, int64_t span_ns);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_SAMPLED_TIMELINE_H_
