// Expert parallelism synthesized from a one-rank trace; see
// expert_parallel.h and docs/et-sim.md.
#include "scaleout/expert_parallel.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/scaled_cost.h"

namespace et::scaleout {
namespace {

using ChakraProtoMsg::Node;

constexpr int kMaxMlpSearch = 512;  // ops followed from C looking for R
constexpr int64_t kCountBytes = 8;  // an int64 count per expert

// One expert's run in one step.
struct ExpertUse {
  NodeIndex c = 0, r = 0;  // its two linear layers
  int64_t rows = 0;        // tokens it received
  int64_t width = 0;       // hidden size (C's input width)
  int64_t elem_bytes = 0;
  uint64_t source = 0;  // the storage its tokens were gathered from
  std::vector<uint64_t> params;
};

// One mixture-of-experts layer in one step.
struct LayerUse {
  int64_t layer = 0;
  int64_t step = -1;
  std::vector<ExpertUse> experts;  // in the layer's expert order
};

bool IsForward(const NodeModel& m, NodeIndex i) {
  return m.role(i) == NodeRole::kOther;
}
bool IsBackward(const NodeModel& m, NodeIndex i) {
  return m.role(i) == NodeRole::kBackward ||
         m.role(i) == NodeRole::kGradAccumulation;
}

// Finds the layers: see the header.
class ExpertFinder {
 public:
  explicit ExpertFinder(const NodeModel& model) : m_(model) {
    for (const StorageLife& l : FindStorageLives(model).lives) {
      if (l.kind == MemoryKind::kParameter) parameters_.insert(l.storage_id);
      if (l.persistent && l.storage_id != 0) persistent_.insert(l.storage_id);
      if (l.persistent && l.kind == MemoryKind::kParameter)
        parameter_bytes_[l.storage_id] = l.bytes;
    }
  }

  std::vector<LayerUse> Find() {
    // (step, source, widths) -> the MLPs gathering from it.
    std::map<std::tuple<int64_t, uint64_t, int64_t, int64_t>,
             std::vector<ExpertUse>>
        groups;
    absl::flat_hash_set<NodeIndex> rows;
    for (NodeIndex c = 0; c < m_.size(); ++c) {
      if (!m_.on_host(c) || !IsForward(m_, c) || rows.contains(c) ||
          !IsParameterGemm(c))
        continue;
      ++linear_layers_;
      const std::optional<NodeIndex> r = RowOf(c);
      if (!r) continue;
      rows.insert(*r);
      ++mlps_;
      std::optional<ExpertUse> use = Gathered(c, *r);
      if (!use) continue;
      ++gathered_mlps_;
      groups[{m_.step(c), use->source, use->width, m_.gemm(c)->n}].push_back(
          *use);
    }
    std::vector<LayerUse> out;
    absl::flat_hash_map<uint64_t, int64_t> layer_of_first;  // C's weight
    for (auto& [key, uses] : groups) {
      absl::flat_hash_set<uint64_t> weights;
      for (const ExpertUse& u : uses)
        if (!u.params.empty()) weights.insert(u.params.front());
      if (uses.size() < 2 || weights.size() != uses.size()) continue;
      LayerUse layer;
      layer.step = std::get<0>(key);
      const uint64_t first = uses.front().params.front();
      auto [it, added] = layer_of_first.try_emplace(
          first, static_cast<int64_t>(layer_of_first.size()));
      layer.layer = it->second;
      layer.experts = std::move(uses);
      out.push_back(std::move(layer));
    }
    return out;
  }

  const absl::flat_hash_set<uint64_t>& persistent() const {
    return persistent_;
  }
  const absl::flat_hash_map<uint64_t, int64_t>& parameter_bytes() const {
    return parameter_bytes_;
  }
  int64_t linear_layers() const { return linear_layers_; }
  int64_t mlps() const { return mlps_; }
  int64_t gathered_mlps() const { return gathered_mlps_; }

