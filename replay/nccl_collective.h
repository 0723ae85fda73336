// NCCL communicators for the recorded process groups, and one recorded
// collective or point-to-point op as the NCCL call of the same kind, type and
// size (sizes as in mpi_collective.h). All-to-all, gather and scatter are
// grouped ncclSend/ncclRecv, the way nccl-tests builds them. Only compiled with
// the CUDA backend. One thread.
#ifndef REPLAY_NCCL_COLLECTIVE_H_
#define REPLAY_NCCL_COLLECTIVE_H_

#include <cuda_runtime.h>
#include <nccl.h>

#include <vector>

#include "absl/status/status.h"
#include "replay/mpi_world.h"
#include "replay/replay_op.h"

namespace et::replay {

class NcclGroups {
 public:
  NcclGroups() = default;
  ~NcclGroups();
  NcclGroups(const NcclGroups&) = delete;
  NcclGroups& operator=(const NcclGroups&) = delete;

  // Collective over every rank: one communicator for the world and one per
  // group this rank belongs to; group rank 0 makes the unique id and MPI
  // broadcasts it.
  absl::Status Init(const MpiWorld& world, int group_count);

  // Aborts every communicator without waiting for peers (after a failure,
  // when they may never post their half); the destructor then has nothing to
  // do.
  void Abort();

  // The communicator of group `g` (-1: world); nullptr when this rank is not a
  // member.
  ncclComm_t comm(int g) const { return g < 0 ? world_ : groups_[g]; }

 private:
  ncclComm_t world_ = nullptr;
  std::vector<ncclComm_t> groups_;
};

// Enqueues `spec` on `stream`. `root` is the root's rank in `comm`;
// `send`/`recv` hold BuffersFor() bytes (mpi_collective.h). Send/recv peers are
// world ranks on `comm`.
absl::Status RunNcclOp(ReplayOpKind kind, const CommSpec& spec, ncclComm_t comm,
                       int root, const void* send, void* recv,
                       cudaStream_t stream);

}  // namespace et::replay

#endif  // REPLAY_NCCL_COLLECTIVE_H_
