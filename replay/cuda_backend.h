// Replays a plan on one NVIDIA GPU per rank: GEMMs through cuBLAS with the
// recorded shapes, dtypes and transposes; collectives and send/recv through
// NCCL, one communicator per recorded process group, its unique id broadcast
// over MPI; other kernels as a memory-bound copy over the recorded bytes or a
// timed spin kernel; host ops (optional) as the recorded host time, with the
// recorded gaps between them, on a host clock that lets the kernels they
// launched be issued as far into them as recorded. Every recorded stream is a
// CUDA stream; a cross-queue wait is a cudaStreamWaitEvent on the producer's
// end event (or a host cudaEventSynchronize when a host op waits for the GPU).
// Each op is bracketed by two CUDA events for its time. Memory follows the
// StoragePlan (cudaMallocAsync at first use, cudaFreeAsync after the last,
// after every stream that used it); ops without recorded tensors use one
// scratch buffer. One thread; one device.
#ifndef REPLAY_CUDA_BACKEND_H_
#define REPLAY_CUDA_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replay/device_backend.h"
#include "replay/host_timer.h"
#include "replay/mpi_world.h"

namespace et::replay {

struct CudaBackendOptions {
  int device = -1;  // -1: the rank's local rank modulo the device count
  uint64_t memory_cap_bytes = 0;  // 0: the device's free memory
};

// The number of CUDA devices, or an error saying that there is none (no driver,
// no GPU).
absl::StatusOr<int> CudaDeviceCount();

// Creates the backend; fails with "no CUDA device: ..." where there is none.
// The device check is local, so callers agree on it across ranks
// (MpiWorld::Agree).
absl::StatusOr<std::unique_ptr<DeviceBackend>> CreateCudaBackend(
    MpiWorld* world, HostTimer timer, CudaBackendOptions options);

}  // namespace et::replay

#endif  // REPLAY_CUDA_BACKEND_H_
