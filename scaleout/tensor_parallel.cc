// Tensor parallelism synthesized from a one-rank trace; see
// tensor_parallel.h and docs/et-sim.md.
#include "scaleout/tensor_parallel.h"

#include <algorithm>
#include <deque>
#include <numeric>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/gradients.h"
#include "scaleout/scaled_cost.h"
#include "scaleout/sequence_parallel.h"

namespace et::scaleout {
namespace {

using ChakraProtoMsg::Node;

// How far a column's output is followed looking for its row (ops).
constexpr int kMaxPairSearch = 512;

// A 2-D GEMM's operands among a node's recorded input tensors: A at the
// GEMM's first operand, B after it (the inputs before A are single tensors
// in every GEMM form: addmm's bias).
struct Operands {
  const IoTensor* a = nullptr;
  const IoTensor* b = nullptr;
};

Operands OperandsOf(const NodeModel& model, NodeIndex i) {
  Operands out;
  const GemmShape* g = model.gemm(i);
  absl::Span<const IoTensor> in = model.recorded_tensors(i, false);
  const size_t a = g == nullptr ? 0 : static_cast<size_t>(g->a_input);
  if (g == nullptr || a + 1 >= in.size()) return out;
  out.a = &in[a];
  out.b = &in[a + 1];
  return out;
}

bool IsForward(const NodeModel& model, NodeIndex i) {
  return model.role(i) == NodeRole::kOther;
}

// The pair search and the storage walk over one rank's model.
class Sharder {
 public:
  // `tp` over `recorded_tp`: the widths recorded are 1/recorded_tp.
  Sharder(const NodeModel& model, int64_t tp, int64_t recorded_tp = 1)
      : model_(model), tp_(tp), recorded_tp_(recorded_tp) {
    for (const StorageLife& l : FindStorageLives(model).lives) {
      if (l.kind == MemoryKind::kParameter) parameters_.insert(l.storage_id);
      if (l.persistent) persistent_.insert(l.storage_id);
    }
    for (NodeIndex i = 0; i < model.size(); ++i)
      has_device_ |= !model.on_host(i) && model.kind(i) != NodeKind::kMetadata;
  }

  // Seeds the split parameters from every column/row pair.
  void FindPairs() {
    for (NodeIndex c = 0; c < model_.size(); ++c) {
      // A row-parallel layer is no column of the next pair (the MLP's down
      // projection returns to the width the next up projection leaves).
      if (IsForward(model_, c) && IsLinearShaped(c)) ++linear_shaped_;
      if (!IsForward(model_, c) || rows_.contains(c) || !IsParameterGemm(c))
        continue;
      const std::optional<NodeIndex> r = RowOf(c);
      if (!r) continue;
      rows_.insert(*r);
      width_gcd_ =
          std::gcd(width_gcd_, std::gcd(model_.gemm(c)->n, model_.gemm(*r)->k));
      ++found_pairs_;
      if (model_.gemm(c)->n * recorded_tp_ % tp_ != 0 ||
          model_.gemm(*r)->k * recorded_tp_ % tp_ != 0) {
        ++indivisible_pairs_;
        continue;
      }
      ++pairs_;
      // C's weight and bias: every parameter it reads but its input.
      const Operands co = OperandsOf(model_, c);
      for (const IoTensor& t : model_.recorded_tensors(c, false)) {
        if (&t != co.a && parameters_.contains(t.storage_id)) {
          seeds_.insert(t.storage_id);
          seed_sizes_.insert(t.num_elems);
        }
      }
      seeds_.insert(OperandsOf(model_, *r).b->storage_id);
      seed_sizes_.insert(OperandsOf(model_, *r).b->num_elems);
      seed_elems_.insert(co.b->num_elems);
      seed_elems_.insert(OperandsOf(model_, *r).b->num_elems);
    }
  }
  const absl::flat_hash_set<uint64_t>& seeds() const { return seeds_; }
  // The split parameters' sizes (elements), weights and biases.
  const absl::flat_hash_set<uint64_t>& seed_sizes() const {
    return seed_sizes_;
  }

  // Walks the nodes twice: a persistent storage a split op writes (the
  // parameters' gradients and optimizer state) is one tensor the whole
  // trace, split in every step, so its first use in a step (zero_grad's
  // zero_, the optimizer's exp_avg.mul_) is split too.
  void Walk() {
    WalkOnce();
    for (const auto& [storage, step] : split_)
      if (persistent_.contains(storage)) persistent_split_.insert(storage);
    split_.clear();
    made_.clear();
    made_split_.clear();
    partial_.clear();
    split_ops_ = unplaced_ = 0;
    WalkOnce();
  }