 private:
  struct Operands {
    const IoTensor* a = nullptr;
    const IoTensor* b = nullptr;
  };
  Operands OperandsOf(NodeIndex i) const {
    Operands out;
    const GemmShape* g = m_.gemm(i);
    absl::Span<const IoTensor> in = m_.recorded_tensors(i, false);
    const size_t a = g == nullptr ? 0 : static_cast<size_t>(g->a_input);
    if (g == nullptr || a + 1 >= in.size()) return out;
    out.a = &in[a];
    out.b = &in[a + 1];
    return out;
  }
  bool IsParameterGemm(NodeIndex i) const {
    const GemmShape* g = m_.gemm(i);
    if (g == nullptr || g->batch != 1) return false;
    const Operands o = OperandsOf(i);
    return o.b != nullptr && parameters_.contains(o.b->storage_id);
  }
  // The first linear layer C's output reaches through forward ops whose
  // output width is C's input width.
  std::optional<NodeIndex> RowOf(NodeIndex c) const {
    const int64_t width = m_.gemm(c)->k;
    std::deque<NodeIndex> queue = {c};
    absl::flat_hash_set<NodeIndex> seen = {c};
    std::optional<NodeIndex> row;
    int visited = 0;
    while (!queue.empty() && ++visited < kMaxMlpSearch) {
      const NodeIndex n = queue.front();
      queue.pop_front();
      for (NodeIndex u : m_.deps().data_users(n)) {
        if (!IsForward(m_, u) || !seen.insert(u).second) continue;
        if (IsParameterGemm(u)) {
          if (m_.gemm(u)->n == width && (!row || u < *row)) row = u;
          continue;
        }
        queue.push_back(u);
      }
    }
    return row;
  }
  // C's input as made by an op that gathers it from a larger tensor of the
  // same width and element size; nullopt when it is not.
  std::optional<ExpertUse> Gathered(NodeIndex c, NodeIndex r) const {
    const Operands o = OperandsOf(c);
    if (o.a == nullptr || o.a->storage_id == 0) return std::nullopt;
    std::optional<NodeIndex> maker;
    for (NodeIndex d : m_.data_deps(c)) {
      for (const IoTensor& t : m_.recorded_tensors(d, true))
        if (t.storage_id == o.a->storage_id && (!maker || d > *maker))
          maker = d;
    }
    if (!maker) return std::nullopt;
    const GemmShape& g = *m_.gemm(c);
    const IoTensor* source = nullptr;
    for (const IoTensor& t : m_.recorded_tensors(*maker, false)) {
      if (t.elem_bytes != o.a->elem_bytes || t.num_elems < o.a->num_elems ||
          g.k <= 0 || t.num_elems % static_cast<uint64_t>(g.k) != 0 ||
          t.storage_id == o.a->storage_id || parameters_.contains(t.storage_id))
        continue;
      if (source == nullptr || t.num_elems > source->num_elems) source = &t;
    }
    if (source == nullptr) return std::nullopt;
    ExpertUse use;
    use.c = c;
    use.r = r;
    use.rows = g.m;
    use.width = g.k;
    use.elem_bytes = static_cast<int64_t>(o.a->elem_bytes);
    use.source = source->storage_id;
    use.params.push_back(o.b->storage_id);  // C's weight first
    for (NodeIndex n : {c, r}) {
      for (const IoTensor& t : m_.recorded_tensors(n, false)) {
        if (parameters_.contains(t.storage_id) &&
            std::find(use.params.begin(), use.params.end(), t.storage_id) ==
                use.params.end())
          use.params.push_back(t.storage_id);
      }
    }
    return use;
  }

