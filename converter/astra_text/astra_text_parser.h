// Parser of ASTRA-sim 1.0 text workloads (formats.md section 4): the
// parallelism line, the layer count, then one line per layer with forward,
// input-gradient and weight-gradient compute times and collectives. The result
// is a plain value (AstraWorkload); turning it into Chakra graphs is
// astra_text_converter's job. Errors name the file and line.
#ifndef CONVERTER_ASTRA_TEXT_ASTRA_TEXT_PARSER_H_
#define CONVERTER_ASTRA_TEXT_ASTRA_TEXT_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/et_def.pb.h"

namespace et::convert {

// The parallelism strategies ASTRA-sim 1.0 knows
// (Workload::decode_parallelsim).
enum class AstraParallelism {
  kData,
  kModel,
  kHybridDataModel,
  kHybridModelData,
  kHybridTransformer,
  kHybridTransformerFwdInBckwd,
  kHybridDlrm,
  kHybridDlrmEnhanced,
  kHybridCustomized,
  kMicro,
  kDistributedInference,
};

// "DATA", "HYBRID_DLRM", ... (the spelling in the file).
absl::string_view AstraParallelismName(AstraParallelism p);
std::optional<AstraParallelism> ParseAstraParallelism(absl::string_view name);

// One collective column pair: NONE is kind kNone.
struct AstraComm {
  enum class Kind { kNone, kCollective, kAllReduceAllToAll };
  Kind kind = Kind::kNone;
  ChakraProtoMsg::CollectiveCommType type =
      ChakraProtoMsg::ALL_REDUCE;  // kCollective
  int64_t size_bytes = 0;
  std::string spelling;  // as written, e.g. "ALLREDUCE"
  bool active() const { return kind != Kind::kNone && size_bytes > 0; }
};

struct AstraLayer {
  std::string name;
  int line = 0;  // 1-based line in the file
  int64_t fwd_compute_cycles = 0;
  AstraComm fwd_comm;
  int64_t ig_compute_cycles = 0;
  AstraComm ig_comm;
  int64_t wg_compute_cycles = 0;
  AstraComm wg_comm;
  int64_t update_cycles = 0;  // delay after each of this layer's collectives
  std::optional<AstraParallelism>
      own_parallelism;  // HYBRID_CUSTOMIZED's 13th column
};

struct AstraWorkload {
  std::string path;
  AstraParallelism parallelism = AstraParallelism::kData;
  int model_parallel_npu_group = -1;   // HYBRID_TRANSFORMER*
  int dlrm_last_bottom_layer = -1;     // HYBRID_DLRM*
  std::vector<int> checkpoint_layers;  // HYBRID_TRANSFORMER_FWD_IN_BCKWD
  std::vector<int> checkpoint_initiating_layers;
  std::vector<AstraLayer> layers;
  std::vector<std::string>
      warnings;  // e.g. trailing lines after the last layer
};

// Parses the text of a workload; `path` is used in error messages only.
absl::StatusOr<AstraWorkload> ParseAstraText(absl::string_view text,
                                             const std::string& path);

// Reads and parses a workload file.
absl::StatusOr<AstraWorkload> ReadAstraText(const std::string& path);

}  // namespace et::convert

#endif  // CONVERTER_ASTRA_TEXT_ASTRA_TEXT_PARSER_H_
