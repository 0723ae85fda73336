// Replays a plan on the host: compute ops (host ops, kernels, GEMMs) hold the
// thread for their recorded duration through a calibrated HostTimer, and
// communication runs as real MPI calls of the recorded kind, size and type
// between the ranks. Ops run one at a time in the plan's issue order, so
// cross-queue waits are met by construction; overlap that the recording had
// between streams or threads is not reproduced (docs/et-replay.md). Sends are
// posted non-blocking and completed at the end of the iteration, so that two
// ranks that both send first do not deadlock. One thread.
#ifndef REPLAY_CPU_BACKEND_H_
#define REPLAY_CPU_BACKEND_H_

#include <cstdint>
#include <vector>

#include "replay/device_backend.h"
#include "replay/host_timer.h"
#include "replay/mpi_world.h"

namespace et::replay {

class CpuBackend : public DeviceBackend {
 public:
  // `world` outlives the backend. Communication buffers above
  // `memory_cap_bytes` fail.
  CpuBackend(MpiWorld* world, HostTimer timer, uint64_t memory_cap_bytes);

  std::string Describe() const override;
  absl::Status Prepare(const ReplayPlan& plan,
                       const StoragePlan& storage) override;
  absl::Status BeginIteration() override;
  absl::Status Issue(size_t i) override;
  absl::Status EndIteration(IterationTiming* timing) override;

 private:
  absl::Status RunComm(const ReplayOp& op);
  int GroupSize(int group) const;

  MpiWorld* world_;
  HostTimer timer_;
  uint64_t memory_cap_bytes_;
  const ReplayPlan* plan_ = nullptr;
  std::vector<char> send_buffer_, recv_buffer_;
  std::vector<MPI_Request> pending_sends_;
  IterationTiming timing_;
  int64_t iteration_start_ns_ = 0;
};

}  // namespace et::replay

#endif  // REPLAY_CPU_BACKEND_H_
