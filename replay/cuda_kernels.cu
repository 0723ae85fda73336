// Memory-bound and timed kernels; see cuda_kernels.h.
#include "replay/cuda_kernels.h"

namespace et::replay {
namespace {

__global__ void CopyWords(const uint4* __restrict__ in, uint4* __restrict__ out,
                          size_t n) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    out[i] = in[i];
  }
}

__device__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void Spin(int64_t duration_ns) {
  const uint64_t end = GlobalTimerNs() + static_cast<uint64_t>(duration_ns);
  while (GlobalTimerNs() < end) {
  }
}

}  // namespace

cudaError_t LaunchMemoryBoundKernel(void* buffer, size_t bytes,
                                    cudaStream_t stream) {
  const size_t words = bytes / 2 / sizeof(uint4);
  if (words == 0) return cudaSuccess;
  const uint4* in = static_cast<const uint4*>(buffer);
  uint4* out = static_cast<uint4*>(buffer) + words;
  // 256 threads x up to 4096 blocks: enough to saturate HBM on an H100 (132
  // SMs).
  const unsigned blocks =
      static_cast<unsigned>(words / 256 + 1 < 4096 ? words / 256 + 1 : 4096);
  CopyWords<<<blocks, 256, 0, stream>>>(in, out, words);
  return cudaGetLastError();
}

cudaError_t LaunchTimedKernel(int64_t duration_ns, cudaStream_t stream) {
  if (duration_ns <= 0) return cudaSuccess;
  Spin<<<1, 1, 0, stream>>>(duration_ns);
  return cudaGetLastError();
}

}  // namespace et::replay
