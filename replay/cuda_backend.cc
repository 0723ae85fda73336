// cuBLAS + NCCL + CUDA streams replay; see cuda_backend.h.
#include "replay/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "replay/cuda_kernels.h"
#include "replay/cuda_status.h"
#include "replay/mpi_collective.h"
#include "replay/nccl_collective.h"

namespace et::replay {
namespace {

struct CublasTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  bool double_scalars;
};

// cuBLAS has no integer GEMM for every layout PyTorch records; integer and
// bool GEMMs run as float32.
Dtype CublasRunType(Dtype type) {
  switch (type) {
    case Dtype::kFloat16:
    case Dtype::kBFloat16:
    case Dtype::kFloat64:
      return type;
    default:
      return Dtype::kFloat32;
  }
}

CublasTypes CublasTypesFor(Dtype type) {
  switch (CublasRunType(type)) {
    case Dtype::kFloat16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
    case Dtype::kBFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
    case Dtype::kFloat64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, true};
    default:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
  }
}

// Bytes of A, B and C of `g` as cuBLAS runs it.
struct GemmBytes {
  uint64_t a, b, c;
};
GemmBytes GemmBytesOf(const GemmShape& g) {
  const int64_t elem = ElementBytes(CublasRunType(g.dtype));
  return {static_cast<uint64_t>(g.batch * g.m * g.k * elem),
          static_cast<uint64_t>(g.batch * g.k * g.n * elem),
          static_cast<uint64_t>(g.batch * g.m * g.n * elem)};
}

class CudaBackend : public DeviceBackend {
 public:
  CudaBackend(MpiWorld* world, HostTimer timer, CudaBackendOptions options,
              int device)
      : world_(world), timer_(timer), options_(options), device_(device) {}
  ~CudaBackend() override;

  std::string Describe() const override { return description_; }
  std::string DeviceName() const override { return device_name_; }
  absl::Status Prepare(const ReplayPlan& plan,
                       const StoragePlan& storage) override;
  absl::Status BeginIteration(IterationTimingMode mode) override;
  absl::Status Issue(size_t i) override;
  absl::Status EndIteration(IterationTiming* timing) override;
  // A timing event on each side of a kernel adds GPU time of its own (2 x
  // ~1.9 us on an H100, docs/et-replay.md): the step is timed without them.
  bool OpTimingStretchesRun() const override { return true; }

 private:
  bool OnDevice(const ReplayOp& op) const {
    return plan_->queues[op.queue].kind == ReplayQueueKind::kDeviceStream;
  }
  // The event that says device op i is done, for waits and frees: its timing
  // end event where this iteration times it, else one without timing.
  cudaEvent_t Done(size_t i) const {
    return mode_ == IterationTimingMode::kEveryOp || ends_step_[i]
               ? end_events_[i]
               : done_events_[i];
  }
  // Marks, per step and device queue, the last op issued there: a kStep
  // iteration times those alone.
  void MarkStepEnds(const ReplayPlan& plan);
  uint64_t ScratchBytesFor(const ReplayOp& op) const;
  absl::Status IssueHost(size_t i);
  // Waits on the host for op i's host producers (ReplayPlan::wait_lags_ns)
  // and, with `device_waits`, device producers too; returns when op i may
  // start on the host clock.
  absl::StatusOr<int64_t> HostReadyNs(size_t i, bool device_waits);
  absl::Status IssueDevice(size_t i);
  absl::Status PrepareLocal(const ReplayPlan& plan, const StoragePlan& storage);
  absl::Status RunGemm(size_t i);
  absl::Status RunComm(size_t i, cudaStream_t stream);
  absl::Status AllocateStorages(size_t i, cudaStream_t stream);
  absl::Status FreeStorages(size_t i);
  // The device address of op i's `nth` input (or output) view, or nullptr
  // when it has none, it is shorter than `min_bytes` or not aligned to
  // `align_bytes`.
  char* View(size_t i, bool output, int nth, uint64_t min_bytes,
             uint64_t align_bytes) const;
  // Ranks in the op's communicator (the launch's, not the recorded size);
  // send/recv run on the world's.
  int CommSize(const ReplayOp& op) const {
    return world_->GroupSize(
        op.kind == ReplayOpKind::kCollective ? op.comm.group : -1);
  }
  absl::Status Failed(absl::Status s) {
    failed_ = true;
    return s;
  }

