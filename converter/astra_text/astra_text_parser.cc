// Line-oriented parser of ASTRA-sim 1.0 text workloads; see
// astra_text_parser.h.
#include "converter/astra_text/astra_text_parser.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/gzip_input.h"
#include "base/path.h"
#include "base/status_macros.h"
#include "model/comm_type.h"

namespace et::convert {
namespace {

struct ParallelismSpelling {
  AstraParallelism value;
  const char* name;
};

constexpr ParallelismSpelling kParallelisms[] = {
    {AstraParallelism::kData, "DATA"},
    {AstraParallelism::kModel, "MODEL"},
    {AstraParallelism::kHybridDataModel, "HYBRID_DATA_MODEL"},
    {AstraParallelism::kHybridModelData, "HYBRID_MODEL_DATA"},
    {AstraParallelism::kHybridTransformer, "HYBRID_TRANSFORMER"},
    {AstraParallelism::kHybridTransformerFwdInBckwd,
     "HYBRID_TRANSFORMER_FWD_IN_BCKWD"},
    {AstraParallelism::kHybridDlrm, "HYBRID_DLRM"},
    {AstraParallelism::kHybridDlrmEnhanced, "HYBRID_DLRM_ENHANCED"},
    {AstraParallelism::kHybridCustomized, "HYBRID_CUSTOMIZED"},
    {AstraParallelism::kMicro, "MICRO"},
    {AstraParallelism::kDistributedInference, "DISTRIBUTED_INFERENCE"},
};

// Columns of a layer line, in order.
constexpr int kLayerColumns = 12;

// Reads the lines of the file with their 1-based numbers, skipping blank ones.
struct NumberedLine {
  int number;
  std::vector<absl::string_view> tokens;
};

std::vector<NumberedLine> TokenizeLines(absl::string_view text) {
  std::vector<NumberedLine> lines;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    std::vector<absl::string_view> tokens =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r\v\f"), absl::SkipEmpty());
    if (!tokens.empty()) lines.push_back({number, std::move(tokens)});
  }
  return lines;
}

class LineErrors {
 public:
  explicit LineErrors(const std::string& path) : path_(path) {}
  absl::Status At(int line, absl::string_view problem) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d: %s", path_, line, problem));
  }

 private:
  const std::string& path_;
};

absl::StatusOr<int64_t> ParseCount(absl::string_view token,
                                   absl::string_view what, int line,
                                   const LineErrors& errors) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(token, &value) || value < 0) {
    return errors.At(line, absl::StrCat(what, " '", token,
                                        "' is not a non-negative integer"));
  }
  return value;
}

absl::StatusOr<AstraComm> ParseComm(absl::string_view type,
                                    absl::string_view size,
                                    absl::string_view phase, int line,
                                    const LineErrors& errors) {
  AstraComm comm;
  comm.spelling = std::string(type);
  ASSIGN_OR_RETURN(
      comm.size_bytes,
      ParseCount(size, absl::StrCat(phase, " comm size"), line, errors));
  if (type == "NONE") return comm;
  if (type == "ALLREDUCEALLTOALL") {
    comm.kind = AstraComm::Kind::kAllReduceAllToAll;
    return comm;
  }
  std::optional<CommSpelling> spelling = ParseCommName(type);
  bool known = type == "ALLREDUCE" || type == "ALLTOALL" ||
               type == "ALLGATHER" || type == "REDUCESCATTER";
  if (!known || !spelling || spelling->kind != CommKind::kCollective) {
    return errors.At(line,
                     absl::StrCat(phase, " comm type '", type,
                                  "' is not ALLREDUCE, ALLTOALL, ALLGATHER, "
                                  "REDUCESCATTER, ALLREDUCEALLTOALL or NONE"));
  }
  comm.kind = AstraComm::Kind::kCollective;
  comm.type = spelling->type;
  return comm;
}

