// Which side bounds a step: the busy time, within the step's window of a
// simulated (or replayed) timeline, of the host's busiest thread (its ops and
// the gaps before them), of the GPU (any stream running a kernel, copy or
// set), and of communication that no compute hides. The side with the largest
// busy time bounds the step: a what-if that speeds up another side barely
// moves it (docs/step-model.md, "What bounds a step"). Plain data and the
// rule; the timeline side is the tool's (simulator/report/step_busy.h).
#ifndef STEP_STEP_BOUND_H_
#define STEP_STEP_BOUND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace et {

enum class BoundSide { kHost, kGpu, kComm };

// "host", "GPU", "communication" (text); "host", "gpu", "comm" (JSON).
const char* BoundSideName(BoundSide side);
const char* BoundSideKey(BoundSide side);

struct StepBound {
  double step_us = 0;          // the step's time on the timeline
  double host_busy_us = 0;     // any host thread busy: its ops + their gaps
  int64_t host_threads = 0;    // threads with host ops in the step
  double gpu_busy_us = 0;      // any GPU stream computing
  double exposed_comm_us = 0;  // communication no compute overlaps
  BoundSide side = BoundSide::kHost;  // the largest of the three
  // A GPU job's trace that records no GPU op (an ET without its Kineto
  // trace, TraceInfo::gpu_job): its GPU time is unknown, not zero.
  bool gpu_ops_unrecorded = false;
};

// Sets `side` from the busy times: the largest; on a tie host, then GPU,
// then communication (the order a user can change most cheaply).
void PickBoundSide(StepBound* bound);

// The steps together: the mean of each time, the side picked again; the most
// host threads of any step.
StepBound MeanBound(const std::vector<StepBound>& steps);

// "host-bound: host (2 threads) busy 36.100 of 38.000 ms (95%), GPU 22.300 ms
// (59%), exposed comm 0.000 ms (0%)"; "no GPU work" in place of the GPU's
// share when no GPU op ran in the step.
std::string FormatStepBound(const StepBound& bound);

// {"side", "step_us", "host_busy_us", "host_threads", "gpu_busy_us",
//  "exposed_comm_us"}.
nlohmann::json StepBoundJson(const StepBound& bound);

}  // namespace et

#endif  // STEP_STEP_BOUND_H_