  MpiWorld* world_;
  HostTimer timer_;
  CudaBackendOptions options_;
  int device_;
  std::string description_;
  std::string device_name_;
  const ReplayPlan* plan_ = nullptr;
  const StoragePlan* storage_ = nullptr;
  std::vector<cudaStream_t> streams_;  // by queue; nullptr for host queues
  // Frees wait here for every stream that used the storage, so that no
  // compute stream is held behind another's use.
  cudaStream_t free_stream_ = nullptr;
  std::vector<cudaEvent_t> start_events_, end_events_;  // by op, timing
  std::vector<cudaEvent_t> done_events_;  // by op, no timing (kStep waits)
  std::vector<bool> ends_step_;  // by op: last of its step on its queue
  IterationTimingMode mode_ = IterationTimingMode::kEveryOp;
  cudaEvent_t origin_ = nullptr;
  // One handle per stream: a handle's workspace must not be shared by
  // concurrent streams.
  std::vector<cublasHandle_t> cublas_;  // by queue
  NcclGroups nccl_;
  char* scratch_ = nullptr;
  uint64_t scratch_bytes_ = 0;
  std::vector<char*> storage_ptrs_;  // by storage; null when freed
  std::vector<std::vector<std::pair<int, uint32_t>>>
      storage_users_;  // (queue, last op)
  // Host ops hold their queue, not the issuing thread: a host op's end is
  // planned (start + recorded time) and only the next op that needs it waits,
  // so kernels launched part-way through it are issued part-way through it.
  std::vector<OpTiming> host_timing_;   // host ops, by op
  std::vector<int64_t> host_start_ns_;  // host ops, by op: NowNs() clock
  std::vector<int64_t> host_free_ns_;   // by queue: its last host op's end
  int64_t origin_host_ns_ = 0;
  int64_t comm_calls_ = 0;
  bool failed_ = false;  // an op failed: peers may never complete NCCL work
};

CudaBackend::~CudaBackend() {
  if (failed_) {
    // Waiting for the device or destroying communicators could block on peers
    // that will never post their half; abort and leave the rest to exit.
    nccl_.Abort();
    return;
  }
  cudaDeviceSynchronize();
  for (char* p : storage_ptrs_) {
    if (p != nullptr) cudaFree(p);
  }
  if (scratch_ != nullptr) cudaFree(scratch_);
  for (cudaEvent_t e : start_events_) cudaEventDestroy(e);
  for (cudaEvent_t e : end_events_) cudaEventDestroy(e);
  for (cudaEvent_t e : done_events_) cudaEventDestroy(e);
  if (origin_ != nullptr) cudaEventDestroy(origin_);
  for (cudaStream_t s : streams_) {
    if (s != nullptr) cudaStreamDestroy(s);
  }
  if (free_stream_ != nullptr) cudaStreamDestroy(free_stream_);
  for (cublasHandle_t h : cublas_) {
    if (h != nullptr) cublasDestroy(h);
  }
}

uint64_t CudaBackend::ScratchBytesFor(const ReplayOp& op) const {
  switch (op.kind) {
    case ReplayOpKind::kGemm: {
      const GemmBytes b = GemmBytesOf(op.gemm);
      return b.a + b.b + b.c;
    }
    case ReplayOpKind::kKernel:
      return static_cast<uint64_t>(op.bytes);
    case ReplayOpKind::kCollective:
    case ReplayOpKind::kSend:
    case ReplayOpKind::kRecv: {
      const CommBufferBytes b = BuffersFor(op.comm, CommSize(op));
      return static_cast<uint64_t>(std::max<int64_t>(b.send, 4) +
                                   std::max<int64_t>(b.recv, 4));
    }
    default:
      return 0;
  }
}