// "model_parallel_NPU_group: 4 checkpoints: 2 2 11 checkpoint_initiates: 2 19
// 10"
absl::Status ParseHeaderOptions(const NumberedLine& line,
                                const LineErrors& errors,
                                AstraWorkload* workload) {
  const std::vector<absl::string_view>& t = line.tokens;
  size_t i = 1;
  auto next_int = [&](absl::string_view what) -> absl::StatusOr<int64_t> {
    if (i >= t.size())
      return errors.At(line.number, absl::StrCat("missing ", what));
    return ParseCount(t[i++], what, line.number, errors);
  };
  auto int_list = [&](absl::string_view what,
                      std::vector<int>* out) -> absl::Status {
    ASSIGN_OR_RETURN(int64_t n, next_int(absl::StrCat(what, " count")));
    for (int64_t k = 0; k < n; ++k) {
      ASSIGN_OR_RETURN(int64_t v, next_int(what));
      out->push_back(static_cast<int>(v));
    }
    return absl::OkStatus();
  };
  while (i < t.size()) {
    absl::string_view key = t[i++];
    if (key == "model_parallel_NPU_group:") {
      ASSIGN_OR_RETURN(int64_t g, next_int("model_parallel_NPU_group"));
      workload->model_parallel_npu_group = static_cast<int>(g);
    } else if (key == "checkpoints:") {
      RETURN_IF_ERROR(
          int_list("checkpoint layer", &workload->checkpoint_layers));
    } else if (key == "checkpoint_initiates:") {
      RETURN_IF_ERROR(int_list("checkpoint_initiates layer",
                               &workload->checkpoint_initiating_layers));
    } else if ((workload->parallelism == AstraParallelism::kHybridDlrm ||
                workload->parallelism ==
                    AstraParallelism::kHybridDlrmEnhanced) &&
               workload->dlrm_last_bottom_layer < 0) {
      --i;
      ASSIGN_OR_RETURN(int64_t last, next_int("DLRM last bottom layer"));
      workload->dlrm_last_bottom_layer = static_cast<int>(last);
    } else {
      return errors.At(
          line.number,
          absl::StrCat("unexpected '", key, "' after ",
                       AstraParallelismName(workload->parallelism)));
    }
  }
  if ((workload->parallelism == AstraParallelism::kHybridDlrm ||
       workload->parallelism == AstraParallelism::kHybridDlrmEnhanced) &&
      workload->dlrm_last_bottom_layer < 0) {
    return errors.At(line.number,
                     "HYBRID_DLRM needs the last bottom layer index after it");
  }
  if ((workload->parallelism == AstraParallelism::kHybridTransformer ||
       workload->parallelism ==
           AstraParallelism::kHybridTransformerFwdInBckwd) &&
      workload->model_parallel_npu_group <= 0) {
    return errors.At(line.number,
                     "HYBRID_TRANSFORMER needs 'model_parallel_NPU_group: N'");
  }
  return absl::OkStatus();
}

absl::StatusOr<AstraLayer> ParseLayer(const NumberedLine& line, bool customized,
                                      const LineErrors& errors) {
  const std::vector<absl::string_view>& t = line.tokens;
  size_t expected = kLayerColumns + (customized ? 1 : 0);
  if (t.size() != expected) {
    return errors.At(line.number,
                     absl::StrCat("layer line has ", t.size(),
                                  " columns, expected ", expected));
  }
  AstraLayer layer;
  layer.name = std::string(t[0]);
  layer.line = line.number;
  // t[1] is the unused "dependency" column (-1 in every published workload).
  ASSIGN_OR_RETURN(
      layer.fwd_compute_cycles,
      ParseCount(t[2], "forward compute time", line.number, errors));
  ASSIGN_OR_RETURN(layer.fwd_comm,
                   ParseComm(t[3], t[4], "forward", line.number, errors));
  ASSIGN_OR_RETURN(
      layer.ig_compute_cycles,
      ParseCount(t[5], "input-gradient compute time", line.number, errors));
  ASSIGN_OR_RETURN(layer.ig_comm, ParseComm(t[6], t[7], "input-gradient",
                                            line.number, errors));
  ASSIGN_OR_RETURN(
      layer.wg_compute_cycles,
      ParseCount(t[8], "weight-gradient compute time", line.number, errors));
  ASSIGN_OR_RETURN(layer.wg_comm, ParseComm(t[9], t[10], "weight-gradient",
                                            line.number, errors));
  ASSIGN_OR_RETURN(layer.update_cycles,
                   ParseCount(t[11], "update time", line.number, errors));
  if (customized) {
    layer.own_parallelism = ParseAstraParallelism(t[12]);
    if (!layer.own_parallelism ||
        *layer.own_parallelism == AstraParallelism::kHybridCustomized) {
      return errors.At(
          line.number,
          absl::StrCat("unknown per-layer parallelism '", t[12], "'"));
    }
  }
  return layer;
}

}  // namespace

