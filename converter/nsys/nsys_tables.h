// The tables of an Nsight Systems export that a graph needs, read into typed
// rows: GPU activity (CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET), CUDA
// runtime and driver calls (CUPTI_ACTIVITY_KIND_RUNTIME), NVTX ranges
// (NVTX_EVENTS), stream-wait synchronisation (CUPTI_ACTIVITY_KIND_
// SYNCHRONIZATION joined with CUPTI_ACTIVITY_KIND_CUDA_EVENT), names resolved
// through StringIds. Only columns present in every schema from 2.9 to 3.25
// are read; a table an export lacks (a capture without NVTX, without memsets)
// is empty. Times are the export's nanoseconds.
#ifndef CONVERTER_NSYS_NSYS_TABLES_H_
#define CONVERTER_NSYS_NSYS_TABLES_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/string_pool.h"
#include "converter/nsys/nsys_database.h"

namespace et::nsys {

// nsys packs a process and thread into one "global id": the pid in bits
// 24..47, the tid in bits 0..23.
inline int64_t PidOf(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
inline int64_t TidOf(int64_t global_id) { return global_id & 0xFFFFFF; }

enum class GpuKind : uint8_t { kKernel, kMemcpy, kMemset };

struct GpuActivity {
  GpuKind kind = GpuKind::kKernel;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t device = -1;
  int64_t stream = -1;
  int64_t correlation = -1;  // -1: NULL in the export
  int64_t pid = -1;          // -1: NULL globalPid
  int64_t bytes = -1;        // memcpy / memset
  uint32_t name = 0;         // id in NsysTables::strings
  std::array<int64_t, 3> grid = {0, 0, 0};
  std::array<int64_t, 3> block = {0, 0, 0};
};

struct RuntimeCallRow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t pid = -1;
  int64_t tid = -1;
  int64_t correlation = -1;
  uint32_t name = 0;
};

struct NvtxRange {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t pid = -1;
  int64_t tid = -1;
  int64_t domain = 0;
  uint32_t name = 0;
};

// A cudaStreamWaitEvent's record: the waiting stream, and the stream and call
// that recorded the event waited on.
struct StreamWait {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t device = -1;
  int64_t stream = -1;
  int64_t correlation = -1;  // the cudaStreamWaitEvent call
  int64_t pid = -1;
  int64_t record_stream = -1;
  int64_t record_correlation = -1;  // the cudaEventRecord call
};

struct NsysTables {
  SchemaVersion version;
  StringPool strings;            // every name (ids in the rows below)
  std::vector<GpuActivity> gpu;  // kernels, then memcpys, then memsets
  std::vector<RuntimeCallRow> runtime;
  std::vector<NvtxRange> nvtx;
  std::vector<StreamWait> waits;
  // TARGET_INFO_GPU: device id -> name (absent in some exports).
  std::vector<std::pair<int64_t, std::string>> gpu_names;
  int64_t open_nvtx_ranges = 0;  // ranges without an end (capture cut)
  int64_t kernel_rows = 0;       // rows of CUPTI_ACTIVITY_KIND_KERNEL
};

// Reads `db`'s tables. Fails (one line naming the file, table, row and
// problem) on a GPU activity row without a process, or an export without a
// kernel table.
absl::StatusOr<NsysTables> ReadNsysTables(NsysDatabase* db);

}  // namespace et::nsys

#endif  // CONVERTER_NSYS_NSYS_TABLES_H_
