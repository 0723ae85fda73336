// One recorded collective or point-to-point op as the MPI call of the same
// kind, element type and size: the CPU backend's communication. Sizes follow
// comm_size = the bytes each rank contributes (its input), the convention of
// Chakra and ASTRA-sim:
//   all-reduce, broadcast, reduce:   count = bytes / elem
//   all-gather, gather:              sends bytes, receives ranks * bytes
//   reduce-scatter, all-to-all, scatter: the input is split in `ranks` equal
//   chunks.
#ifndef REPLAY_MPI_COLLECTIVE_H_
#define REPLAY_MPI_COLLECTIVE_H_

#include <mpi.h>

#include <cstdint>

#include "absl/status/status.h"
#include "replay/replay_op.h"

namespace et::replay {

// Bytes of send and receive buffer an op needs on a communicator of `ranks`
// ranks.
struct CommBufferBytes {
  int64_t send = 0;
  int64_t recv = 0;
};
CommBufferBytes BuffersFor(const CommSpec& spec, int ranks);

// Runs collective `spec` on `comm`; `root` is the root's rank in `comm`. The
// buffers hold at least BuffersFor() bytes.
absl::Status RunMpiCollective(const CommSpec& spec, MPI_Comm comm, int root,
                              char* send, char* recv);

}  // namespace et::replay

#endif  // REPLAY_MPI_COLLECTIVE_H_
