// NCCL's run-time knobs as a user sets them on a real run, so et-sim can
// price the run that was made: which algorithms and protocols the tuner may
// pick (NCCL_ALGO, NCCL_PROTO, in NCCL's own list syntax), the bounds on its
// channels (NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS, NCCL_MIN_CTAS /
// NCCL_MAX_CTAS) and how many GPUs one process drives (nccl-tests -g). Set by
// et-sim's flags or a platform file; read by the NCCL model
// (simulator/comm/nccl_cost_model.h). docs/collective-model.md, "NCCL's knobs".
#ifndef SIMULATOR_PLATFORM_NCCL_SETTINGS_H_
#define SIMULATOR_PLATFORM_NCCL_SETTINGS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace et::sim {

// NCCL's algorithms (NCCL_ALGO names). The model prices ring, tree, NVLS and
// NVLSTree; CollNet needs in-network reduction switches and PAT runs only
// with one GPU per node: they are accepted, and leave the choice to the rest.
enum NcclAlgorithms : unsigned {
  kNcclRing = 1,
  kNcclTree = 2,
  kNcclNvls = 4,
  kNcclNvlsTree = 8,
  kNcclCollNetDirect = 16,
  kNcclCollNetChain = 32,
  kNcclPat = 64,
  kNcclAllAlgorithms = 127
};

// NCCL's protocols (NCCL_PROTO names).
enum NcclProtocols : unsigned {
  kNcclLl = 1,
  kNcclLl128 = 2,
  kNcclSimple = 4,
  kNcclAllProtocols = 7
};

struct NcclSettings {
  unsigned algorithms = kNcclAllAlgorithms;
  unsigned protocols = kNcclAllProtocols;
  // Channel bounds; 0: NCCL's own count.
  int64_t min_channels = 0;
  int64_t max_channels = 0;
  // GPUs one process drives (nccl-tests -g): it launches their kernels in
  // turn, a host cost per extra GPU (Platform::launch_per_gpu_us).
  int64_t gpus_per_process = 1;
  // As given, for reports ("" when unset).
  std::string algo_text, proto_text;
};

// NCCL_ALGO / NCCL_PROTO syntax: a comma list of names, case-insensitive,
// all of it excluded when it starts with '^' ("ring", "Tree,Ring",
// "^NVLS,NVLSTree", "^LL128"). An unknown name or an empty selection is an
// error naming the accepted names.
absl::StatusOr<unsigned> ParseNcclAlgo(absl::string_view text);
absl::StatusOr<unsigned> ParseNcclProto(absl::string_view text);

// Channel bounds and GPUs per process checked: 1..64 channels (NCCL's
// MAXCHANNELS), min <= max when both set, 1..64 GPUs per process.
absl::Status CheckNcclSettings(const NcclSettings& settings);

// "NCCL_ALGO=ring NCCL_PROTO=^LL128 NCCL_MAX_NCHANNELS=4 -g 8", or "" when
// every knob is NCCL's default.
std::string DescribeNcclSettings(const NcclSettings& settings);

// What the run sets from et-sim's flags; empty / 0: as the platform says.
struct NcclFlags {
  std::string algo, proto;
  int64_t min_channels = 0, max_channels = 0, gpus_per_process = 0;
};

// Applies the set flags over `settings` (a platform file's); errors name the
// knob (NCCL_ALGO, max channels, ...).
absl::Status ApplyNcclFlags(const NcclFlags& flags, NcclSettings* settings);

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_NCCL_SETTINGS_H_
