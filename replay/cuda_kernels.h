// The two kernels the CUDA backend launches for recorded GPU kernels that are
// not GEMMs or collectives: a memory-bound copy that touches the recorded bytes
// (half read, half written), and a single-thread kernel that spins on the GPU's
// global timer for the recorded duration, so that the stream stays occupied as
// it was. Plain C++ declarations so the backend needs no nvcc; the definitions
// are in cuda_kernels.cu.
#ifndef REPLAY_CUDA_KERNELS_H_
#define REPLAY_CUDA_KERNELS_H_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace et::replay {

// Copies bytes/2 from the first half of `buffer` to the second half on
// `stream`.
cudaError_t LaunchMemoryBoundKernel(void* buffer, size_t bytes,
                                    cudaStream_t stream);

// Occupies `stream` for `duration_ns` (one block, one thread).
cudaError_t LaunchTimedKernel(int64_t duration_ns, cudaStream_t stream);

}  // namespace et::replay

#endif  // REPLAY_CUDA_KERNELS_H_