absl::string_view AstraParallelismName(AstraParallelism p) {
  for (const ParallelismSpelling& s : kParallelisms) {
    if (s.value == p) return s.name;
  }
  return "UNKNOWN";
}

std::optional<AstraParallelism> ParseAstraParallelism(absl::string_view name) {
  for (const ParallelismSpelling& s : kParallelisms) {
    if (name == s.name) return s.value;
  }
  return std::nullopt;
}

absl::StatusOr<AstraWorkload> ParseAstraText(absl::string_view text,
                                             const std::string& path) {
  LineErrors errors(path);
  std::vector<NumberedLine> lines = TokenizeLines(text);
  if (lines.empty()) return errors.At(1, "empty workload file");
  AstraWorkload workload;
  workload.path = path;
  std::optional<AstraParallelism> parallelism =
      ParseAstraParallelism(lines[0].tokens[0]);
  if (!parallelism) {
    return errors.At(
        lines[0].number,
        absl::StrCat("unknown parallelism '", lines[0].tokens[0],
                     "' (expected DATA, MODEL, HYBRID_DATA_MODEL, "
                     "HYBRID_MODEL_DATA, HYBRID_TRANSFORMER[_FWD_IN_BCKWD], "
                     "HYBRID_DLRM[_ENHANCED], HYBRID_CUSTOMIZED, MICRO or "
                     "DISTRIBUTED_INFERENCE)"));
  }
  workload.parallelism = *parallelism;
  RETURN_IF_ERROR(ParseHeaderOptions(lines[0], errors, &workload));
  if (lines.size() < 2)
    return errors.At(lines[0].number + 1, "missing the layer count");
  const NumberedLine& count_line = lines[1];
  int64_t num_layers = 0;
  if (count_line.tokens.size() != 1 ||
      !absl::SimpleAtoi(count_line.tokens[0], &num_layers) || num_layers <= 0) {
    return errors.At(count_line.number,
                     "expected the layer count, a positive integer");
  }
  int64_t available = static_cast<int64_t>(lines.size()) - 2;
  if (available < num_layers) {
    int after = lines.back().number + 1;
    return errors.At(after, absl::StrCat("expected ", num_layers,
                                         " layer lines, found ", available));
  }
  bool customized = workload.parallelism == AstraParallelism::kHybridCustomized;
  for (int64_t i = 0; i < num_layers; ++i) {
    ASSIGN_OR_RETURN(AstraLayer layer,
                     ParseLayer(lines[2 + i], customized, errors));
    workload.layers.push_back(std::move(layer));
  }
  if (available > num_layers) {
    workload.warnings.push_back(absl::StrFormat(
        "%s:%d: %d lines after the %d layers were ignored", path,
        lines[2 + num_layers].number, available - num_layers, num_layers));
  }
  if (workload.dlrm_last_bottom_layer >= num_layers) {
    return errors.At(
        lines[0].number,
        absl::StrCat("DLRM last bottom layer ", workload.dlrm_last_bottom_layer,
                     " is not below the layer count ", num_layers));
  }
  return workload;
}

absl::StatusOr<AstraWorkload> ReadAstraText(const std::string& path) {
  if (IsDirectory(path)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  std::string text;
  RETURN_IF_ERROR(ReadFileMaybeGzip(path, &text));
  return ParseAstraText(text, path);
}

}  // namespace et::convert
