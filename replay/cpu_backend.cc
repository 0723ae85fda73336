// Host-timer + MPI replay; see cpu_backend.h.
#include "replay/cpu_backend.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "proto/comm_type.h"
#include "proto/status_macros.h"
#include "replay/mpi_collective.h"

namespace et::replay {

CpuBackend::CpuBackend(MpiWorld* world, HostTimer timer,
                       uint64_t memory_cap_bytes)
    : world_(world), timer_(timer), memory_cap_bytes_(memory_cap_bytes) {}

std::string CpuBackend::Describe() const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string mpi(version, std::min(len, 40));
  mpi = mpi.substr(0, mpi.find(','));
  return absl::StrFormat(
      "cpu: host timers (sleep overshoot %d ns) + %s, %d ranks",
      timer_.sleep_overshoot_ns(), mpi, world_->size());
}

int CpuBackend::GroupSize(int group) const {
  MPI_Comm comm = world_->comm(group);
  if (comm == MPI_COMM_NULL) return 1;
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

absl::Status CpuBackend::Prepare(const ReplayPlan& plan,
                                 const StoragePlan& /*storage*/) {
  plan_ = &plan;
  int64_t send = 0, recv = 0;
  for (const ReplayOp& op : plan.ops) {
    if (op.kind != OpKind::kCollective && op.kind != OpKind::kSend &&
        op.kind != OpKind::kRecv) {
      continue;
    }
    const CommBufferBytes b = BuffersFor(op.comm, GroupSize(op.comm.group));
    send = std::max(send, b.send);
    recv = std::max(recv, b.recv);
  }
  if (static_cast<uint64_t>(send + recv) > memory_cap_bytes_) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "communication buffers need %d bytes, more than the cap of %d bytes "
        "(--memory-cap-gib)",
        send + recv, memory_cap_bytes_));
  }
  // Sends of several ranks' worth (gather roots, all-to-all) fit in the same
  // buffers.
  send_buffer_.assign(std::max<int64_t>(send, recv), 0);
  recv_buffer_.assign(std::max<int64_t>(send, recv), 0);
  timing_.ops.assign(plan.ops.size(), OpTiming{});
  return absl::OkStatus();
}

absl::Status CpuBackend::BeginIteration() {
  std::fill(timing_.ops.begin(), timing_.ops.end(), OpTiming{});
  timing_.comm_calls = 0;
  iteration_start_ns_ = NowNs();
  return absl::OkStatus();
}

absl::Status CpuBackend::RunComm(const ReplayOp& op) {
  const CommSpec& c = op.comm;
  MPI_Comm comm = world_->comm(c.group);
  if (comm == MPI_COMM_NULL) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "node %d (%s): this rank is not in the op's process group '%s'",
        op.node_id, plan_->name(op), plan_->groups[c.group].name));
  }
  const int count = static_cast<int>(c.bytes);
  switch (op.kind) {
    case OpKind::kSend: {
      pending_sends_.emplace_back();
      return MpiStatus(MPI_Isend(send_buffer_.data(), count, MPI_BYTE, c.peer,
                                 c.tag, MPI_COMM_WORLD, &pending_sends_.back()),
                       "MPI_Isend");
    }
    case OpKind::kRecv:
      return MpiStatus(MPI_Recv(recv_buffer_.data(), count, MPI_BYTE, c.peer,
                                c.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                       "MPI_Recv");
    default: {
      const int root = world_->GroupRankOf(c.group, std::max(c.peer, 0));
      return RunMpiCollective(c, comm, std::max(root, 0), send_buffer_.data(),
                              recv_buffer_.data());
    }
  }
}

absl::Status CpuBackend::Issue(size_t i) {
  const ReplayOp& op = plan_->ops[i];
  const int64_t start = NowNs();
  switch (op.kind) {
    case OpKind::kNone:
      break;
    case OpKind::kHostCompute:
    case OpKind::kKernel:
    case OpKind::kGemm:
      timer_.WaitUntil(start, op.recorded_ns);
      break;
    case OpKind::kCollective:
    case OpKind::kSend:
    case OpKind::kRecv: {
      absl::Status s = RunComm(op);
      if (s.ok()) ++timing_.comm_calls;
      if (!s.ok()) {
        return absl::Status(s.code(),
                            absl::StrFormat("node %d (%s): %s", op.node_id,
                                            plan_->name(op), s.message()));
      }
      break;
    }
  }
  timing_.ops[i] = {start - iteration_start_ns_, NowNs() - start};
  return absl::OkStatus();
}

absl::Status CpuBackend::EndIteration(IterationTiming* timing) {
  if (!pending_sends_.empty()) {
    RETURN_IF_ERROR(
        MpiStatus(MPI_Waitall(static_cast<int>(pending_sends_.size()),
                              pending_sends_.data(), MPI_STATUSES_IGNORE),
                  "MPI_Waitall"));
    pending_sends_.clear();
  }
  timing_.total_ns = NowNs() - iteration_start_ns_;
  *timing = timing_;
  return absl::OkStatus();
}

}  // namespace et::replay