// Everything one rank can do or fail at alone.
absl::Status CudaBackend::PrepareLocal(const ReplayPlan& plan,
                                       const StoragePlan& storage) {
  RETURN_IF_CUDA_ERROR(cudaSetDevice(device_));
  // The default pool gives memory back to the driver at every synchronisation
  // (threshold 0); a replay that frees and reallocates every iteration would
  // then time cudaMallocAsync's mapping, not the workload.
  cudaMemPool_t pool;
  RETURN_IF_CUDA_ERROR(cudaDeviceGetDefaultMemPool(&pool, device_));
  uint64_t keep_bytes = UINT64_MAX;
  RETURN_IF_CUDA_ERROR(cudaMemPoolSetAttribute(
      pool, cudaMemPoolAttrReleaseThreshold, &keep_bytes));
  cudaDeviceProp prop;
  RETURN_IF_CUDA_ERROR(cudaGetDeviceProperties(&prop, device_));
  device_name_ = prop.name;
  description_ =
      absl::StrFormat("cuda:%d %s (%.1f GiB), %d ranks", device_, prop.name,
                      prop.totalGlobalMem / 1073741824.0, world_->size());
  streams_.assign(plan.queues.size(), nullptr);
  cublas_.assign(plan.queues.size(), nullptr);
  for (size_t q = 0; q < plan.queues.size(); ++q) {
    if (plan.queues[q].kind != ReplayQueueKind::kDeviceStream) continue;
    RETURN_IF_CUDA_ERROR(
        cudaStreamCreateWithFlags(&streams_[q], cudaStreamNonBlocking));
    RETURN_IF_CUBLAS_ERROR(cublasCreate(&cublas_[q]));
    RETURN_IF_CUBLAS_ERROR(cublasSetStream(cublas_[q], streams_[q]));
  }
  RETURN_IF_CUDA_ERROR(
      cudaStreamCreateWithFlags(&free_stream_, cudaStreamNonBlocking));
  start_events_.assign(plan.ops.size(), nullptr);
  end_events_.assign(plan.ops.size(), nullptr);
  done_events_.assign(plan.ops.size(), nullptr);
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    if (!OnDevice(plan.ops[i])) continue;
    RETURN_IF_CUDA_ERROR(cudaEventCreate(&start_events_[i]));
    RETURN_IF_CUDA_ERROR(cudaEventCreate(&end_events_[i]));
    RETURN_IF_CUDA_ERROR(
        cudaEventCreateWithFlags(&done_events_[i], cudaEventDisableTiming));
  }
  MarkStepEnds(plan);
  RETURN_IF_CUDA_ERROR(cudaEventCreate(&origin_));
  storage_ptrs_.assign(storage.storage_count(), nullptr);
  storage_users_.assign(storage.storage_count(), {});
  host_timing_.assign(plan.ops.size(), OpTiming{});
  host_start_ns_.assign(plan.ops.size(), 0);
  host_free_ns_.assign(plan.queues.size(), 0);
  return absl::OkStatus();
}

absl::Status CudaBackend::Prepare(const ReplayPlan& plan,
                                  const StoragePlan& storage) {
  plan_ = &plan;
  storage_ = &storage;
  // NCCL's set-up is collective: every rank must reach it, or none.
  RETURN_IF_ERROR(world_->Agree(PrepareLocal(plan, storage)));
  int has_comm =
      std::any_of(plan.ops.begin(), plan.ops.end(),
                  [](const ReplayOp& op) { return IsCommunication(op.kind); });
  RETURN_IF_ERROR(MpiStatus(MPI_Allreduce(MPI_IN_PLACE, &has_comm, 1, MPI_INT,
                                          MPI_MAX, MPI_COMM_WORLD),
                            "MPI_Allreduce"));
  if (has_comm)
    RETURN_IF_ERROR(nccl_.Init(*world_, static_cast<int>(plan.groups.size())));

  // Memory is measured after cuBLAS and NCCL took theirs.
  for (const ReplayOp& op : plan.ops)
    scratch_bytes_ = std::max(scratch_bytes_, ScratchBytesFor(op));
  size_t free_bytes = 0, total_bytes = 0;
  RETURN_IF_CUDA_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  uint64_t cap =
      options_.memory_cap_bytes > 0 ? options_.memory_cap_bytes : free_bytes;
  // Leave 5% to cuBLAS workspaces and the pool's fragmentation.
  cap = std::min<uint64_t>(cap, free_bytes * 95 / 100);
  if (scratch_bytes_ > cap) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("the largest op needs %.3f GiB of scratch memory, more "
                        "than the %.3f GiB available",
                        scratch_bytes_ / 1073741824.0, cap / 1073741824.0));
  }
  RETURN_IF_ERROR(storage.CheckCap(plan, cap - scratch_bytes_));
  if (scratch_bytes_ > 0) {
    RETURN_IF_CUDA_ERROR(
        cudaMalloc(reinterpret_cast<void**>(&scratch_), scratch_bytes_));
    RETURN_IF_CUDA_ERROR(cudaMemset(scratch_, 0, scratch_bytes_));
  }
  return absl::OkStatus();
}