  const NodeModel& m_;
  absl::flat_hash_set<uint64_t> parameters_;
  absl::flat_hash_set<uint64_t> persistent_;
  absl::flat_hash_map<uint64_t, int64_t> parameter_bytes_;
  int64_t linear_layers_ = 0, mlps_ = 0, gathered_mlps_ = 0;
};

// Which expert (layer x experts + position) each op belongs to.
class ExpertOps {
 public:
  ExpertOps(const NodeModel& model, const std::vector<LayerUse>& uses,
            const absl::flat_hash_set<uint64_t>& persistent, int64_t experts)
      : m_(model), persistent_(persistent) {
    for (const LayerUse& l : uses) {
      for (size_t e = 0; e < l.experts.size(); ++e) {
        const int64_t g = l.layer * experts + static_cast<int64_t>(e);
        const ExpertUse& u = l.experts[e];
        chain_end_[u.c] = {g, u.r};
        r_of_[u.r] = g;
        up_weight_[u.params.front()] = l.layer;
        for (uint64_t p : u.params) owner_[p] = g;
      }
    }
    for (const LayerUse& l : uses) {
      for (size_t e = 0; e < l.experts.size(); ++e) {
        const int64_t g = l.layer * experts + static_cast<int64_t>(e);
        for (NodeIndex n : {l.experts[e].c, l.experts[e].r})
          for (const IoTensor& t : m_.recorded_tensors(n, false))
            if (owner_.contains(t.storage_id) && owner_[t.storage_id] == g)
              param_elems_[g].insert(t.num_elems);
      }
    }
  }

  // Two passes: the first learns which persistent storages (gradients,
  // optimizer state) are whose, the second places every op.
  void Run() {
    Pass(false);
    Pass(true);
  }

  int64_t expert_of(NodeIndex i) const { return member_[i]; }
  bool in_chain(NodeIndex i) const { return chain_[i]; }
  bool token_sized(NodeIndex i) const { return token_sized_[i]; }
  const absl::flat_hash_map<uint64_t, int64_t>& owner() const { return owner_; }
  const std::vector<std::pair<NodeIndex, uint64_t>>& made() const {
    return made_;
  }
  bool input_grad(int64_t layer) const { return input_grad_.contains(layer); }
  int64_t unplaced() const { return unplaced_; }
  bool TokenSizedTensor(int64_t g, const IoTensor& t) const {
    auto it = param_elems_.find(g);
    return t.num_elems > 1 &&
           (it == param_elems_.end() || !it->second.contains(t.num_elems));
  }

 private:
  void Pass(bool final) {
    member_.assign(m_.size(), -1);
    chain_.assign(m_.size(), false);
    token_sized_.assign(m_.size(), false);
    made_.clear();
    unplaced_ = 0;
    absl::flat_hash_map<uint64_t, int64_t> tag;    // storage -> expert
    absl::flat_hash_map<int64_t, NodeIndex> open;  // expert -> its R
    int64_t step = -2;
    for (NodeIndex i = 0; i < m_.size(); ++i) {
      if (IsCommunication(m_.kind(i))) continue;
      if (!m_.on_host(i)) {
        PlaceDeviceOp(i);
        continue;
      }
      if (m_.step(i) != step) {
        step = m_.step(i);
        tag.clear();
        open.clear();
      }
      absl::flat_hash_set<int64_t> candidates;
      bool chain = false;
      if (auto it = chain_end_.find(i); it != chain_end_.end()) {
        candidates.insert(it->second.first);
        open[it->second.first] = it->second.second;
        chain = true;
      } else if (auto r = r_of_.find(i); r != r_of_.end()) {
        candidates.insert(r->second);
        chain = true;
      }
      // What an op updates (a persistent storage) places it before the
      // tensors it reads: the optimizer's temporaries reuse addresses across
      // parameters inside folded ops.
      absl::flat_hash_set<int64_t> owners;
      for (const IoTensor& t : m_.recorded_tensors(i, false)) {
        if (chain) break;
        if (auto o = owner_.find(t.storage_id); o != owner_.end())
          owners.insert(o->second);
      }
      if (!owners.empty()) candidates = owners;
      for (const IoTensor& t : m_.recorded_tensors(i, false)) {
        if (chain || !owners.empty()) break;
        // A scalar (a wrapped number, the optimizer's eps) is no token's.
        if (t.num_elems <= 1) continue;
        auto tg = tag.find(t.storage_id);
        if (tg == tag.end()) continue;
        if (IsForward(m_, i)) {
          auto w = open.find(tg->second);
          if (w == open.end() || i > w->second) continue;
          chain = true;
        }
        candidates.insert(tg->second);
      }
      if (candidates.size() > 1) {
        ++unplaced_;
        chain = false;
      }
      const int64_t g = candidates.size() == 1 ? *candidates.begin() : -1;
      member_[i] = g;
      chain_[i] = g >= 0 && chain;
      // Only what an op placed by its own parameters' storages (or a
      // backward op: the gradient accumulation) updates becomes the
      // expert's: a temporary's tag can be stale (addresses are reused
      // inside folded ops).
      if (g >= 0) Adopt(i, g, final, !owners.empty() || IsBackward(m_, i));
      for (const IoTensor& t : m_.recorded_tensors(i, true)) {
        if (t.storage_id == 0 || persistent_.contains(t.storage_id)) continue;
        bool fresh = true;
        for (const IoTensor& in : m_.recorded_tensors(i, false))
          fresh &= in.storage_id != t.storage_id;
        if (g >= 0 && !r_of_.contains(i)) {
          tag[t.storage_id] = g;
          if (fresh) made_.push_back({i, t.storage_id});
        } else if (fresh) {
          tag.erase(t.storage_id);
        }
      }
      if (g >= 0 && IsBackward(m_, i)) {
        // What the expert's backward ops read (its output's gradient) is
        // the expert's: the bias gradient sums it.
        for (const IoTensor& t : m_.recorded_tensors(i, false))
          if (t.storage_id != 0 && !persistent_.contains(t.storage_id))
            tag[t.storage_id] = g;
      }
    }
  }

