// CUDA, cuBLAS and NCCL return codes as absl::Status at the call site (style
// rule 6):
//   RETURN_IF_CUDA_ERROR(cudaMemcpyAsync(...));
// The message names the failing call, the library's error text and the source
// line. Only compiled with the CUDA backend.
#ifndef REPLAY_CUDA_STATUS_H_
#define REPLAY_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "absl/status/status.h"

namespace et::replay {

absl::Status CudaStatus(cudaError_t code, const char* call, const char* file,
                        int line);
absl::Status CublasStatus(cublasStatus_t code, const char* call,
                          const char* file, int line);
absl::Status NcclStatus(ncclResult_t code, const char* call, const char* file,
                        int line);

}  // namespace et::replay

#define RETURN_IF_CUDA_ERROR(expr)                                    \
  do {                                                                \
    const cudaError_t et_cuda_code_ = (expr);                         \
    if (et_cuda_code_ != cudaSuccess) {                               \
      return ::et::replay::CudaStatus(et_cuda_code_, #expr, __FILE__, \
                                      __LINE__);                      \
    }                                                                 \
  } while (0)

#define RETURN_IF_CUBLAS_ERROR(expr)                                      \
  do {                                                                    \
    const cublasStatus_t et_cublas_code_ = (expr);                        \
    if (et_cublas_code_ != CUBLAS_STATUS_SUCCESS) {                       \
      return ::et::replay::CublasStatus(et_cublas_code_, #expr, __FILE__, \
                                        __LINE__);                        \
    }                                                                     \
  } while (0)

#define RETURN_IF_NCCL_ERROR(expr)                                    \
  do {                                                                \
    const ncclResult_t et_nccl_code_ = (expr);                        \
    if (et_nccl_code_ != ncclSuccess) {                               \
      return ::et::replay::NcclStatus(et_nccl_code_, #expr, __FILE__, \
                                      __LINE__);                      \
    }                                                                 \
  } while (0)

#endif  // REPLAY_CUDA_STATUS_H_