void CudaBackend::MarkStepEnds(const ReplayPlan& plan) {
  ends_step_.assign(plan.ops.size(), false);
  absl::flat_hash_map<std::pair<int32_t, int>, size_t> last;  // (step, queue)
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    if (!OnDevice(op) || op.kind == ReplayOpKind::kNone) continue;
    const int32_t k =
        plan.steps.step_ids().empty() ? 0 : plan.steps.step_index(op.node);
    last[{k, op.queue}] = i;
  }
  for (const auto& [key, i] : last) ends_step_[i] = true;
}

absl::Status CudaBackend::BeginIteration(IterationTimingMode mode) {
  mode_ = mode;
  RETURN_IF_CUDA_ERROR(cudaDeviceSynchronize());
  std::fill(host_timing_.begin(), host_timing_.end(), OpTiming{});
  std::fill(host_start_ns_.begin(), host_start_ns_.end(), 0);
  std::fill(host_free_ns_.begin(), host_free_ns_.end(), 0);
  comm_calls_ = 0;
  RETURN_IF_CUDA_ERROR(cudaEventRecord(origin_, nullptr));
  RETURN_IF_CUDA_ERROR(cudaEventSynchronize(origin_));
  origin_host_ns_ = NowNs();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CudaBackend::HostReadyNs(size_t i, bool device_waits) {
  int64_t ready_ns = 0;
  const auto targets = plan_->waits(i);
  const auto lags = plan_->wait_lags_ns(i);
  for (size_t k = 0; k < targets.size(); ++k) {
    const uint32_t w = targets[k];
    if (end_events_[w] != nullptr) {
      // A host op that depends on device work waits for it, as a
      // synchronising op did.
      if (device_waits) RETURN_IF_CUDA_ERROR(cudaEventSynchronize(Done(w)));
      continue;
    }
    ready_ns = std::max(ready_ns,
                        lags[k] >= 0
                            ? host_start_ns_[w] + lags[k]
                            : host_start_ns_[w] + host_timing_[w].duration_ns);
  }
  return ready_ns;
}

absl::Status CudaBackend::IssueHost(size_t i) {
  const ReplayOp& op = plan_->ops[i];
  ASSIGN_OR_RETURN(int64_t start, HostReadyNs(i, /*device_waits=*/true));
  int64_t& free_ns = host_free_ns_[op.queue];
  // The gap is held from when the op could start (step/step_model.h).
  start = std::max(std::max(start, free_ns) + op.gap_before_ns, NowNs());
  const int64_t now = NowNs();
  if (start > now) timer_.WaitUntil(now, start - now);
  const int64_t held_ns = op.kind == ReplayOpKind::kNone ? 0 : op.host_ns;
  host_start_ns_[i] = start;
  host_timing_[i] = {start - origin_host_ns_, held_ns};
  free_ns = start + held_ns;
  return absl::OkStatus();
}

char* CudaBackend::View(size_t i, bool output, int nth, uint64_t min_bytes,
                        uint64_t align_bytes) const {
  int seen = 0;
  for (const StorageUse& u : storage_->uses(i)) {
    if (u.is_output != output) continue;
    if (seen++ != nth) continue;
    char* base = storage_ptrs_[u.storage];
    if (base == nullptr ||
        u.offset_bytes + min_bytes > storage_->storage_bytes(u.storage) ||
        u.offset_bytes % align_bytes != 0) {
      return nullptr;
    }
    return base + u.offset_bytes;
  }
  return nullptr;
}

absl::Status CudaBackend::RunGemm(size_t i) {
  const ReplayOp& op = plan_->ops[i];
  const GemmShape& g = op.gemm;
  const CublasTypes t = CublasTypesFor(g.dtype);
  const GemmBytes bytes = GemmBytesOf(g);
  char* a = nullptr;
  char* b = nullptr;
  char* c = nullptr;
  // Recorded views hold the recorded type: usable only when cuBLAS runs that
  // type (an int8 GEMM runs as float32 in scratch).
  const int64_t elem = ElementBytes(CublasRunType(g.dtype));
  if (elem == ElementBytes(g.dtype)) {
    a = View(i, false, g.a_input, bytes.a, elem);
    b = View(i, false, g.a_input + 1, bytes.b, elem);
    c = View(i, true, 0, bytes.c, elem);
  }
  if (a == nullptr || b == nullptr || c == nullptr) {
    a = scratch_, b = scratch_ + bytes.a, c = scratch_ + bytes.a + bytes.b;
  }
  // Row-major C[m][n] = A[m][k] B[k][n] is column-major C^T = B^T A^T: swap the
  // operands.
  const cublasOperation_t op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ldb = g.trans_b ? g.k : g.n;
  const int64_t lda = g.trans_a ? g.m : g.k;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const void* alpha =
      t.double_scalars ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta =
      t.double_scalars ? static_cast<const void*>(&beta_d) : &beta_f;
  // The 64-bit API: LLM vocabulary projections pass 2^31 elements.
  RETURN_IF_CUBLAS_ERROR(cublasGemmStridedBatchedEx_64(
      cublas_[op.queue], op_b, op_a, g.n, g.m, g.k, alpha, b, t.data, ldb,
      g.k * g.n, a, t.data, lda, g.m * g.k, beta, c, t.data, g.n, g.m * g.n,
      g.batch, t.compute, CUBLAS_GEMM_DEFAULT));
  return absl::OkStatus();
}

absl::Status CudaBackend::RunComm(size_t i, cudaStream_t stream) {
  const ReplayOp& op = plan_->ops[i];
  const int group = op.kind == ReplayOpKind::kCollective ? op.comm.group : -1;
  ncclComm_t comm = nccl_.comm(group);
  if (comm == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "this rank is not in process group '%s'", plan_->groups[group].name));
  }
  const CommBufferBytes b = BuffersFor(op.comm, CommSize(op));
  // At least one element: a barrier is a one-element all-reduce.
  const uint64_t elem = ElementBytes(op.comm.dtype);
  char* send = View(i, false, 0, std::max<int64_t>(b.send, 4), elem);
  char* recv = View(i, true, 0, std::max<int64_t>(b.recv, 4), elem);
  if (send == nullptr) send = scratch_;
  if (recv == nullptr) recv = scratch_ + std::max<int64_t>(b.send, 4);
  const int root =
      std::max(world_->GroupRankOf(group, std::max(op.comm.root, 0)), 0);
  RETURN_IF_ERROR(RunNcclOp(op.kind, op.comm, comm, root, send, recv, stream));
  ++comm_calls_;
  return absl::OkStatus();
}

