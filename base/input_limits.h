// Limits on what one input may make the tools allocate, shared by every reader
// and flag parser so that a hostile or damaged file fails early with a message
// naming the limit, instead of growing until the allocator aborts (a 2.6 MB
// gzip of '[' once grew to 6.3 GB before failing). Each limit is far above
// anything a real trace needs; the numbers say why. docs/input-limits.md
// lists them for users.
#ifndef BASE_INPUT_LIMITS_H_
#define BASE_INPUT_LIMITS_H_

#include <cstddef>
#include <cstdint>

namespace et {

// Ranks in one job (--world, --ranks, --rank lists, comm groups): the largest
// published training jobs use ~10^5 GPUs; per-rank state is tens of bytes, so
// 2^20 ranks costs at most tens of MB before any work starts.
inline constexpr int64_t kMaxRanks = int64_t{1} << 20;

// Decompressed bytes of one input file: the largest real ET we have seen is
// ~10 GB of JSON (300k nodes is 160 MB); 64 GiB leaves room and still stops a
// gzip bomb long before it exhausts memory on a 128 GiB machine.
inline constexpr uint64_t kMaxExpandedFileBytes = uint64_t{64} << 30;

// Expansion ratio of a gzip input: real traces compress 10-30x (ET JSON of
// the shared traces: 15x); deflate's ceiling is ~1030x, reached only by runs
// of one byte, so 250x separates bombs from traces. Applies only once the
// output passes kMinBytesForRatioCheck, so small repetitive files pass.
inline constexpr uint64_t kMaxGzipRatio = 250;
inline constexpr uint64_t kMinBytesForRatioCheck = uint64_t{64} << 20;

// One JSON node (its text, from '{' to '}'): real nodes are < 64 KB; the
// largest seen (a Triton kernel with its source in an attribute) is ~2 MB.
inline constexpr size_t kMaxNodeBytes = size_t{64} << 20;

// One string value (a node name, one attribute) in any input: 16 MiB.
inline constexpr size_t kMaxStringBytes = size_t{16} << 20;

// Nesting depth of JSON and YAML values: real traces nest < 10 deep
// (shapes of tuples of lists); deeper input is refused before any recursive
// code sees it.
inline constexpr int kMaxNestingDepth = 256;

// One length-delimited message in a .et file: protobuf refuses messages over
// 2 GB anyway; a node is < 1 MB in practice, so 256 MiB is the cap.
inline constexpr uint64_t kMaxEtMessageBytes = uint64_t{256} << 20;

// One configuration file (topology, platform, device presets, calibration,
// ASTRA system, process groups) read whole into memory: the largest real one
// (a 2^20-rank process-group list) is ~30 MB; 64 MiB stops /dev/zero or a
// mistaken trace before it is read whole.
inline constexpr int64_t kMaxConfigFileBytes = int64_t{64} << 20;

// Threads of one Kineto trace (or one nsys process): a training process runs
// tens of threads (main, autograd, data loaders, NCCL watchdogs); 4096 leaves
// room and keeps per-thread indexes and the thread-to-thread matching of the
// host ops (quadratic in threads) to seconds.
inline constexpr int64_t kMaxTraceThreads = 4096;

// Graphs (one per GPU and process) from one nsys export, hence output files
// of one conversion: one report covers one node, whose 8-16 GPUs run under a
// few processes each; 1024 leaves room and stops an export of 30,000 fake
// processes from writing 30,000 files.
inline constexpr int64_t kMaxNsysGraphs = 1024;

// Bytes of one job that et-sim --write-ranks writes for ASTRA-sim: ASTRA-sim
// loads every rank's graph into one process, at 10-30x its .et size, so a
// 4 GiB job already needs 40-120 GiB of memory there; past it, the job could
// not be run, and writing it (--world 100000: 8 GB) takes minutes of disk.
inline constexpr int64_t kMaxJobBytes = int64_t{4} << 30;

}  // namespace et

#endif  // BASE_INPUT_LIMITS_H_
