// Sequence parallelism planned on a tensor-parallel split; see
// sequence_parallel.h and docs/et-sim.md.
#include "scaleout/sequence_parallel.h"

#include <algorithm>
#include <deque>
#include <tuple>

#include "absl/container/flat_hash_map.h"

namespace et::scaleout {
namespace {

// How many ops one entry's activation is followed back through.
constexpr int kMaxChain = 256;

// A tensor marked in step `made` is that tensor when read in `step` (the
// trace's storage ids are addresses, reused across steps).
bool SameStep(int64_t made, int64_t step) {
  return made == step || made < 0 || step < 0;
}

class Planner {
 public:
  Planner(const NodeModel& model, const std::vector<bool>& op_split,
          const std::vector<NodeIndex>& partial,
          const absl::flat_hash_set<uint64_t>& split_parameters)
      : model_(model),
        op_split_(op_split),
        partial_(partial.begin(), partial.end()),
        parameters_(split_parameters) {
    plan_.seq_split.assign(model.size(), false);
    chain_.assign(model.size(), false);
  }

  // The region's entries (see the header): their activations' sizes, and
  // the ops that made the activations, marked back through the chain.
  void MarkEntries() {
    absl::flat_hash_map<uint64_t, NodeIndex> writer;
    std::vector<NodeIndex> starts;
    for (NodeIndex i = 0; i < model_.size(); ++i) {
      if (!model_.on_host(i)) continue;
      const GemmShape* g = model_.gemm(i);
      absl::Span<const IoTensor> in = model_.recorded_tensors(i, false);
      const size_t a = g == nullptr ? 0 : static_cast<size_t>(g->a_input);
      if (op_split_[i] && g != nullptr && g->batch == 1 && a + 1 < in.size()) {
        const bool a_param = parameters_.contains(in[a].storage_id);
        const bool b_param = parameters_.contains(in[a + 1].storage_id);
        if (a_param != b_param) {
          const IoTensor& act = a_param ? in[a + 1] : in[a];
          auto w = writer.find(act.storage_id);
          if (w != writer.end() && !op_split_[w->second]) {
            activation_elems_.insert(act.num_elems);
            starts.push_back(w->second);
          }
        }
      }
      for (const IoTensor& t : model_.recorded_tensors(i, true))
        if (Makes(i, t.storage_id)) writer[t.storage_id] = i;
    }
    for (NodeIndex s : starts) MarkChain(s);
  }

  void Walk() {
    for (NodeIndex i = 0; i < model_.size(); ++i) {
      if (IsCommunication(model_.kind(i))) continue;
      if (!model_.on_host(i)) {
        if (LaunchedBySeqSplitOp(i)) plan_.seq_split[i] = true;
        continue;
      }
      std::vector<const IoTensor*> seq_reads;
      for (const IoTensor& t : model_.recorded_tensors(i, false))
        if (IsSeqSplit(t.storage_id, i)) seq_reads.push_back(&t);
      if (op_split_[i]) {
        for (const IoTensor* t : seq_reads) Gather(*t, i);
        const bool reduce_scattered = partial_.contains(i);
        for (const IoTensor& t : model_.recorded_tensors(i, true))
          Mark(i, t.storage_id, reduce_scattered);
      } else if (chain_[i] ||
                 (!seq_reads.empty() && model_.gemm(i) == nullptr &&
                  ActivationSized(i))) {
        SplitOp(i);
      } else {
        for (const IoTensor* t : seq_reads) Gather(*t, i);
        for (const IoTensor& t : model_.recorded_tensors(i, true))
          Mark(i, t.storage_id, false);
      }
      for (const IoTensor& t : model_.recorded_tensors(i, true))
        if (Makes(i, t.storage_id)) maker_[t.storage_id] = {i, &t};
    }
  }

  SpPlan Take() { return std::move(plan_); }

 private:
  int64_t LargestElems(NodeIndex i) const {
    uint64_t most = 0;
    for (bool outputs : {false, true})
      for (const IoTensor& t : model_.recorded_tensors(i, outputs))
        most = std::max(most, t.num_elems);
    return static_cast<int64_t>(most);
  }
  bool ActivationSized(NodeIndex i) const {
    return activation_elems_.contains(static_cast<uint64_t>(LargestElems(i)));
  }

  // `s` and the activation-sized ops making its inputs, back to a GEMM, a
  // tensor-split op or a larger tensor.
  void MarkChain(NodeIndex s) {
    std::deque<NodeIndex> queue = {s};
    int visited = 0;
    while (!queue.empty() && ++visited < kMaxChain) {
      const NodeIndex n = queue.front();
      queue.pop_front();
      if (chain_[n] || !model_.on_host(n) || op_split_[n] ||
          model_.gemm(n) != nullptr || IsCommunication(model_.kind(n)) ||
          !ActivationSized(n))
        continue;
      chain_[n] = true;
      for (NodeIndex d : model_.data_deps(n)) {
        if (!model_.on_host(d) || model_.step(d) != model_.step(n)) continue;
        for (const IoTensor& out : model_.recorded_tensors(d, true)) {
          if (!activation_elems_.contains(out.num_elems)) continue;
          bool read = false;
          for (const IoTensor& in : model_.recorded_tensors(n, false))
            read |= in.storage_id == out.storage_id;
          if (read) queue.push_back(d);
        }
      }
    }
  }

  bool Fresh(NodeIndex i, uint64_t storage) const {
    for (const IoTensor& t : model_.recorded_tensors(i, false))
      if (t.storage_id == storage) return false;
    return true;
  }