absl::Status CudaBackend::AllocateStorages(size_t i, cudaStream_t stream) {
  for (uint32_t s : storage_->allocate_before(i)) {
    RETURN_IF_CUDA_ERROR(
        cudaMallocAsync(reinterpret_cast<void**>(&storage_ptrs_[s]),
                        storage_->storage_bytes(s), stream));
  }
  for (const StorageUse& u : storage_->uses(i)) {
    auto& users = storage_users_[u.storage];
    auto it = std::find_if(users.begin(), users.end(), [&](const auto& p) {
      return p.first == plan_->ops[i].queue;
    });
    if (it == users.end()) {
      users.emplace_back(plan_->ops[i].queue, static_cast<uint32_t>(i));
    } else {
      it->second = static_cast<uint32_t>(i);
    }
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::FreeStorages(size_t i) {
  for (uint32_t s : storage_->free_after(i)) {
    // Every stream that used the storage must be done with it before the free.
    for (const auto& [queue, last] : storage_users_[s]) {
      RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(free_stream_, Done(last), 0));
    }
    RETURN_IF_CUDA_ERROR(cudaFreeAsync(storage_ptrs_[s], free_stream_));
    storage_ptrs_[s] = nullptr;
    storage_users_[s].clear();
  }
  return absl::OkStatus();
}

absl::Status CudaBackend::IssueDevice(size_t i) {
  const ReplayOp& op = plan_->ops[i];
  cudaStream_t stream = streams_[op.queue];
  // Host producers: issue once they reached the recorded launch point; device
  // producers become event waits.
  ASSIGN_OR_RETURN(const int64_t ready_ns,
                   HostReadyNs(i, /*device_waits=*/false));
  const int64_t now = NowNs();
  if (ready_ns > now) timer_.WaitUntil(now, ready_ns - now);
  for (uint32_t w : plan_->waits(i)) {
    if (end_events_[w] != nullptr) {
      RETURN_IF_CUDA_ERROR(cudaStreamWaitEvent(stream, Done(w), 0));
    }
  }
  RETURN_IF_ERROR(AllocateStorages(i, stream));
  if (mode_ == IterationTimingMode::kEveryOp)
    RETURN_IF_CUDA_ERROR(cudaEventRecord(start_events_[i], stream));
  switch (op.kind) {
    case ReplayOpKind::kGemm:
      RETURN_IF_ERROR(RunGemm(i));
      break;
    case ReplayOpKind::kCollective:
    case ReplayOpKind::kSend:
    case ReplayOpKind::kRecv:
      RETURN_IF_ERROR(RunComm(i, stream));
      break;
    case ReplayOpKind::kKernel:
      if (op.bytes > 0) {
        // The copy kernel moves 16-byte words.
        char* buffer = View(i, false, 0, op.bytes, 16);
        RETURN_IF_CUDA_ERROR(LaunchMemoryBoundKernel(
            buffer != nullptr ? buffer : scratch_, op.bytes, stream));
      } else {
        RETURN_IF_CUDA_ERROR(LaunchTimedKernel(op.recorded_ns, stream));
      }
      break;
    case ReplayOpKind::kHostCompute:  // recorded on a stream: keep its time on
                                      // that stream
      RETURN_IF_CUDA_ERROR(LaunchTimedKernel(op.recorded_ns, stream));
      break;
    case ReplayOpKind::kNone:
      break;
  }
  RETURN_IF_CUDA_ERROR(cudaEventRecord(Done(i), stream));
  return FreeStorages(i);
}

absl::Status CudaBackend::Issue(size_t i) {
  const ReplayOp& op = plan_->ops[i];
  absl::Status s = OnDevice(op) ? IssueDevice(i) : IssueHost(i);
  if (s.ok()) return s;
  return Failed(
      absl::Status(s.code(), absl::StrFormat("node %d (%s): %s", op.node_id,
                                             plan_->name(op), s.message())));
}

absl::Status CudaBackend::EndIteration(IterationTiming* timing) {
  // The host queues' last ops end on the host clock.
  int64_t host_end_ns = 0;
  for (int64_t free_ns : host_free_ns_)
    host_end_ns = std::max(host_end_ns, free_ns);
  if (const int64_t now = NowNs(); host_end_ns > now)
    timer_.WaitUntil(now, host_end_ns - now);
  if (cudaError_t code = cudaDeviceSynchronize(); code != cudaSuccess)
    return Failed(
        CudaStatus(code, "cudaDeviceSynchronize", __FILE__, __LINE__));
  timing->ops.assign(plan_->ops.size(), OpTiming{});
  int64_t last_ns = 0;
  for (size_t i = 0; i < plan_->ops.size(); ++i) {
    if (start_events_[i] == nullptr) {
      timing->ops[i] = host_timing_[i];
    } else if (mode_ == IterationTimingMode::kStep) {
      // Only each step's last op on each queue is timed: its end.
      if (ends_step_[i]) {
        float end_ms = 0;
        RETURN_IF_CUDA_ERROR(
            cudaEventElapsedTime(&end_ms, origin_, end_events_[i]));
        timing->ops[i] = {static_cast<int64_t>(end_ms * 1e6), 0};
      }
    } else {
      float start_ms = 0, dur_ms = 0;
      RETURN_IF_CUDA_ERROR(
          cudaEventElapsedTime(&start_ms, origin_, start_events_[i]));
      RETURN_IF_CUDA_ERROR(
          cudaEventElapsedTime(&dur_ms, start_events_[i], end_events_[i]));
      timing->ops[i] = {static_cast<int64_t>(start_ms * 1e6),
                        static_cast<int64_t>(dur_ms * 1e6)};
    }
    last_ns =
        std::max(last_ns, timing->ops[i].start_ns + timing->ops[i].duration_ns);
  }
  timing->total_ns = last_ns;
  timing->comm_calls = comm_calls_;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code != cudaSuccess) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "no CUDA device: cudaGetDeviceCount: %s (use --device cpu)",
        cudaGetErrorString(code)));
  }
  if (count == 0) {
    return absl::FailedPreconditionError(
        "no CUDA device: none visible (use --device cpu)");
  }
  return count;
}

absl::StatusOr<std::unique_ptr<DeviceBackend>> CreateCudaBackend(
    MpiWorld* world, HostTimer timer, CudaBackendOptions options) {
  ASSIGN_OR_RETURN(const int count, CudaDeviceCount());
  const int device =
      options.device >= 0 ? options.device : world->local_rank() % count;
  if (device >= count) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "no CUDA device cuda:%d: this node has %d device(s)", device, count));
  }
  return std::unique_ptr<DeviceBackend>(
      new CudaBackend(world, timer, options, device));
}

}  // namespace et::replay
