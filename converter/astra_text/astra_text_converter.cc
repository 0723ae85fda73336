// ASTRA-sim text workload -> Chakra graphs; see astra_text_converter.h and the
// section "ASTRA-sim text workloads" of docs/et-convert.md for the dependency
// rules, which follow the issue order of ASTRA-sim 1.0's Workload::iterate_*
// state machines.
#include "converter/astra_text/astra_text_converter.h"

#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "model/comm_type.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_writer.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;
using Deps = std::vector<uint64_t>;

// Which collective columns a strategy issues (ASTRA-sim 1.0
// decode_involved_dimensions and the iterate_* loops): data parallelism only
// reduces weight gradients, model parallelism only exchanges activations and
// input gradients, hybrids do all three.
struct PhaseUse {
  bool fwd = false, ig = false, wg = false;
};

PhaseUse UseOf(AstraParallelism p) {
  switch (p) {
    case AstraParallelism::kData:
    case AstraParallelism::kMicro:
      return {false, false, true};
    case AstraParallelism::kModel:
    case AstraParallelism::kDistributedInference:
      return {true, true, false};
    default:
      return {true, true, true};
  }
}

bool IsDlrm(AstraParallelism p) {
  return p == AstraParallelism::kHybridDlrm ||
         p == AstraParallelism::kHybridDlrmEnhanced;
}

// Appends nodes with dense ascending ids; every dep points to an earlier node.
class RankGraphWriter {
 public:
  RankGraphWriter(const AstraTextOptions& options, std::vector<Node>* nodes)
      : options_(options), nodes_(nodes) {}

  uint64_t AddComp(const std::string& name, int64_t cycles, const Deps& deps,
                   const char* phase, int pass, int layer) {
    Node& node =
        Append(name, ChakraProtoMsg::COMP_NODE, deps, phase, pass, layer);
    int64_t ns = std::llround(static_cast<double>(cycles) * options_.cycle_ns);
    // Whole microseconds, at least 1 for non-zero work so consumers that skip
    // zero-time nodes keep it; duration_ns keeps the exact value.
    uint64_t us = static_cast<uint64_t>(std::llround(ns / 1000.0));
    if (us == 0 && ns > 0) us = 1;
    node.set_duration_micros(us);
    SetInt64(node.mutable_attr(), attr::kDurationNs, ns);
    return node.id();
  }

  // Adds the collective(s) of `comm` and, when the layer has an update time,
  // the delay ASTRA-sim adds after each collective. Returns the id dependents
  // must wait for.
  uint64_t AddComm(const std::string& name, const AstraComm& comm,
                   int64_t update_cycles, Deps deps, const char* phase,
                   int pass, int layer) {
    std::vector<ChakraProtoMsg::CollectiveCommType> types;
    if (comm.kind == AstraComm::Kind::kAllReduceAllToAll) {
      types = {ChakraProtoMsg::ALL_REDUCE, ChakraProtoMsg::ALL_TO_ALL};
    } else {
      types = {comm.type};
    }
    uint64_t last = 0;
    for (ChakraProtoMsg::CollectiveCommType type : types) {
      Node& node =
          Append(absl::StrCat(name, ".", CommTypeName(type)),
                 ChakraProtoMsg::COMM_COLL_NODE, deps, phase, pass, layer);
      SetInt64(node.mutable_attr(), attr::kCommType, type);
      SetInt64(node.mutable_attr(), attr::kCommSize, comm.size_bytes);
      last = node.id();
      deps = {last};
    }
    if (update_cycles > 0) {
      last = AddComp(absl::StrCat(name, ".update"), update_cycles, {last},
                     absl::StrCat(phase, "_update").c_str(), pass, layer);
    }
    return last;
  }

