// Replays a plan on the host: compute ops (host ops, kernels, GEMMs) hold a
// thread for their recorded duration through a calibrated HostTimer, and
// communication runs as real MPI calls of the recorded kind, size and type
// between the ranks.
//
// Each recorded queue (CUDA stream, host thread) is a worker thread that runs
// its ops in issue order once their cross-queue waits are met, so the overlap
// the recording had between streams and threads is kept, as on the GPU; a
// kernel starts as far into its launching host op as it did when recorded.
// Every MPI call is made by one communication worker, in issue order on every
// rank (collectives must be called in the same order on all members); an op
// that follows a communication op on its recorded queue waits for it. Sends are
// posted non-blocking and completed at the end of the iteration, so that two
// ranks that both send first do not deadlock.
#ifndef REPLAY_CPU_BACKEND_H_
#define REPLAY_CPU_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "replay/device_backend.h"
#include "replay/host_timer.h"
#include "replay/mpi_world.h"

namespace et::replay {

class CpuBackend : public DeviceBackend {
 public:
  // `world` outlives the backend. Communication buffers above
  // `memory_cap_bytes` fail.
  CpuBackend(MpiWorld* world, HostTimer timer, uint64_t memory_cap_bytes);
  ~CpuBackend() override;

  std::string Describe() const override;
  absl::Status Prepare(const ReplayPlan& plan,
                       const StoragePlan& storage) override;
  // Starts the workers; they run each op once it is issued and its waits are
  // met.
  // The timeline clock times every op for free: `mode` changes nothing.
  absl::Status BeginIteration(IterationTimingMode mode) override;
  absl::Status Issue(size_t i) override;
  // Joins the workers.
  absl::Status EndIteration(IterationTiming* timing) override;

 private:
  struct WaitFor {
    const CpuBackend* backend;
    uint32_t op;
  };
  static bool ReadyOrStopped(const WaitFor* w);
  void RunWorker(const std::vector<uint32_t>& ops);
  // True when op i may start: issued, its waits and its queue predecessor done.
  bool Ready(uint32_t i) const;
  // When op i starts on the replay's clock: when its queue predecessor and
  // its waits ended (or started + lag, ReplayPlan::wait_lags_ns) on that
  // clock, plus its host gap. Not when its worker woke up: a thread's wake-up
  // latency (tens of us on a VM) would otherwise add up op after op.
  int64_t TimelineStartNs(uint32_t i, int64_t prev_end_ns) const;
  // Returns once op i is ready (true) or the iteration stopped (false).
  bool AwaitReady(uint32_t i);
  absl::Status RunOp(uint32_t i, int64_t start, int64_t* end);
  absl::Status RunComm(const ReplayOp& op);

  MpiWorld* world_;
  HostTimer timer_;
  uint64_t memory_cap_bytes_;
  const ReplayPlan* plan_ = nullptr;
  std::vector<std::vector<uint32_t>> worker_ops_;  // worker 0: communication
  std::vector<int64_t> queue_predecessor_;  // by op: previous op on its queue
  std::vector<char> send_buffer_, recv_buffer_;  // communication worker only
  std::vector<MPI_Request> pending_sends_;       // communication worker only
  std::vector<std::thread> workers_;
  int64_t iteration_start_ns_ = 0;
  std::vector<OpTiming> op_timing_;  // each entry written by its op's worker

  mutable absl::Mutex mu_;
  // Progress is written under mu_ (which wakes blocked workers) and read
  // without it by workers spinning before they block.
  std::atomic<size_t> issued_{0};
  std::unique_ptr<std::atomic<uint8_t>[]> done_;
  // The replay's clock (NowNs() values): start and end of each op; 0: not yet.
  std::unique_ptr<std::atomic<int64_t>[]> started_ns_;
  std::unique_ptr<std::atomic<int64_t>[]> ended_ns_;
  std::atomic<bool> stopped_{false};         // error_ is set
  absl::Status error_ ABSL_GUARDED_BY(mu_);  // the first failure
  int64_t comm_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace et::replay

#endif  // REPLAY_CPU_BACKEND_H_
