// Converts an ASTRA-sim 1.0 text workload into one Chakra .et per rank. Text
// workloads are symmetric (every rank runs the same layers), so one graph is
// built and written once per rank with that rank in its metadata. The mapping
// of layers, passes and parallelism strategies to nodes and dependencies is
// documented in docs/et-convert.md, section "ASTRA-sim text workloads". Not
// thread-safe per call; separate calls are independent.
#ifndef CONVERTER_ASTRA_TEXT_ASTRA_TEXT_CONVERTER_H_
#define CONVERTER_ASTRA_TEXT_ASTRA_TEXT_CONVERTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "converter/astra_text/astra_text_parser.h"
#include "proto/et_def.pb.h"

namespace et::convert {

// Metadata attribute names written by this converter (beyond attr::kRank and
// friends).
inline constexpr char kAstraParallelismAttr[] = "astra_parallelism";  // string
inline constexpr char kAstraNumLayersAttr[] = "astra_num_layers";     // int64
inline constexpr char kAstraPassesAttr[] = "astra_passes";            // int64
inline constexpr char kAstraCycleNsAttr[] = "astra_cycle_ns";         // double
inline constexpr char kAstraMpGroupAttr[] =
    "astra_model_parallel_npu_group";  // int64
inline constexpr char kAstraDlrmLastBottomAttr[] =
    "astra_dlrm_last_bottom_layer";  // int64
inline constexpr char kAstraCheckpointsAttr[] =
    "astra_checkpoint_layers";  // int64 list
// Node attributes.
inline constexpr char kAstraPassAttr[] = "astra_pass";  // int64, 0-based pass
inline constexpr char kAstraLayerAttr[] =
    "astra_layer";  // int64, 0-based layer index
inline constexpr char kAstraPhaseAttr[] =
    "astra_phase";  // string: fwd, ig, wg, *_comm, *_update

struct AstraTextOptions {
  int num_passes = 1;     // training iterations to unroll
  double cycle_ns = 1.0;  // ASTRA-sim 1.0 times are cycles; 1 GHz by default
};

struct AstraTextReport {
  std::string input_path;
  std::string parallelism;
  int num_layers = 0;
  int num_ranks = 0;
  int num_passes = 0;
  std::vector<std::string> output_paths;
  int64_t nodes_per_rank = 0;
  int64_t comp_nodes_per_rank = 0;
  int64_t comm_nodes_per_rank = 0;
  std::map<std::string, int64_t>
      collectives_by_type;  // per rank, "ALL_REDUCE" -> n
  std::map<std::string, int64_t> collective_bytes_by_type;  // per rank
  int64_t compute_ns_per_rank = 0;  // sum of compute durations
  std::vector<std::string> warnings;
};

// The metadata and nodes of rank `rank` (nodes in ascending id order, deps to
// earlier ids).
struct AstraRankGraph {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
};
absl::StatusOr<AstraRankGraph> BuildAstraRankGraph(
    const AstraWorkload& workload, int rank, int num_ranks,
    const AstraTextOptions& options);

// Reads `txt_path` and writes ExpandRankPattern(out_pattern, r) for r in [0,
// num_ranks), each atomically. `out_pattern` must contain %d when num_ranks
// > 1.
absl::StatusOr<AstraTextReport> ConvertAstraText(
    const std::string& txt_path, const std::string& out_pattern, int num_ranks,
    const AstraTextOptions& options = {});

}  // namespace et::convert

#endif  // CONVERTER_ASTRA_TEXT_ASTRA_TEXT_CONVERTER_H_