 private:
  Node& Append(const std::string& name, ChakraProtoMsg::NodeType type,
               const Deps& deps, absl::string_view phase, int pass, int layer) {
    Node& node = nodes_->emplace_back();
    node.set_id(nodes_->size() - 1);
    node.set_name(name);
    node.set_type(type);
    for (uint64_t d : deps) node.add_data_deps(d);
    SetBool(node.mutable_attr(), attr::kIsCpuOp, false);
    SetInt64(node.mutable_attr(), kAstraPassAttr, pass);
    SetInt64(node.mutable_attr(), kAstraLayerAttr, layer);
    SetString(node.mutable_attr(), kAstraPhaseAttr, phase);
    return node;
  }

  const AstraTextOptions& options_;
  std::vector<Node>* nodes_;
};

// Unrolls the passes of one workload. State carried between passes: the node
// each layer's next forward waits for (its weight-gradient collective) and the
// end of the previous backward pass.
class PassUnroller {
 public:
  PassUnroller(const AstraWorkload& w, RankGraphWriter* g)
      : w_(w), g_(g), wg_done_(w.layers.size()) {}

  void Unroll(int passes) {
    for (int p = 0; p < passes; ++p) {
      if (w_.parallelism == AstraParallelism::kMicro) {
        Micro(p);
        continue;
      }
      Deps cursor = Forward(p);
      if (w_.parallelism == AstraParallelism::kDistributedInference) {
        pass_tail_ = cursor;
      } else if (IsDlrm(w_.parallelism) ||
                 w_.parallelism == AstraParallelism::kData) {
        BackwardWeightFirst(p, cursor);
      } else {
        BackwardInputFirst(p, cursor);
      }
    }
  }

 private:
  PhaseUse Use(const AstraLayer& layer) const {
    return UseOf(layer.own_parallelism.value_or(w_.parallelism));
  }
  std::string Name(int p, const AstraLayer& layer,
                   absl::string_view phase) const {
    return absl::StrCat("p", p, ":", layer.name, ":", phase);
  }

  // MICRO: every pass issues each layer's weight-gradient collective at once
  // (ASTRA-sim's iterate_micro_benchmark issues them all without waiting).
  void Micro(int p) {
    for (size_t l = 0; l < w_.layers.size(); ++l) {
      const AstraLayer& layer = w_.layers[l];
      if (!layer.wg_comm.active()) continue;
      g_->AddComm(Name(p, layer, "wg_comm"), layer.wg_comm, layer.update_cycles,
                  {}, "wg_comm", p, l);
    }
  }

  // Layer by layer; a forward collective blocks the next layer, except DLRM's
  // embedding all-to-all, which only the first top-MLP layer waits for.
  Deps Forward(int p) {
    Deps cursor = pass_tail_;
    uint64_t dlrm_all_to_all = 0;
    bool has_dlrm_all_to_all = false;
    for (size_t l = 0; l < w_.layers.size(); ++l) {
      const AstraLayer& layer = w_.layers[l];
      Deps deps = cursor;
      if (wg_done_[l]) deps.push_back(*wg_done_[l]);
      if (has_dlrm_all_to_all &&
          static_cast<int>(l) == w_.dlrm_last_bottom_layer + 1) {
        deps.push_back(dlrm_all_to_all);
      }
      uint64_t comp = g_->AddComp(Name(p, layer, "fwd"),
                                  layer.fwd_compute_cycles, deps, "fwd", p, l);
      cursor = {comp};
      bool dlrm = IsDlrm(w_.parallelism);
      bool issue = dlrm
                       ? layer.fwd_comm.type == ChakraProtoMsg::ALL_TO_ALL &&
                             layer.fwd_comm.kind == AstraComm::Kind::kCollective
                       : Use(layer).fwd;
      if (!issue || !layer.fwd_comm.active()) continue;
      uint64_t done =
          g_->AddComm(Name(p, layer, "fwd_comm"), layer.fwd_comm,
                      layer.update_cycles, {comp}, "fwd_comm", p, l);
      if (dlrm) {
        dlrm_all_to_all = done;
        has_dlrm_all_to_all = true;
      } else {
        cursor = {done};
      }
    }
    return cursor;
  }

