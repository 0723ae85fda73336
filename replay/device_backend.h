// The hardware interface of a replay (style rule 16): the engine (ReplayRunner)
// walks the plan's issue order and hands each op to a backend, which runs it on
// its queue after the op's cross-queue waits and records its time. CpuBackend
// (host timers + MPI) runs on every machine; CudaBackend (cuBLAS, NCCL, CUDA
// streams and events) where a GPU is. A backend is driven from one thread
// (it may run ops on its own workers).
#ifndef REPLAY_DEVICE_BACKEND_H_
#define REPLAY_DEVICE_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "replay/replay_plan.h"
#include "replay/storage_plan.h"

namespace et::replay {

// When an op ran, relative to the start of its iteration.
struct OpTiming {
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
};

// What an iteration times. kStep: what the step needs (when each step ended on
// each queue); ops without a time read {0, 0}. kEveryOp: every op's start and
// duration.
enum class IterationTimingMode { kStep, kEveryOp };

struct IterationTiming {
  int64_t total_ns = 0;       // first issue to last completion
  int64_t comm_calls = 0;     // MPI / NCCL calls that completed
  std::vector<OpTiming> ops;  // by plan op index
};

// A replay's timed iterations; op times from iterations of their own where
// timing every op would stretch the step (DeviceBackend::OpTimingStretchesRun).
struct ReplayTimings {
  std::vector<IterationTiming> steps;  // the timed iterations, in order
  std::vector<IterationTiming> ops;    // op times; empty: those of `steps`
  const std::vector<IterationTiming>& op_iterations() const {
    return ops.empty() ? steps : ops;
  }
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // One line for the report: "cpu: host timers + Open MPI, 4 ranks", "NVIDIA
  // H100 ...".
  virtual std::string Describe() const = 0;
  // The GPU the replay runs on, as CUDA names it ("NVIDIA H100 80GB HBM3",
  // what Kineto's deviceProperties record); empty on the host, which replays
  // the recorded machine's times.
  virtual std::string DeviceName() const { return ""; }

  // Called once before the first iteration: queues, communicators, buffers.
  // Fails with a clear message when the device is missing or the trace does not
  // fit.
  virtual absl::Status Prepare(const ReplayPlan& plan,
                               const StoragePlan& storage) = 0;

  virtual absl::Status BeginIteration(IterationTimingMode mode) = 0;
  // Runs (or enqueues) op `i` of the plan after its waits.
  virtual absl::Status Issue(size_t i) = 0;
  // Waits for every queue and fills the iteration's timing.
  virtual absl::Status EndIteration(IterationTiming* timing) = 0;

  // Whether timing every op stretches what it times (on a GPU, a timing event
  // on each side of each kernel): the step is then timed in kStep iterations
  // and the ops in one kEveryOp iteration more.
  virtual bool OpTimingStretchesRun() const { return false; }
};

}  // namespace et::replay

#endif  // REPLAY_DEVICE_BACKEND_H_