  // Walks the nodes in id order (the order they ran), splitting what reads
  // split storages (see the header).
  void WalkOnce() {
    op_split_.assign(model_.size(), false);
    for (NodeIndex i = 0; i < model_.size(); ++i) {
      if (IsCommunication(model_.kind(i))) continue;
      // A GPU op runs the work of the host op that launched it (a linked
      // trace's kernels follow every host op): split with it.
      if (!model_.on_host(i)) {
        if (LaunchedBySplitOp(i)) {
          op_split_[i] = true;
          ++split_ops_;
        }
        continue;
      }
      int64_t split_bytes = 0, bytes = 0;
      for (const IoTensor& t : model_.recorded_tensors(i, false)) {
        const int64_t n = static_cast<int64_t>(t.bytes());
        bytes += n;
        if (IsSplit(t.storage_id, i)) split_bytes += n;
      }
      if (split_bytes == 0 && !ReadsHiddenSplitCopy(i)) {
        ResetOutputs(i);
        continue;
      }
      bool outputs_split = true;
      if (model_.gemm(i) != nullptr) {
        const Operands o = OperandsOf(model_, i);
        const bool a = o.a != nullptr && IsSplit(o.a->storage_id, i);
        const bool b = o.b != nullptr && (IsSplit(o.b->storage_id, i) ||
                                          IsHiddenSplitCopy(*o.b, i));
        if (!a && !b) {
          ++unplaced_;
          ResetOutputs(i);
          continue;
        }
        if (a && b && model_.gemm(i)->batch == 1) {
          outputs_split = false;  // sums over the split dimension
          partial_.push_back(i);
        }
      } else if (2 * split_bytes < bytes) {
        ++unplaced_;
        ResetOutputs(i);
        continue;
      }
      op_split_[i] = true;
      ++split_ops_;
      for (const IoTensor& t : model_.recorded_tensors(i, true))
        MarkOutput(i, t.storage_id, outputs_split);
    }
  }

  // Split at the end: the parameters and what the last step split.
  absl::flat_hash_set<uint64_t> SplitAtEnd() const {
    absl::flat_hash_set<uint64_t> out = seeds_;
    out.insert(persistent_split_.begin(), persistent_split_.end());
    int64_t last = -1;
    for (const auto& [storage, step] : split_) last = std::max(last, step);
    for (const auto& [storage, step] : split_)
      if (step == last) out.insert(storage);
    return out;
  }
  const absl::flat_hash_set<std::pair<NodeIndex, uint64_t>>& made_split()
      const {
    return made_split_;
  }
  const std::vector<bool>& op_split() const { return op_split_; }
  const std::vector<NodeIndex>& partial() const { return partial_; }
  bool has_device() const { return has_device_; }
  int64_t pairs() const { return pairs_; }
  int64_t indivisible_pairs() const { return indivisible_pairs_; }
  int64_t found_pairs() const { return found_pairs_; }
  int64_t linear_shaped() const { return linear_shaped_; }
  size_t parameters() const { return parameters_.size(); }
  int64_t width_gcd() const { return width_gcd_; }
  int64_t split_ops() const { return split_ops_; }
  int64_t unplaced() const { return unplaced_; }
  int64_t parameter_gemms() const { return parameter_gemms_; }

 private:
  // A storage `i` writes: split when `split`; else, when `i` did not read
  // it, a new tensor (the trace's storage ids are addresses, reused after a
  // free) that is not split.
  void MarkOutput(NodeIndex i, uint64_t storage, bool split) {
    if (storage == 0) return;
    bool fresh = true;
    for (const IoTensor& t : model_.recorded_tensors(i, false))
      fresh &= t.storage_id != storage;
    if (fresh) made_[storage] = model_.step(i);
    if (split) {
      split_[storage] = model_.step(i);
      made_split_.insert({i, storage});
    } else if (fresh) {
      split_.erase(storage);
    }
  }