  // The persistent storages a placed op touches become its expert's; the
  // op is token-sized when it touches a tensor no parameter's size.
  void Adopt(NodeIndex i, int64_t g, bool final, bool claim) {
    for (bool outputs : {false, true}) {
      for (const IoTensor& t : m_.recorded_tensors(i, outputs)) {
        if (TokenSizedTensor(g, t)) token_sized_[i] = true;
        if (claim && !IsForward(m_, i) && persistent_.contains(t.storage_id))
          owner_.try_emplace(t.storage_id, g);
        if (final && IsBackward(m_, i) && m_.gemm(i) != nullptr &&
            up_weight_.contains(t.storage_id))
          input_grad_.insert(up_weight_.at(t.storage_id));
      }
    }
  }

  // A GPU op runs the work of the host op that launched it.
  void PlaceDeviceOp(NodeIndex i) {
    for (auto deps : {m_.data_deps(i), m_.ctrl_deps(i)}) {
      for (NodeIndex d : deps) {
        if (m_.on_host(d) && member_[d] >= 0) {
          member_[i] = member_[d];
          token_sized_[i] = token_sized_[d];
          return;
        }
      }
    }
  }

  const NodeModel& m_;
  const absl::flat_hash_set<uint64_t>& persistent_;
  absl::flat_hash_map<NodeIndex, std::pair<int64_t, NodeIndex>> chain_end_;
  absl::flat_hash_map<NodeIndex, int64_t> r_of_;
  absl::flat_hash_map<uint64_t, int64_t> up_weight_;  // -> layer
  absl::flat_hash_map<uint64_t, int64_t> owner_;
  absl::flat_hash_map<int64_t, absl::flat_hash_set<uint64_t>> param_elems_;
  absl::flat_hash_set<int64_t> input_grad_;
  std::vector<int64_t> member_;
  std::vector<bool> chain_;
  std::vector<bool> token_sized_;
  std::vector<std::pair<NodeIndex, uint64_t>> made_;
  int64_t unplaced_ = 0;
};

ChakraProtoMsg::GlobalMetadata WithEpGroup(ChakraProtoMsg::GlobalMetadata meta,
                                           const EpShardOptions& options) {
  std::vector<ProcessGroup> groups = DecodeProcessGroups(meta.attr());
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [&](const ProcessGroup& g) {
                                return g.name == options.pg_name;
                              }),
               groups.end());
  ProcessGroup ep;
  ep.name = options.pg_name;
  ep.desc = "expert_parallel (synthesized)";
  ep.size = options.ep;
  ep.ranks = options.ep_ranks;
  groups.push_back(ep);
  EncodeProcessGroups(groups, meta.mutable_attr());
  return meta;
}

