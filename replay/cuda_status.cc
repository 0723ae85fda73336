// CUDA / cuBLAS / NCCL error codes -> Status; see cuda_status.h.
#include "replay/cuda_status.h"

#include "absl/strings/str_format.h"

namespace et::replay {
namespace {

const char* BaseName(const char* file) {
  const char* base = file;
  for (const char* p = file; *p != '\0'; ++p) {
    if (*p == '/') base = p + 1;
  }
  return base;
}

}  // namespace

absl::Status CudaStatus(cudaError_t code, const char* call, const char* file,
                        int line) {
  const absl::StatusCode status_code =
      code == cudaErrorMemoryAllocation ? absl::StatusCode::kResourceExhausted
                                        : absl::StatusCode::kInternal;
  return absl::Status(status_code, absl::StrFormat("%s: %s (%s:%d)", call,
                                                   cudaGetErrorString(code),
                                                   BaseName(file), line));
}

absl::Status CublasStatus(cublasStatus_t code, const char* call,
                          const char* file, int line) {
  return absl::InternalError(absl::StrFormat("%s: %s (%s:%d)", call,
                                             cublasGetStatusString(code),
                                             BaseName(file), line));
}

absl::Status NcclStatus(ncclResult_t code, const char* call, const char* file,
                        int line) {
  return absl::InternalError(absl::StrFormat(
      "%s: %s (%s:%d)", call, ncclGetErrorString(code), BaseName(file), line));
}

}  // namespace et::replay
