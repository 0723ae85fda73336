// MPI start-up, error agreement and process-group communicators; see
// mpi_world.h.
#include "replay/mpi_world.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace et::replay {

absl::Status MpiStatus(int code, const char* call) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return absl::InternalError(
      absl::StrFormat("%s failed: %s", call, std::string(text, len)));
}

absl::StatusOr<std::unique_ptr<MpiWorld>> MpiWorld::Init(int* argc,
                                                         char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  // The CPU backend calls MPI from its communication worker, one thread at a
  // time: MPI_THREAD_SERIALIZED.
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    RETURN_IF_ERROR(
        MpiStatus(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided),
                  "MPI_Init_thread"));
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    return absl::FailedPreconditionError(
        "this MPI library does not support MPI_THREAD_SERIALIZED");
  }
  // Errors come back as codes (turned into Status), not as an abort of the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto world = std::unique_ptr<MpiWorld>(new MpiWorld(rank, size));
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &world->local_rank_);
    MPI_Comm_free(&node);
  }
  return world;
}

MpiWorld::~MpiWorld() {
  for (MPI_Comm& c : group_comms_) {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiWorld::Barrier() const { MPI_Barrier(MPI_COMM_WORLD); }

std::vector<std::vector<double>> MpiWorld::AllGather(
    const std::vector<double>& local) const {
  int count = static_cast<int>(local.size());
  std::vector<int> counts(size_), offsets(size_, 0);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < size_; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<double> all(offsets.back() + counts.back());
  MPI_Allgatherv(local.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                 offsets.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  std::vector<std::vector<double>> by_rank(size_);
  for (int r = 0; r < size_; ++r) {
    by_rank[r].assign(all.begin() + offsets[r],
                      all.begin() + offsets[r] + counts[r]);
  }
  return by_rank;
}

absl::Status MpiWorld::Agree(const absl::Status& local) const {
  int mine = local.ok() ? INT_MAX : rank_;
  int first = INT_MAX;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == INT_MAX) return absl::OkStatus();
  std::string message(local.message());
  int len = static_cast<int>(message.size());
  MPI_Bcast(&len, 1, MPI_INT, first, MPI_COMM_WORLD);
  message.resize(len);
  MPI_Bcast(message.data(), len, MPI_CHAR, first, MPI_COMM_WORLD);
  int code = static_cast<int>(local.code());
  MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
  if (size_ == 1) return local;  // one rank: the message needs no rank
  return absl::Status(static_cast<absl::StatusCode>(code),
                      absl::StrCat("rank ", first, ": ", message));
}

absl::Status MpiWorld::FormGroups(const std::vector<ProcessGroup>& groups) {
  // Every rank must create the same communicators in the same order.
  int count = static_cast<int>(groups.size());
  int low = 0, high = 0;
  MPI_Allreduce(&count, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&count, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (low != high) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the ranks' traces list different numbers of process groups (%d to %d)",
        low, high));
  }
  absl::Status local;
  for (const ProcessGroup& g : groups) {
    for (int64_t r : g.ranks) {
      if (r < 0 || r >= size_) {
        local = absl::FailedPreconditionError(
            absl::StrFormat("process group '%s' (%s) needs rank %d but the "
                            "launch has %d ranks (mpirun -np)",
                            g.name, g.desc, r, size_));
      }
    }
    if (g.ranks.empty() && g.size > size_) {
      local = absl::FailedPreconditionError(
          absl::StrFormat("process group '%s' (%s) has %d members but the "
                          "launch has %d ranks (mpirun -np)",
                          g.name, g.desc, g.size, size_));
    }
  }
  RETURN_IF_ERROR(Agree(local));
  for (MPI_Comm& c : group_comms_) {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
  group_comms_.clear();
  group_ranks_.clear();
  // The i-th split forms the i-th group of every rank's table. Tables in
  // creation order line up, but a rank may list only its own groups (the
  // recorder's `## process_group:init ##` of a tp x dp run: rank 0 its tp
  // block {0,1}, rank 2 its block {2,3}, in the same position): each group's
  // lowest rank is its color, so sibling groups become separate
  // communicators. Each communicator is then checked against its group.
  for (const ProcessGroup& g : groups) {
    std::vector<int> ranks(g.ranks.begin(), g.ranks.end());
    std::sort(ranks.begin(), ranks.end());
    const bool member =
        ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), rank_);
    const int color = !member ? MPI_UNDEFINED : ranks.empty() ? 0 : ranks[0];
    MPI_Comm comm = MPI_COMM_NULL;
    RETURN_IF_ERROR(MpiStatus(
        MPI_Comm_split(MPI_COMM_WORLD, color, rank_, &comm), "MPI_Comm_split"));
    if (comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int formed = 0;
    if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &formed);
    if (comm != MPI_COMM_NULL && !ranks.empty() &&
        formed != static_cast<int>(ranks.size()) && local.ok()) {
      local = absl::FailedPreconditionError(absl::StrFormat(
          "process group '%s' (%s) lists %d ranks but %d ranks joined it: the "
          "ranks' traces list their process groups in different orders",
          g.name, g.desc, ranks.size(), formed));
    }
    group_comms_.push_back(comm);
    group_ranks_.push_back(std::move(ranks));
  }
  return Agree(local);
}

int MpiWorld::GroupSize(int g) const {
  MPI_Comm c = comm(g);
  int n = 1;
  if (c != MPI_COMM_NULL) MPI_Comm_size(c, &n);
  return n;
}

int MpiWorld::GroupRankOf(int g, int global_rank) const {
  if (g < 0 || group_ranks_[g].empty()) return global_rank;
  const auto& ranks = group_ranks_[g];
  auto it = std::lower_bound(ranks.begin(), ranks.end(), global_rank);
  if (it == ranks.end() || *it != global_rank) return -1;
  return static_cast<int>(it - ranks.begin());
}

}  // namespace et::replay