  // A GEMM operand no recorded op made (made inside a folded op: autocast's
  // copy of a weight, saved for the backward pass) with the elements of a
  // split parameter: that parameter's copy, split with it.
  bool IsHiddenSplitCopy(const IoTensor& t, NodeIndex i) const {
    if (t.storage_id == 0 || parameters_.contains(t.storage_id) ||
        !seed_elems_.contains(t.num_elems))
      return false;
    auto it = made_.find(t.storage_id);
    return it == made_.end() || it->second != model_.step(i);
  }
  bool ReadsHiddenSplitCopy(NodeIndex i) const {
    if (model_.gemm(i) == nullptr) return false;
    const Operands o = OperandsOf(model_, i);
    return o.b != nullptr && IsHiddenSplitCopy(*o.b, i);
  }

  bool LaunchedBySplitOp(NodeIndex i) const {
    for (auto deps : {model_.data_deps(i), model_.ctrl_deps(i)})
      for (NodeIndex d : deps)
        if (model_.on_host(d) && op_split_[d]) return true;
    return false;
  }

  // Whether `storage` holds a split tensor when node `i` reads it: a split
  // parameter, or a tensor split in i's own step. A mark from an earlier step
  // is not trusted: the trace's storage ids are addresses, and a tensor made
  // inside a folded op (no recorded output resets the mark) can get the
  // address of a freed split one (a gradient freed by zero_grad).
  bool IsSplit(uint64_t storage, NodeIndex i) const {
    if (seeds_.contains(storage) || persistent_split_.contains(storage))
      return true;
    auto it = split_.find(storage);
    if (it == split_.end()) return false;
    const int64_t step = model_.step(i);
    return it->second == step || it->second < 0 || step < 0;
  }
  void ResetOutputs(NodeIndex i) {
    for (const IoTensor& t : model_.recorded_tensors(i, true))
      MarkOutput(i, t.storage_id, false);
  }

  // A 2-D GEMM with both operands recorded (a linear layer if the second is
  // a parameter).
  bool IsLinearShaped(NodeIndex i) const {
    const GemmShape* g = model_.gemm(i);
    return g != nullptr && g->batch == 1 && OperandsOf(model_, i).b != nullptr;
  }

  // A 2-D GEMM whose second operand is a parameter: a linear layer.
  bool IsParameterGemm(NodeIndex i) {
    const GemmShape* g = model_.gemm(i);
    if (g == nullptr || g->batch != 1) return false;
    const Operands o = OperandsOf(model_, i);
    return o.b != nullptr && parameters_.contains(o.b->storage_id);
  }

  // The first linear layer C's output reaches through forward ops that
  // returns to C's input width; nullopt when a path meets another linear
  // layer first, or none is found.
  std::optional<NodeIndex> RowOf(NodeIndex c) {
    ++parameter_gemms_;
    const int64_t width = model_.gemm(c)->k;
    std::deque<NodeIndex> queue = {c};
    absl::flat_hash_set<NodeIndex> seen = {c};
    std::optional<NodeIndex> row;
    int visited = 0;
    while (!queue.empty() && ++visited < kMaxPairSearch) {
      const NodeIndex n = queue.front();
      queue.pop_front();
      for (NodeIndex u : model_.deps().data_users(n)) {
        if (!IsForward(model_, u) || !seen.insert(u).second) continue;
        if (IsParameterGemm(u)) {
          if (model_.gemm(u)->n == width && (!row || u < *row)) row = u;
          continue;  // a path ends at the next linear layer
        }
        queue.push_back(u);
      }
    }
    return row;
  }