// Builds the result graph: costs, order, collectives.
class Rewriter {
 public:
  Rewriter(const NodeModel& model, const Graph& graph,
           const EpShardOptions& options, EpShardResult* result)
      : m_(model), options_(options), result_(result), nodes_(graph.nodes()) {
    for (const Node& n : nodes_)
      next_id_ = std::max<uint64_t>(next_id_, n.id());
    ++next_id_;
  }

  // A collective on the group after `after` (node indices; the ones before
  // it on the host), which `before` then waits for.
  uint64_t AddAllToAll(
      const std::string& name, int64_t bytes, int64_t step,
      const std::vector<uint64_t>& after_ids,
      ChakraProtoMsg::CollectiveCommType type = ChakraProtoMsg::ALL_TO_ALL) {
    Node n;
    n.set_id(next_id_++);
    n.set_name(name);
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    for (uint64_t d : after_ids) n.add_data_deps(d);
    auto* attrs = n.mutable_attr();
    SetBool(attrs, attr::kIsCpuOp, false);
    SetBool(attrs, attr::kCommOnHost, true);
    SetInt64(attrs, attr::kCommType, type);
    SetInt64(attrs, attr::kCommSize, bytes);
    SetString(attrs, attr::kPgName, options_.pg_name);
    if (step >= 0) SetInt64(attrs, attr::kStep, step);
    SetBool(attrs, attr::kSynthesized, true);
    const uint64_t id = n.id();
    added_.push_back(std::move(n));
    if (type == ChakraProtoMsg::ALL_TO_ALL) {
      ++result_->all_to_alls;
      result_->all_to_all_bytes += bytes;
    }
    return id;
  }
  void Wait(NodeIndex i, uint64_t comm_id) { nodes_[i].add_data_deps(comm_id); }
  Node& node(NodeIndex i) { return nodes_[i]; }

  // Runs the host nodes [lo, hi] in `order` (a permutation of them): each
  // one's ctrl dep inside the range becomes its new predecessor.
  void Reorder(NodeIndex lo, NodeIndex hi,
               const std::vector<NodeIndex>& order) {
    if (order.empty()) return;
    auto inside = [&](uint64_t id) {
      std::optional<NodeIndex> k = m_.Find(id);
      return k && *k >= lo && *k <= hi && m_.on_host(*k);
    };
    for (size_t p = 0; p < order.size(); ++p) {
      Node& n = nodes_[order[p]];
      std::vector<uint64_t> kept;
      for (uint64_t d : n.ctrl_deps())
        if (!inside(d)) kept.push_back(d);
      n.clear_ctrl_deps();
      if (p == 0) {
        for (NodeIndex k = lo; k <= hi; ++k) {
          if (!m_.on_host(k)) continue;
          for (uint64_t d : nodes_[k].ctrl_deps())
            if (!inside(d)) kept.push_back(d);
          break;
        }
      } else {
        kept.push_back(m_.id(order[p - 1]));
      }
      std::sort(kept.begin(), kept.end());
      kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
      for (uint64_t d : kept) n.add_ctrl_deps(d);
    }
    // A data dep on a node of the range that now runs later is the trace's
    // chaining of host ops, not a tensor (PartitionRegion): dropped.
    absl::flat_hash_map<uint64_t, size_t> position;
    for (size_t p = 0; p < order.size(); ++p) position[m_.id(order[p])] = p;
    for (size_t p = 0; p < order.size(); ++p) {
      Node& n = nodes_[order[p]];
      std::vector<uint64_t> kept;
      for (uint64_t d : n.data_deps()) {
        auto it = position.find(d);
        if (it == position.end() || it->second < p) kept.push_back(d);
      }
      if (static_cast<int>(kept.size()) == n.data_deps_size()) continue;
      n.clear_data_deps();
      for (uint64_t d : kept) n.add_data_deps(d);
    }
    const uint64_t old_last = m_.id(hi), new_last = m_.id(order.back());
    if (old_last == new_last) return;
    for (NodeIndex u : m_.deps().ctrl_users(hi)) {
      if (u >= lo && u <= hi) continue;
      Node& n = nodes_[u];
      for (int k = 0; k < n.ctrl_deps_size(); ++k)
        if (n.ctrl_deps(k) == old_last) n.set_ctrl_deps(k, new_last);
    }
  }

