// Host-timer + MPI replay; see cpu_backend.h.
#include "replay/cpu_backend.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/comm_type.h"
#include "replay/mpi_collective.h"

namespace et::replay {

CpuBackend::CpuBackend(MpiWorld* world, HostTimer timer,
                       uint64_t memory_cap_bytes)
    : world_(world), timer_(timer), memory_cap_bytes_(memory_cap_bytes) {}

CpuBackend::~CpuBackend() {
  // An iteration left unfinished (its issue failed): let the workers go.
  {
    absl::MutexLock lock(&mu_);
    if (error_.ok()) error_ = absl::CancelledError("replay stopped");
    stopped_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

std::string CpuBackend::Describe() const {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string mpi(version, std::min(len, 40));
  mpi = mpi.substr(0, mpi.find(','));
  return absl::StrFormat(
      "cpu: host timers (sleep overshoot %d ns), one thread per recorded "
      "queue + %s, %d ranks",
      timer_.sleep_overshoot_ns(), mpi, world_->size());
}

absl::Status CpuBackend::Prepare(const ReplayPlan& plan,
                                 const StoragePlan& /*storage*/) {
  plan_ = &plan;
  int64_t send = 0, recv = 0;
  worker_ops_.assign(plan.queues.size() + 1, {});
  queue_predecessor_.assign(plan.ops.size(), -1);
  std::vector<int64_t> last_on_queue(plan.queues.size(), -1);
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    queue_predecessor_[i] = last_on_queue[op.queue];
    last_on_queue[op.queue] = static_cast<int64_t>(i);
    const bool comm = IsCommunication(op.kind);
    worker_ops_[comm ? 0 : op.queue + 1].push_back(static_cast<uint32_t>(i));
    if (!comm) continue;
    const CommBufferBytes b =
        BuffersFor(op.comm, world_->GroupSize(op.comm.group));
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
  op_timing_.assign(plan.ops.size(), OpTiming{});
  done_.reset(new std::atomic<uint8_t>[plan.ops.size()]);
  started_ns_.reset(new std::atomic<int64_t>[plan.ops.size()]);
  ended_ns_.reset(new std::atomic<int64_t>[plan.ops.size()]);
  return absl::OkStatus();
}

absl::Status CpuBackend::BeginIteration(IterationTimingMode /*mode*/) {
  std::fill(op_timing_.begin(), op_timing_.end(), OpTiming{});
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < plan_->ops.size(); ++i) {
      done_[i].store(0, std::memory_order_relaxed);
      started_ns_[i].store(0, std::memory_order_relaxed);
      ended_ns_[i].store(0, std::memory_order_relaxed);
    }
    issued_ = 0;
    stopped_ = false;
    comm_calls_ = 0;
    error_ = absl::OkStatus();
  }
  iteration_start_ns_ = NowNs();
  for (const std::vector<uint32_t>& ops : worker_ops_) {
    if (!ops.empty()) workers_.emplace_back([this, &ops] { RunWorker(ops); });
  }
  return absl::OkStatus();
}

absl::Status CpuBackend::Issue(size_t i) {
  absl::MutexLock lock(&mu_);
  issued_ = std::max(issued_.load(), i + 1);
  return absl::OkStatus();
}

bool CpuBackend::Ready(uint32_t i) const {
  if (i >= issued_) return false;
  const auto targets = plan_->waits(i);
  const auto lags = plan_->wait_lags_ns(i);
  for (size_t k = 0; k < targets.size(); ++k) {
    // A lagged wait needs the target's start; NotBeforeNs adds the lag.
    if (lags[k] >= 0 ? started_ns_[targets[k]] == 0 : !done_[targets[k]])
      return false;
  }
  // Within a worker the predecessor ran first; across (a communication op and
  // its queue's neighbours) it is waited for like a cross-queue dependency.
  const int64_t prev = queue_predecessor_[i];
  return prev < 0 || done_[prev];
}

bool CpuBackend::ReadyOrStopped(const WaitFor* w) {
  return w->backend->stopped_ || w->backend->Ready(w->op);
}

bool CpuBackend::AwaitReady(uint32_t i) {
  // Spin a little first: a blocked thread takes tens of microseconds to wake
  // on a virtual machine, more than many recorded kernels last.
  constexpr int64_t kSpinNs = 200000;
  const int64_t spin_until = NowNs() + kSpinNs;
  while (!stopped_ && !Ready(i) && NowNs() < spin_until) {
  }
  if (!stopped_ && !Ready(i)) {
    const WaitFor wait{this, i};
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&CpuBackend::ReadyOrStopped, &wait));
  }
  return !stopped_;
}