  const NodeModel& model_;
  const int64_t tp_;
  const int64_t recorded_tp_;
  absl::flat_hash_set<uint64_t> parameters_;
  absl::flat_hash_set<uint64_t> persistent_;  // held the whole trace
  // Persistent storages split ops wrote: the split parameters' gradients and
  // optimizer state.
  absl::flat_hash_set<uint64_t> persistent_split_;
  // Split storages, with the step that split them (-1: unstamped).
  absl::flat_hash_map<uint64_t, int64_t> split_;
  absl::flat_hash_set<uint64_t> seeds_;       // the split parameters
  absl::flat_hash_set<NodeIndex> rows_;       // the pairs' row-parallel layers
  absl::flat_hash_set<uint64_t> seed_elems_;  // the split weights' sizes
  absl::flat_hash_set<uint64_t> seed_sizes_;  // and biases' too
  // Storages an op wrote, with the step it ran in.
  absl::flat_hash_map<uint64_t, int64_t> made_;
  absl::flat_hash_set<std::pair<NodeIndex, uint64_t>> made_split_;
  std::vector<bool> op_split_;
  std::vector<NodeIndex> partial_;
  bool has_device_ = false;
  int64_t found_pairs_ = 0, width_gcd_ = 0, linear_shaped_ = 0;
  int64_t pairs_ = 0, indivisible_pairs_ = 0, split_ops_ = 0, unplaced_ = 0;
  int64_t parameter_gemms_ = 0;
};

// The GPU ops host op `h` launched (its device users), in a linked trace.
std::vector<NodeIndex> Launched(const NodeModel& model, const Graph& graph,
                                NodeIndex h) {
  std::vector<NodeIndex> out;
  for (auto users : {graph.data_users(h), graph.ctrl_users(h)}) {
    for (NodeIndex u : users) {
      const NodeKind kind = model.kind(u);
      if (!model.on_host(u) &&
          (kind == NodeKind::kKernel || kind == NodeKind::kGemm ||
           kind == NodeKind::kMemory))
        out.push_back(u);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The recorded all-reduce of each partial-sum GEMM (a re-split trace's
// row layers, and column layers' input gradients): the first recorded
// all-reduce after it, in its step and before the next partial-sum GEMM,
// that moves its output's bytes (Megatron may reduce a copy: the recorder's
// clones the output first). nullopt where none.
std::vector<std::optional<NodeIndex>> RecordedReduces(
    const NodeModel& model, const std::vector<NodeIndex>& partial) {
  std::vector<std::optional<NodeIndex>> out(partial.size());
  for (size_t k = 0; k < partial.size(); ++k) {
    const NodeIndex p = partial[k];
    absl::Span<const IoTensor> written = model.recorded_tensors(p, true);
    if (written.empty()) continue;
    const int64_t bytes = static_cast<int64_t>(written[0].bytes());
    const NodeIndex end = k + 1 < partial.size() && partial[k + 1] > p
                              ? partial[k + 1]
                              : static_cast<NodeIndex>(model.size());
    for (NodeIndex j = p + 1; j < end && model.step(j) == model.step(p); ++j) {
      if (model.kind(j) == NodeKind::kCollective && !model.synthesized(j) &&
          model.comm(j)->type == ChakraProtoMsg::ALL_REDUCE &&
          model.comm(j)->bytes == bytes) {
        out[k] = j;
        break;
      }
    }
  }
  return out;
}

// A re-split trace's recorded gradient syncs (DDP's buckets): each holds
// the gradients at the recorded tp, so its bytes scale with what they are at
// the new one, the split gradients' R/T and the others' whole (the bytes of
// all the last iteration's gradients, new over recorded: exact when every
// bucket holds the same share of split gradients). A gradient is split when
// its storage is split at the end and it has a split parameter's size.
// Returns the syncs scaled.
int64_t ScaleRecordedGradientSyncs(const NodeModel& model,
                                   const absl::flat_hash_set<uint64_t>& split,
                                   const absl::flat_hash_set<uint64_t>& sizes,
                                   int64_t num, int64_t den,
                                   std::vector<Node>* nodes) {
  absl::StatusOr<GradientsResult> grads = FindGradients(model);
  if (!grads.ok() || grads->iterations.empty()) return 0;
  int64_t recorded = 0, now = 0;
  for (const Gradient& g : grads->iterations.back().gradients) {
    recorded += g.bytes;
    now += g.storage_id != 0 && split.contains(g.storage_id) &&
                   sizes.contains(static_cast<uint64_t>(g.num_elems))
               ? ScaledValue(g.bytes, num, den)
               : g.bytes;
  }
  if (recorded <= 0 || recorded == now) return 0;
  int64_t scaled = 0;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    if (model.kind(i) != NodeKind::kCollective || !model.comm(i)->grad_sync)
      continue;
    SetInt64((*nodes)[i].mutable_attr(), attr::kCommSize,
             ScaledValue(model.comm(i)->bytes, now, recorded));
    ++scaled;
  }
  return scaled;
}

ChakraProtoMsg::GlobalMetadata WithTpGroup(ChakraProtoMsg::GlobalMetadata meta,
                                           const TpShardOptions& options) {
  std::vector<ProcessGroup> groups = DecodeProcessGroups(meta.attr());
  std::string desc = "tensor_parallel (synthesized)";
  for (const ProcessGroup& g : groups)
    if (g.name == options.pg_name && options.recorded_tp > 1) desc = g.desc;
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [&](const ProcessGroup& g) {
                                return g.name == options.pg_name;
                              }),
               groups.end());
  ProcessGroup tp;
  tp.name = options.pg_name;
  tp.desc = desc;
  tp.size = options.tp;
  tp.ranks = options.tp_ranks;
  groups.push_back(tp);
  EncodeProcessGroups(groups, meta.mutable_attr());
  return meta;
}

// Adds a synthesized collective on the tensor-parallel group after its
// producer, before its readers. On a GPU it is queued behind the producer's
// kernels, and the readers' kernels wait for it; the host runs on.
struct CollectiveAdder {
  const NodeModel& model;
  const Graph& graph;
  const std::string& pg_name;
  bool comm_on_host;

  void operator()(const SpCollective& c, const char* name,
                  ChakraProtoMsg::CollectiveCommType type, uint64_t id,
                  std::vector<Node>* nodes) const {
    Node n;
    n.set_id(id);
    n.set_name(name);
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    if (c.producer) {
      n.add_data_deps(model.id(*c.producer));
      for (NodeIndex k : Launched(model, graph, *c.producer))
        n.add_data_deps(model.id(k));
    }
    auto* attrs = n.mutable_attr();
    SetBool(attrs, attr::kIsCpuOp, false);
    if (comm_on_host) SetBool(attrs, attr::kCommOnHost, true);
    SetInt64(attrs, attr::kCommType, type);
    SetInt64(attrs, attr::kCommSize, c.bytes);
    SetString(attrs, attr::kPgName, pg_name);
    if (c.step >= 0) SetInt64(attrs, attr::kStep, c.step);
    if (c.dtype != Dtype::kUnknown)
      SetString(attrs, attr::kDtype, DtypeName(c.dtype));
    SetBool(attrs, attr::kSynthesized, true);
    for (NodeIndex u : c.readers) {
      const std::vector<NodeIndex> kernels = Launched(model, graph, u);
      if (kernels.empty()) (*nodes)[u].add_data_deps(n.id());
      for (NodeIndex k : kernels) (*nodes)[k].add_data_deps(n.id());
    }
    nodes->push_back(std::move(n));
  }
};

}  // namespace

namespace {

// The model the pair search reads: tensors, and GEMM shapes on host ops.
NodeModel PairModel(const Graph& graph) {
  ModelOptions model_options;
  model_options.keep_io = true;
  model_options.keep_tensors = true;
  model_options.host_gemms = true;
  return NodeModel::FromGraph(graph, model_options);
}

// What the trace lacks when no pair is found, from the first missing piece:
// parameters (a persistent storage the optimizer updates and forward or
// backward ops read: step/storage_lives.h), 2-D GEMMs with their operands,
// GEMMs reading a parameter, divisible widths, a row layer after a column.
std::string NoPairReason(const NodeModel& model, const Sharder& sharder) {
  int64_t optimizer = 0, backward = 0;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    optimizer += model.role(i) == NodeRole::kOptimizer;
    backward += model.role(i) == NodeRole::kBackward;
  }
  if (sharder.parameters() == 0) {
    return absl::StrFormat(
        "the trace has %d 2-D GEMMs with recorded operands but no parameter to "
        "split: a parameter is a persistent tensor the optimizer updates and "
        "the forward or backward pass reads, and the trace has %d optimizer "
        "ops and %d backward ops (record a whole training step: forward, "
        "backward and optimizer.step(), with the execution trace observer)",
        sharder.linear_shaped(), optimizer, backward);
  }
  if (sharder.parameter_gemms() == 0) {
    return absl::StrFormat(
        "the trace has %d parameters and %d 2-D GEMMs with recorded operands, "
        "none of which reads a parameter as its weight (%s)",
        sharder.parameters(), sharder.linear_shaped(),
        sharder.linear_shaped() == 0
            ? "a trace needs its GEMMs' tensors: an execution trace, not a "
              "Kineto trace alone"
            : "linear layers computed inside fused or compiled regions are not "
              "seen");
  }
  if (sharder.indivisible_pairs() > 0) {
    return absl::StrFormat(
        "the trace has %d linear layers (2-D GEMMs of a parameter) and the %d "
        "pairs found have widths tp does not divide",
        sharder.parameter_gemms(), sharder.indivisible_pairs());
  }
  return absl::StrFormat(
      "the trace has %d linear layers (2-D GEMMs of a parameter) and none "
      "whose output returns, through its data dependencies, to its input "
      "width in a later linear layer",
      sharder.parameter_gemms());
}

}  // namespace

TpWidths TensorParallelWidths(const Graph& graph) {
  const NodeModel model = PairModel(graph);
  Sharder sharder(model, 1);
  sharder.FindPairs();
  TpWidths out;
  out.pairs = sharder.found_pairs();
  out.width_gcd = sharder.width_gcd();
  out.parameter_gemms = sharder.parameter_gemms();
  if (out.pairs == 0) out.missing = NoPairReason(model, sharder);
  return out;
}

absl::StatusOr<TpShardResult> ShardTensorParallel(
    const Graph& graph, const TpShardOptions& options) {
  if (options.tp < 2 && options.recorded_tp > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the trace records tp=%d and tp=1 would merge its shards: its "
        "recorded all-reduces would have to go, and a one-rank trace is the "
        "source for that; not done",
        options.recorded_tp));
  }
  if (options.tp < 2)
    return absl::InvalidArgumentError("tensor parallelism needs tp >= 2");
  if (options.recorded_tp < 1 || options.recorded_tp == options.tp)
    return absl::InvalidArgumentError("re-split needs another tp");
  const NodeModel model = PairModel(graph);
  if (options.sequence_parallel && options.recorded_tp > 1) {
    if (const int64_t n = RecordedReduceScatters(model, options.pg_name)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "--sequence-parallel: the trace records sequence parallelism "
          "already (%d reduce-scatters on its tp=%d group '%s'); re-splitting "
          "a recorded sequence-parallel split is not done (record it without "
          "sequence parallelism, or drop --sequence-parallel)",
          n, options.recorded_tp, options.pg_name));
    }
  }
  Sharder sharder(model, options.tp, options.recorded_tp);
  sharder.FindPairs();
  const std::string what =
      options.recorded_tp > 1
          ? absl::StrFormat("to re-split from the recorded tp=%d to tp=%d",
                            options.recorded_tp, options.tp)
          : absl::StrFormat("to split over tp=%d", options.tp);
  if (sharder.pairs() == 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("no column-parallel/row-parallel linear pair %s: %s",
                        what, NoPairReason(model, sharder)));
  }
  sharder.Walk();
  TpShardResult result;
  std::vector<Node> nodes = graph.nodes();
  uint64_t next_id = 0;
  for (const Node& n : nodes) next_id = std::max<uint64_t>(next_id, n.id());
  ++next_id;
  for (NodeIndex i = 0; i < model.size(); ++i)
    if (sharder.op_split()[i])
      ScaleNodeCost(&nodes[i], options.recorded_tp, options.tp);
  std::optional<SpPlan> sp;
  if (options.sequence_parallel) {
    sp = PlanSequenceParallel(model, sharder.op_split(), sharder.partial(),
                              sharder.seeds());
    for (NodeIndex i = 0; i < model.size(); ++i)
      if (sp->seq_split[i] && !sharder.op_split()[i])
        ScaleNodeCost(&nodes[i], 1, options.tp);
  }
  const CollectiveAdder add{model, graph, options.pg_name,
                            !sharder.has_device()};
  const std::vector<std::optional<NodeIndex>> recorded =
      options.recorded_tp > 1
          ? RecordedReduces(model, sharder.partial())
          : std::vector<std::optional<NodeIndex>>(sharder.partial().size());
  for (size_t k = 0; k < sharder.partial().size(); ++k) {
    const NodeIndex p = sharder.partial()[k];
    if (recorded[k]) {
      ++result.recorded_all_reduces;
      // Sequence parallelism reduce-scatters the partial sums instead.
      if (sp) {
        SetInt64(nodes[*recorded[k]].mutable_attr(), attr::kCommType,
                 ChakraProtoMsg::REDUCE_SCATTER);
        ++result.reduce_scatters;
      }
      continue;
    }
    absl::Span<const IoTensor> out = model.recorded_tensors(p, true);
    SpCollective c;
    c.producer = p;
    c.bytes = out.empty() ? 0 : static_cast<int64_t>(out[0].bytes());
    c.dtype = model.gemm(p)->dtype;
    c.step = model.step(p);
    // What read the partial sums reads the reduced ones.
    for (NodeIndex u : graph.data_users(p))
      if (model.on_host(u)) c.readers.push_back(u);
    if (sp) {
      add(c, "tp:reduce_scatter", ChakraProtoMsg::REDUCE_SCATTER, next_id++,
          &nodes);
      ++result.reduce_scatters;
    } else {
      add(c, "tp:all_reduce", ChakraProtoMsg::ALL_REDUCE, next_id++, &nodes);
      ++result.all_reduces;
    }
    result.all_reduce_bytes += c.bytes;
  }
  if (sp) {
    for (const SpCollective& c : sp->gathers) {
      add(c, "tp:all_gather", ChakraProtoMsg::ALL_GATHER, next_id++, &nodes);
      ++result.all_gathers;
      result.all_gather_bytes += c.bytes;
    }
    for (const SpCollective& c : sp->grad_reduces) {
      add(c, "tp:all_reduce", ChakraProtoMsg::ALL_REDUCE, next_id++, &nodes);
      ++result.all_reduces;
      result.all_reduce_bytes += c.bytes;
    }
    result.seq_split_ops = sp->seq_split_ops;
    result.made_seq_split = std::move(sp->made_seq_split);
  }
  if (options.recorded_tp > 1) {
    result.scaled_gradient_syncs = ScaleRecordedGradientSyncs(
        model, sharder.SplitAtEnd(), sharder.seed_sizes(), options.recorded_tp,
        options.tp, &nodes);
  }
  result.pairs = sharder.pairs();
  result.tp = options.tp;
  result.recorded_tp = options.recorded_tp;
  result.split_ops = sharder.split_ops();
  result.unplaced_ops = sharder.unplaced();
  result.split_storages = sharder.SplitAtEnd();
  result.made_split = sharder.made_split();
  result.graph =
      Graph::Build(WithTpGroup(graph.metadata(), options), std::move(nodes));
  const std::string factor =
      options.recorded_tp > 1
          ? absl::StrFormat("scaled by %d/%d", options.recorded_tp, options.tp)
          : absl::StrFormat("split by %d", options.tp);
  const std::string source =
      options.recorded_tp > 1
          ? absl::StrFormat(
                "re-split from the recorded tp=%d, its %d all-reduces of "
                "partial sums kept%s on the group resized to %d, %d recorded "
                "gradient syncs rescaled to the re-split gradients, ",
                options.recorded_tp, result.recorded_all_reduces,
                sp ? " as reduce-scatters" : "", options.tp,
                result.scaled_gradient_syncs)
          : std::string();
  result.note = absl::StrFormat(
      "tensor parallelism: synthesized tp=%d (Megatron's column/row-parallel "
      "split, Shoeybi et al. 2019; group '%s'): %s%d linear-layer pairs, %d "
      "ops %s, %d all-reduces of partial sums (%d bytes) added; %d ops "
      "read split tensors but less than half their bytes and were "
      "replicated; every other op is replicated",
      options.tp, options.pg_name, source, result.pairs, result.split_ops,
      factor, result.all_reduces, result.all_reduce_bytes, result.unplaced_ops);
  if (sp) {
    absl::StrAppendFormat(
        &result.note,
        "; sequence parallelism (Megatron's, Korthikanti et al. 2022): %d "
        "reduce-scatters in place of the all-reduces, %d all-gathers (%d "
        "bytes) of the sequence-split activation, %d ops split along the "
        "sequence by %d, %d all-reduces of their parameters' gradients",
        result.reduce_scatters, result.all_gathers, result.all_gather_bytes,
        result.seq_split_ops, options.tp, sp->grad_reduces.size());
  }
  return result;
}

std::vector<StorageLife> LivesAtTensorParallel(std::vector<StorageLife> lives,
                                               const TpShardResult& split,
                                               int64_t tp) {
  const int64_t recorded_tp = std::max<int64_t>(split.recorded_tp, 1);
  if (tp <= 1 || tp == recorded_tp) return lives;
  for (StorageLife& l : lives) {
    if (l.storage_id == 0) continue;
    const bool is_split =
        l.persistent ? split.split_storages.contains(l.storage_id)
                     : split.made_split.contains({l.first, l.storage_id});
    // A sequence shard is 1/T of what every recorded rank held whole.
    if (is_split) {
      l.bytes = (l.bytes * recorded_tp + tp - 1) / tp;
    } else if (!l.persistent &&
               split.made_seq_split.contains({l.first, l.storage_id})) {
      l.bytes = (l.bytes + tp - 1) / tp;
    }
  }
  return lives;
}

}  // namespace et::scaleout