  Graph Finish(ChakraProtoMsg::GlobalMetadata meta) {
    for (Node& n : added_) nodes_.push_back(std::move(n));
    return Graph::Build(std::move(meta), std::move(nodes_));
  }

 private:
  const NodeModel& m_;
  const EpShardOptions& options_;
  EpShardResult* result_;
  std::vector<Node> nodes_;
  std::vector<Node> added_;
  uint64_t next_id_ = 0;
};

// A layer's ops of one pass, run as the dispatch needs: [before] [experts]
// [after]; returns false when an expert reads what another expert's result
// made (not a mixture of independent experts).
struct Region {
  NodeIndex lo = 0, hi = 0;
  std::vector<NodeIndex> before, experts, after;
  // Set when no partition exists: the expert op that read a storage an op
  // after the experts wrote, and that op.
  NodeIndex conflict_reader = kNoNode, conflict_writer = kNoNode;
};

Region PartitionRegion(const NodeModel& m,
                       const std::vector<NodeIndex>& members) {
  // Tensor flows only: a CPU trace's data deps also chain each host op to
  // the one before it.
  Region r;
  r.lo = members.front();
  r.hi = members.back();
  absl::flat_hash_set<NodeIndex> is_member(members.begin(), members.end());
  absl::flat_hash_set<uint64_t> expert_made;
  absl::flat_hash_map<uint64_t, NodeIndex> after_made;  // storage -> writer
  for (NodeIndex i = r.lo; i <= r.hi; ++i) {
    if (!m.on_host(i) || IsCommunication(m.kind(i))) continue;
    bool reads_expert = false;
    NodeIndex after_writer = kNoNode;
    for (const IoTensor& t : m.recorded_tensors(i, false)) {
      if (t.storage_id == 0) continue;
      reads_expert |= expert_made.contains(t.storage_id);
      if (auto it = after_made.find(t.storage_id); it != after_made.end())
        after_writer = it->second;
    }
    const bool reads_after = after_writer != kNoNode;
    int made = 0;  // 1: an expert op, 2: an op after the experts
    if (is_member.contains(i)) {
      if (reads_after) {
        r.conflict_reader = i;
        r.conflict_writer = after_writer;
        return r;
      }
      r.experts.push_back(i);
      made = 1;
    } else if (reads_expert || reads_after) {
      r.after.push_back(i);
      made = 2;
    } else {
      r.before.push_back(i);
    }
    for (const IoTensor& t : m.recorded_tensors(i, true)) {
      if (t.storage_id == 0) continue;
      // A tensor written anew is no longer the other class's.
      if (made != 1) expert_made.erase(t.storage_id);
      if (made != 2) after_made.erase(t.storage_id);
      if (made == 1) expert_made.insert(t.storage_id);
      if (made == 2) after_made[t.storage_id] = i;
    }
  }
  return r;
}

}  // namespace