  // DATA and DLRM: for each layer from the last, weight gradient (its
  // collective runs in the background until the next pass's forward of that
  // layer), then input gradient (none for layer 0).
  void BackwardWeightFirst(int p, Deps cursor) {
    std::optional<uint64_t> dlrm_ig_comm;
    for (size_t i = w_.layers.size(); i-- > 0;) {
      const AstraLayer& layer = w_.layers[i];
      uint64_t wg = g_->AddComp(Name(p, layer, "wg"), layer.wg_compute_cycles,
                                cursor, "wg", p, i);
      cursor = {wg};
      if (Use(layer).wg && layer.wg_comm.active()) {
        wg_done_[i] = g_->AddComm(Name(p, layer, "wg_comm"), layer.wg_comm,
                                  layer.update_cycles, {wg}, "wg_comm", p, i);
      }
      if (i == 0) break;
      uint64_t ig = g_->AddComp(Name(p, layer, "ig"), layer.ig_compute_cycles,
                                cursor, "ig", p, i);
      cursor = {ig};
      const AstraLayer& embedding = w_.layers[0];
      if (IsDlrm(w_.parallelism) &&
          static_cast<int>(i) == w_.dlrm_last_bottom_layer + 1 &&
          embedding.ig_comm.active()) {
        dlrm_ig_comm =
            g_->AddComm(Name(p, embedding, "ig_comm"), embedding.ig_comm,
                        embedding.update_cycles, {ig}, "ig_comm", p, 0);
      }
    }
    pass_tail_ = cursor;
    // HYBRID_DLRM ends the pass only when the embedding's gradient all-to-all
    // is done; the _ENHANCED variant lets it overlap the next pass.
    if (dlrm_ig_comm && w_.parallelism == AstraParallelism::kHybridDlrm) {
      pass_tail_.push_back(*dlrm_ig_comm);
    }
  }

  // MODEL and the other hybrids: for each layer from the last, input gradient
  // and its collective (none for layer 0), then weight gradient and its
  // collective. The next layer's input gradient waits for this layer's
  // input-gradient collective.
  void BackwardInputFirst(int p, Deps cursor) {
    for (size_t i = w_.layers.size(); i-- > 0;) {
      const AstraLayer& layer = w_.layers[i];
      PhaseUse use = Use(layer);
      uint64_t ig = g_->AddComp(Name(p, layer, "ig"), layer.ig_compute_cycles,
                                cursor, "ig", p, i);
      std::optional<uint64_t> ig_done;
      if (i > 0 && use.ig && layer.ig_comm.active()) {
        ig_done = g_->AddComm(Name(p, layer, "ig_comm"), layer.ig_comm,
                              layer.update_cycles, {ig}, "ig_comm", p, i);
      }
      uint64_t wg = g_->AddComp(Name(p, layer, "wg"), layer.wg_compute_cycles,
                                {ig}, "wg", p, i);
      if (use.wg && layer.wg_comm.active()) {
        wg_done_[i] = g_->AddComm(Name(p, layer, "wg_comm"), layer.wg_comm,
                                  layer.update_cycles, {wg}, "wg_comm", p, i);
      }
      cursor = {wg};
      if (ig_done) cursor.push_back(*ig_done);
    }
    pass_tail_ = cursor;
  }

  const AstraWorkload& w_;
  RankGraphWriter* g_;
  std::vector<std::optional<uint64_t>>
      wg_done_;  // by layer, from the previous pass
  Deps pass_tail_;
};