  // Whether `i` made the content of the storage it wrote: a new tensor, or
  // one written in place (an accumulated gradient); a view, which moves no
  // bytes, makes none (Megatron's copy to the tensor-parallel region is a
  // view_as of its input: the input's maker stays the activation's).
  bool Makes(NodeIndex i, uint64_t storage) const {
    if (storage == 0) return false;
    return model_.bytes(i) > 0 || model_.flops(i) > 0 || Fresh(i, storage);
  }

  // A sequence-split op: its outputs are shards, but in the backward pass an
  // output smaller than the activation it reads (a bias's or a norm's weight
  // gradient) sums over the rank's tokens: whole, and all-reduced.
  void SplitOp(NodeIndex i) {
    plan_.seq_split[i] = true;
    ++plan_.seq_split_ops;
    const bool backward = model_.role(i) != NodeRole::kOther;
    const uint64_t largest = static_cast<uint64_t>(LargestElems(i));
    for (const IoTensor& t : model_.recorded_tensors(i, true)) {
      if (!backward || t.num_elems >= largest ||
          activation_elems_.contains(t.num_elems)) {
        Mark(i, t.storage_id, true);
        continue;
      }
      Mark(i, t.storage_id, false);
      SpCollective c;
      c.producer = i;
      for (NodeIndex u : model_.deps().data_users(i))
        if (model_.on_host(u)) c.readers.push_back(u);
      c.bytes = static_cast<int64_t>(t.bytes());
      c.dtype = model_.dtype(i);
      c.step = model_.step(i);
      plan_.grad_reduces.push_back(std::move(c));
    }
  }

  // Storage `storage` written by `i`: a shard when `split`, else (when `i`
  // made it anew) a whole tensor.
  void Mark(NodeIndex i, uint64_t storage, bool split) {
    if (storage == 0) return;
    const bool fresh = Fresh(i, storage);
    if (split) {
      seq_[storage] = model_.step(i);
      if (fresh) plan_.made_seq_split.insert({i, storage});
    } else if (fresh) {
      seq_.erase(storage);
    }
  }

  bool IsSeqSplit(uint64_t storage, NodeIndex i) const {
    auto it = seq_.find(storage);
    return it != seq_.end() && SameStep(it->second, model_.step(i));
  }

  // `reader` needs the whole of sequence-split `t`: one all-gather per
  // tensor and pass.
  void Gather(const IoTensor& t, NodeIndex reader) {
    auto made = maker_.find(t.storage_id);
    const std::optional<NodeIndex> producer =
        made == maker_.end() ? std::nullopt
                             : std::optional<NodeIndex>(made->second.first);
    // A pair's GEMM keeps only the shard and gathers again in backward (its
    // weight gradient); a replicated op (the head) keeps what it gathered.
    const bool forward =
        model_.role(reader) == NodeRole::kOther || !op_split_[reader];
    const auto key = std::make_tuple(t.storage_id, producer.value_or(0),
                                     producer.has_value(), forward);
    auto [it, added] = gather_of_.try_emplace(key, plan_.gathers.size());
    if (added) {
      SpCollective c;
      c.producer = producer;
      // The whole tensor, as its maker wrote it (the reader may read a view).
      c.bytes = static_cast<int64_t>(
          made == maker_.end() ? t.bytes() : made->second.second->bytes());
      c.dtype = producer ? model_.dtype(*producer) : model_.dtype(reader);
      c.step = model_.step(reader);
      plan_.gathers.push_back(std::move(c));
    }
    std::vector<NodeIndex>& readers = plan_.gathers[it->second].readers;
    if (readers.empty() || readers.back() != reader) readers.push_back(reader);
  }

  bool LaunchedBySeqSplitOp(NodeIndex i) const {
    for (auto deps : {model_.data_deps(i), model_.ctrl_deps(i)})
      for (NodeIndex d : deps)
        if (model_.on_host(d) && plan_.seq_split[d]) return true;
    return false;
  }

  const NodeModel& model_;
  const std::vector<bool>& op_split_;
  const absl::flat_hash_set<NodeIndex> partial_;
  const absl::flat_hash_set<uint64_t>& parameters_;
  absl::flat_hash_set<uint64_t> activation_elems_;
  std::vector<bool> chain_;
  absl::flat_hash_map<uint64_t, int64_t> seq_;  // storage -> step marked
  // storage -> the last op that wrote it and the tensor it wrote.
  absl::flat_hash_map<uint64_t, std::pair<NodeIndex, const IoTensor*>> maker_;
  absl::flat_hash_map<std::tuple<uint64_t, NodeIndex, bool, bool>, size_t>
      gather_of_;
  SpPlan plan_;
};

}  // namespace

SpPlan PlanSequenceParallel(
    const NodeModel& model, const std::vector<bool>& op_split,
    const std::vector<NodeIndex>& partial,
    const absl::flat_hash_set<uint64_t>& split_parameters) {
  Planner planner(model, op_split, partial, split_parameters);
  planner.MarkEntries();
  planner.Walk();
  return planner.Take();
}

int64_t RecordedReduceScatters(const NodeModel& model,
                               const std::string& pg_name) {
  int64_t n = 0;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    const CommSpec* c = model.comm(i);
    if (c == nullptr || model.kind(i) != NodeKind::kCollective ||
        model.synthesized(i) || c->type != ChakraProtoMsg::REDUCE_SCATTER ||
        c->group < 0)
      continue;
    n += model.groups()[static_cast<size_t>(c->group)].name == pg_name;
  }
  return n;
}

}  // namespace et::scaleout
