// The ranks of a replay: MPI initialisation, agreement on errors, and one MPI
// communicator per recorded process group. Every rank reads its own trace, so
// each check that could fail on some ranks only goes through Agree(), which
// turns one rank's error into the same clear error on every rank instead of a
// hang in the next collective. Works without mpirun too (Open MPI's singleton
// mode: one rank). Not thread-safe: MPI is initialised for one thread at a
// time (MPI_THREAD_SERIALIZED), and the replay makes its MPI calls either
// from its main thread or, while an iteration runs, from the CPU backend's
// one communication worker.
#ifndef REPLAY_MPI_WORLD_H_
#define REPLAY_MPI_WORLD_H_

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/process_group.h"

namespace et::replay {

class MpiWorld {
 public:
  // MPI_Init_thread (serialized); fails if MPI cannot start.
  static absl::StatusOr<std::unique_ptr<MpiWorld>> Init(int* argc,
                                                        char*** argv);
  ~MpiWorld();  // MPI_Finalize
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank among the ranks on this node (picks the GPU: one process per GPU).
  int local_rank() const { return local_rank_; }

  void Barrier() const;

  // Collective: every rank's `local` values, concatenated in rank order; the
  // ranks may contribute different counts.
  std::vector<std::vector<double>> AllGather(
      const std::vector<double>& local) const;

  // Collective: OK on every rank when `local` is OK on every rank; otherwise
  // every rank gets the error of the lowest failing rank, prefixed with "rank
  // N: ".
  absl::Status Agree(const absl::Status& local) const;

  // Collective: forms one communicator per group (members only; others get
  // MPI_COMM_NULL). Fails on every rank when the ranks disagree on the groups
  // or a group names a rank the launch does not have. Group ranks are global; a
  // group with no listed ranks spans every rank.
  absl::Status FormGroups(const std::vector<ProcessGroup>& groups);

  // The communicator of group `g` (-1: every rank); MPI_COMM_NULL if this rank
  // is not a member.
  MPI_Comm comm(int g) const {
    return g < 0 ? MPI_COMM_WORLD : group_comms_[g];
  }
  // This group's rank of global rank `global_rank`, or -1 when it is not a
  // member.
  int GroupRankOf(int g, int global_rank) const;
  // Ranks in group `g`'s communicator (-1: every rank); 1 when this rank is
  // not a member.
  int GroupSize(int g) const;

 private:
  MpiWorld(int rank, int size) : rank_(rank), size_(size) {}

  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  std::vector<MPI_Comm> group_comms_;
  std::vector<std::vector<int>>
      group_ranks_;  // sorted global ranks; empty = all
};

// Turns an MPI return code into a Status naming the call.
absl::Status MpiStatus(int code, const char* call);

}  // namespace et::replay

#endif  // REPLAY_MPI_WORLD_H_