int64_t CpuBackend::TimelineStartNs(uint32_t i, int64_t prev_end_ns) const {
  int64_t ready = prev_end_ns;
  const auto targets = plan_->waits(i);
  const auto lags = plan_->wait_lags_ns(i);
  for (size_t k = 0; k < targets.size(); ++k) {
    ready = std::max(ready, lags[k] >= 0 ? started_ns_[targets[k]] + lags[k]
                                         : ended_ns_[targets[k]].load());
  }
  if (const int64_t prev = queue_predecessor_[i]; prev >= 0) {
    // An emulated kernel queued behind another starts the recording's
    // front-end gap after it, as on the GPU.
    const ReplayOpKind kind = plan_->ops[i].kind;
    const int64_t gap =
        kind == ReplayOpKind::kKernel || kind == ReplayOpKind::kGemm
            ? plan_->gpu_queued_gap_ns
            : 0;
    ready = std::max(ready, ended_ns_[prev].load() + gap);
  }
  // A host op keeps its gap from when it could start (step_model.h).
  return ready + plan_->ops[i].gap_before_ns;
}

void CpuBackend::RunWorker(const std::vector<uint32_t>& ops) {
  int64_t prev_end_ns = iteration_start_ns_;
  for (uint32_t i : ops) {
    if (!AwaitReady(i)) return;
    int64_t start = TimelineStartNs(i, prev_end_ns);
    // Communication runs for real, from now at the earliest.
    if (IsCommunication(plan_->ops[i].kind)) start = std::max(start, NowNs());
    const int64_t now = NowNs();
    if (start > now) timer_.WaitUntil(now, start - now);
    {
      absl::MutexLock lock(&mu_);
      started_ns_[i] = start;
    }
    absl::Status s = RunOp(i, start, &prev_end_ns);
    absl::MutexLock lock(&mu_);
    if (!s.ok()) {
      if (error_.ok()) error_ = s;
      stopped_ = true;
      return;
    }
    ended_ns_[i] = prev_end_ns;
    done_[i] = 1;
    comm_calls_ += IsCommunication(plan_->ops[i].kind);
  }
}

absl::Status CpuBackend::RunComm(const ReplayOp& op) {
  const CommSpec& c = op.comm;
  MPI_Comm comm = world_->comm(c.group);
  if (comm == MPI_COMM_NULL) {
    return absl::FailedPreconditionError(
        absl::StrFormat("this rank is not in the op's process group '%s'",
                        plan_->groups[c.group].name));
  }
  // MPI counts are int: a larger comm_size would wrap to a negative count.
  if (c.bytes < 0 || c.bytes > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "comm_size %d does not fit an MPI count (at most 2^31-1 bytes)",
        c.bytes));
  }
  const int count = static_cast<int>(c.bytes);
  switch (op.kind) {
    case ReplayOpKind::kSend: {
      pending_sends_.emplace_back();
      return MpiStatus(MPI_Isend(send_buffer_.data(), count, MPI_BYTE, c.peer,
                                 c.tag, MPI_COMM_WORLD, &pending_sends_.back()),
                       "MPI_Isend");
    }
    case ReplayOpKind::kRecv:
      return MpiStatus(MPI_Recv(recv_buffer_.data(), count, MPI_BYTE, c.peer,
                                c.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                       "MPI_Recv");
    default: {
      const int root = world_->GroupRankOf(c.group, std::max(c.root, 0));
      return RunMpiCollective(c, comm, std::max(root, 0), send_buffer_.data(),
                              recv_buffer_.data());
    }
  }
}

// Holds op i from `start` on the replay's clock; `end` gets its end there.
absl::Status CpuBackend::RunOp(uint32_t i, int64_t start, int64_t* end) {
  const ReplayOp& op = plan_->ops[i];
  *end = start;
  if (IsCommunication(op.kind)) {
    absl::Status s = RunComm(op);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrFormat("node %d (%s): %s", op.node_id,
                                          plan_->name(op), s.message()));
    }
    *end = NowNs();
  } else if (op.kind != ReplayOpKind::kNone) {
    const int64_t hold =
        op.kind == ReplayOpKind::kHostCompute ? op.host_ns : op.recorded_ns;
    timer_.WaitUntil(start, hold);
    *end = start + hold;
  }
  op_timing_[i] = {start - iteration_start_ns_, *end - start};
  return absl::OkStatus();
}

absl::Status CpuBackend::EndIteration(IterationTiming* timing) {
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    status = error_;
    timing->comm_calls = comm_calls_;
  }
  int64_t sends_done_ns = 0;
  if (!pending_sends_.empty()) {
    // Posted by the communication worker, which has ended: this thread is now
    // the only one calling MPI.
    absl::Status s =
        MpiStatus(MPI_Waitall(static_cast<int>(pending_sends_.size()),
                              pending_sends_.data(), MPI_STATUSES_IGNORE),
                  "MPI_Waitall");
    pending_sends_.clear();
    sends_done_ns = NowNs() - iteration_start_ns_;
    if (status.ok()) status = s;
  }
  RETURN_IF_ERROR(status);
  int64_t last_ns = sends_done_ns;
  for (const OpTiming& t : op_timing_)
    last_ns = std::max(last_ns, t.start_ns + t.duration_ns);
  timing->total_ns = last_ns;
  timing->ops = op_timing_;
  return absl::OkStatus();
}

}  // namespace et::replay