absl::StatusOr<EpShardResult> ShardExpertParallel(
    const Graph& graph, const EpShardOptions& options) {
  if (options.ep < 2)
    return absl::InvalidArgumentError("expert parallelism needs ep >= 2");
  ModelOptions model_options;
  model_options.keep_io = true;
  model_options.keep_tensors = true;
  model_options.host_gemms = true;
  const NodeModel model = NodeModel::FromGraph(graph, model_options);
  ExpertFinder finder(model);
  const std::vector<LayerUse> uses = finder.Find();
  if (uses.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "no mixture-of-experts layer found to split over ep=%d: the trace "
        "has %d linear layers (2-D GEMMs of a parameter) with recorded "
        "tensors, %d MLPs (a linear layer whose output returns to its input "
        "width in a later one), %d of them on rows gathered from a larger "
        "tensor, and no two of the same widths in one step gathering from "
        "the same tensor with their own parameters (the experts)",
        options.ep, finder.linear_layers(), finder.mlps(),
        finder.gathered_mlps()));
  }
  const int64_t experts = static_cast<int64_t>(uses.front().experts.size());
  int64_t layers = 0;
  for (const LayerUse& l : uses) {
    layers = std::max(layers, l.layer + 1);
    if (static_cast<int64_t>(l.experts.size()) != experts ||
        experts % options.ep != 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "ep=%d does not divide the %d experts of mixture-of-experts layer "
          "%d (step %d): each rank must hold as many",
          options.ep, static_cast<int64_t>(l.experts.size()), l.layer, l.step));
    }
  }
  const int64_t local = experts / options.ep;
  ExpertOps ops(model, uses, finder.persistent(), experts);
  ops.Run();

  EpShardResult result;
  result.layers = layers;
  result.experts = experts;
  // The rank: the given one, else the one whose experts get the most tokens.
  std::vector<int64_t> tokens(static_cast<size_t>(options.ep), 0);
  for (const LayerUse& l : uses)
    for (int64_t e = 0; e < experts; ++e)
      tokens[static_cast<size_t>(e / local)] +=
          l.experts[static_cast<size_t>(e)].rows;
  result.ep_index =
      options.ep_index >= 0
          ? options.ep_index % options.ep
          : std::max_element(tokens.begin(), tokens.end()) - tokens.begin();
  auto is_local = [&](int64_t g) {
    return (g % experts) / local == result.ep_index;
  };

  Rewriter out(model, graph, options, &result);
  for (NodeIndex i = 0; i < model.size(); ++i) {
    const int64_t g = ops.expert_of(i);
    if (g < 0) continue;
    if (!is_local(g)) {
      ScaleNodeCost(&out.node(i), 0, 1);
      ++result.other_ops;
    } else {
      if (ops.token_sized(i)) ScaleNodeCost(&out.node(i), options.ep, 1);
      ++result.local_ops;
    }
  }
  for (const auto& [storage, g] : ops.owner())
    if (!is_local(g)) result.other_storages.insert(storage);
  for (const auto& [i, storage] : ops.made()) {
    const int64_t g = ops.expert_of(i);
    if (g < 0) continue;
    if (!is_local(g)) {
      result.made_scale[{i, storage}] = 0;
    } else {
      for (const IoTensor& t : model.recorded_tensors(i, true))
        if (t.storage_id == storage && ops.TokenSizedTensor(g, t))
          result.made_scale[{i, storage}] = options.ep;
    }
  }

  // The all-to-alls, each layer and step, forward then backward.
  for (const LayerUse& l : uses) {
    int64_t routed = 0, received = 0;
    for (int64_t e = 0; e < experts; ++e) {
      const ExpertUse& u = l.experts[static_cast<size_t>(e)];
      routed += u.rows * u.width * u.elem_bytes;
      if (e / local == result.ep_index)
        received += options.ep * u.rows * u.width * u.elem_bytes;
    }
    for (bool forward : {true, false}) {
      std::vector<NodeIndex> members;
      for (NodeIndex i = 0; i < model.size(); ++i) {
        const int64_t g = ops.expert_of(i);
        if (g < 0 || g / experts != l.layer || model.step(i) != l.step ||
            !model.on_host(i))
          continue;
        if (forward ? ops.in_chain(i) && IsForward(model, i)
                    : IsBackward(model, i))
          members.push_back(i);
      }
      if (members.empty()) continue;
      const Region region = PartitionRegion(model, members);
      if (region.conflict_reader != kNoNode) {
        const NodeIndex r = region.conflict_reader;
        const NodeIndex w = region.conflict_writer;
        return absl::FailedPreconditionError(absl::StrFormat(
            "mixture-of-experts layer %d (step %d): expert %d's %s op node "
            "%d (%s) reads a storage that node %d (%s), which reads the "
            "experts' results, wrote: the experts are not independent, so "
            "they cannot be split over ep=%d",
            l.layer, l.step, ops.expert_of(r) % experts,
            forward ? "forward" : "backward", model.id(r), model.name(r),
            model.id(w), model.name(w), options.ep));
      }
      std::vector<NodeIndex> order = region.before;
      order.insert(order.end(), region.experts.begin(), region.experts.end());
      order.insert(order.end(), region.after.begin(), region.after.end());
      out.Reorder(region.lo, region.hi, order);
      // Before the experts: what ran on the host before the first of them.
      std::vector<uint64_t> ready;
      if (!region.before.empty()) {
        ready.push_back(model.id(region.before.back()));
      } else {
        for (NodeIndex d : model.ctrl_deps(region.lo))
          ready.push_back(model.id(d));
      }
      uint64_t in_id;
      if (forward) {
        const uint64_t counts = out.AddAllToAll(
            "ep:all_to_all_counts", experts * kCountBytes, l.step, ready);
        in_id = out.AddAllToAll("ep:dispatch", routed, l.step, {counts});
      } else {
        in_id = out.AddAllToAll("ep:combine_backward", routed, l.step, ready);
      }
      out.Wait(region.experts.front(), in_id);
      std::optional<uint64_t> out_id;
      if (forward || ops.input_grad(l.layer)) {
        out_id = out.AddAllToAll(
            forward ? "ep:combine" : "ep:dispatch_backward", received, l.step,
            {model.id(region.experts.back())});
      }
      if (out_id) {
        if (!region.after.empty()) {
          out.Wait(region.after.front(), *out_id);
        } else {
          for (NodeIndex u : model.deps().ctrl_users(region.hi))
            if (u > region.hi) out.Wait(u, *out_id);
        }
      }
    }
  }

  // The dense gradients' average over the group, once a step.
  for (const auto& [storage, bytes] : finder.parameter_bytes())
    if (!ops.owner().contains(storage)) result.dense_bytes += bytes;
  if (result.dense_bytes > 0) {
    std::map<int64_t, std::pair<NodeIndex, NodeIndex>> steps;  // bwd end, opt
    for (NodeIndex i = 0; i < model.size(); ++i) {
      if (!model.on_host(i) || model.step(i) < 0) continue;
      auto [it, added] =
          steps.try_emplace(model.step(i), std::make_pair(kNoNode, kNoNode));
      if (IsBackward(model, i)) it->second.first = i;
      if (model.role(i) == NodeRole::kOptimizer && it->second.second == kNoNode)
        it->second.second = i;
    }
    for (const auto& [step, ends] : steps) {
      if (ends.first == kNoNode) continue;
      const uint64_t id =
          out.AddAllToAll("ep:dense_all_reduce", result.dense_bytes, step,
                          {model.id(ends.first)}, ChakraProtoMsg::ALL_REDUCE);
      if (ends.second != kNoNode) out.Wait(ends.second, id);
      ++result.dense_all_reduces;
    }
  }
  result.unplaced_ops = ops.unplaced();
  result.graph = out.Finish(WithEpGroup(graph.metadata(), options));
  result.note = absl::StrFormat(
      "expert parallelism: synthesized ep=%d (GShard/Switch dispatch and "
      "combine; group '%s'): %d mixture-of-experts layers of %d experts, this "
      "rank (ep index %d) holds %d of them: %d ops of its experts run ep "
      "times the tokens, %d ops of the other ranks' experts removed (no time, "
      "no memory); %d all-to-alls added (%d bytes sent), %d all-reduces of "
      "the %d bytes of replicated gradients; %d ops read two experts' "
      "tensors and were replicated; every other op is replicated",
      options.ep, options.pg_name, result.layers, experts, result.ep_index,
      local, result.local_ops, result.other_ops, result.all_to_alls,
      result.all_to_all_bytes, result.dense_all_reduces, result.dense_bytes,
      result.unplaced_ops);
  return result;
}

std::vector<StorageLife> LivesAtExpertParallel(std::vector<StorageLife> lives,
                                               const EpShardResult& split) {
  for (StorageLife& l : lives) {
    if (l.storage_id == 0) continue;
    if (l.persistent) {
      if (split.other_storages.contains(l.storage_id)) l.bytes = 0;
      continue;
    }
    auto it = split.made_scale.find({l.first, l.storage_id});
    if (it != split.made_scale.end()) l.bytes *= it->second;
  }
  return lives;
}

}  // namespace et::scaleout
