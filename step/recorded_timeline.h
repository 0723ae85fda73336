// Adds what a trace recorded to a Chrome / Perfetto trace as its own process,
// so that et-sim's prediction and et-replay's replay can be read against the
// recorded run in one view: one track per recorded host thread and GPU stream,
// times shifted so the first recorded step starts at 0 (the start of the
// simulated or replayed timeline).
#ifndef STEP_RECORDED_TIMELINE_H_
#define STEP_RECORDED_TIMELINE_H_

#include <cstdint>

#include "model/node_model.h"
#include "step/chrome_trace.h"
#include "step/step_model.h"

namespace et {

// The pid of rank `rank`'s recorded process, beside pid `rank` (predicted).
inline int64_t RecordedPid(int64_t rank) { return 1000000 + rank; }

// Adds every node with a recorded start as "rank R (recorded)"; returns the
// number of events added (0 when nothing was recorded).
int64_t AddRecordedTimeline(const NodeModel& graph, const StepModel& steps,
                            int64_t rank, ChromeTrace* trace);

}  // namespace et

#endif  // STEP_RECORDED_TIMELINE_H_