ChakraProtoMsg::GlobalMetadata MetadataOf(const AstraWorkload& w, int rank,
                                          int num_ranks,
                                          const AstraTextOptions& options) {
  ChakraProtoMsg::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  auto* attrs = metadata.mutable_attr();
  SetString(attrs, attr::kSchema, "astra-sim-text");
  SetString(attrs, attr::kSourceFile, w.path);
  SetInt64(attrs, attr::kRank, rank);
  SetInt64(attrs, attr::kWorldSize, num_ranks);
  SetString(attrs, kAstraParallelismAttr, AstraParallelismName(w.parallelism));
  SetInt64(attrs, kAstraNumLayersAttr, static_cast<int64_t>(w.layers.size()));
  SetInt64(attrs, kAstraPassesAttr, options.num_passes);
  SetDouble(attrs, kAstraCycleNsAttr, options.cycle_ns);
  if (w.model_parallel_npu_group > 0) {
    SetInt64(attrs, kAstraMpGroupAttr, w.model_parallel_npu_group);
  }
  if (w.dlrm_last_bottom_layer >= 0) {
    SetInt64(attrs, kAstraDlrmLastBottomAttr, w.dlrm_last_bottom_layer);
  }
  if (!w.checkpoint_layers.empty()) {
    SetInt64List(attrs, kAstraCheckpointsAttr,
                 std::vector<int64_t>(w.checkpoint_layers.begin(),
                                      w.checkpoint_layers.end()));
  }
  return metadata;
}

void Summarize(const std::vector<Node>& nodes, AstraTextReport* summary) {
  summary->nodes_per_rank = static_cast<int64_t>(nodes.size());
  for (const Node& node : nodes) {
    if (node.type() == ChakraProtoMsg::COMP_NODE) {
      ++summary->comp_nodes_per_rank;
      summary->compute_ns_per_rank +=
          GetInt(node.attr(), attr::kDurationNs).value_or(0);
      continue;
    }
    ++summary->comm_nodes_per_rank;
    auto type = static_cast<ChakraProtoMsg::CollectiveCommType>(
        GetInt(node.attr(), attr::kCommType).value_or(0));
    std::string name(CommTypeName(type));
    ++summary->collectives_by_type[name];
    summary->collective_bytes_by_type[name] +=
        GetInt(node.attr(), attr::kCommSize).value_or(0);
  }
}

}  // namespace

absl::StatusOr<AstraRankGraph> BuildAstraRankGraph(
    const AstraWorkload& workload, int rank, int num_ranks,
    const AstraTextOptions& options) {
  if (options.num_passes < 1) {
    return absl::InvalidArgumentError(
        "the number of passes must be at least 1");
  }
  if (!(options.cycle_ns > 0)) {
    return absl::InvalidArgumentError("cycle_ns must be positive");
  }
  AstraRankGraph graph;
  graph.metadata = MetadataOf(workload, rank, num_ranks, options);
  RankGraphWriter writer(options, &graph.nodes);
  PassUnroller(workload, &writer).Unroll(options.num_passes);
  if (graph.nodes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(workload.path,
                     ": the workload has no work (every collective NONE or "
                     "of size 0 in MICRO mode)"));
  }
  return graph;
}

absl::StatusOr<AstraTextReport> ConvertAstraText(
    const std::string& txt_path, const std::string& out_pattern, int num_ranks,
    const AstraTextOptions& options) {
  if (num_ranks < 1)
    return absl::InvalidArgumentError("--ranks must be at least 1");
  if (num_ranks > 1 && !IsRankPattern(out_pattern)) {
    return absl::InvalidArgumentError(absl::StrCat(
        out_pattern, ": output pattern needs %d for ", num_ranks, " ranks"));
  }
  ASSIGN_OR_RETURN(AstraWorkload workload, ReadAstraText(txt_path));
  AstraTextReport summary;
  summary.input_path = txt_path;
  summary.parallelism = std::string(AstraParallelismName(workload.parallelism));
  summary.num_layers = static_cast<int>(workload.layers.size());
  summary.num_ranks = num_ranks;
  summary.num_passes = options.num_passes;
  summary.warnings = workload.warnings;
  for (int rank = 0; rank < num_ranks; ++rank) {
    ASSIGN_OR_RETURN(AstraRankGraph graph,
                     BuildAstraRankGraph(workload, rank, num_ranks, options));
    if (rank == 0) Summarize(graph.nodes, &summary);
    std::string path = ExpandRankPattern(out_pattern, rank);
    RETURN_IF_ERROR(WriteEtFile(path, graph.metadata, graph.nodes));
    summary.output_paths.push_back(std::move(path));
  }
  return summary;
}

}  // namespace et::convert
