// Storage lives from the recorded tensors (docs/memory-model.md, "From
// tensors to allocations").
#include "step/storage_lives.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "step/library_workspaces.h"

namespace et {
namespace {

using StorageKey = std::pair<int32_t, uint64_t>;  // device, storage id
using TensorKey = std::pair<uint64_t, uint64_t>;  // tensor id, storage id

// Views whose elements can exceed their storage's (stride-0 dimensions): their
// numel says nothing about the storage's size.
bool ExpandsView(absl::string_view name) {
  return name == "aten::expand" || name == "aten::expand_as" ||
         name == "aten::broadcast_to" || name == "aten::as_strided" ||
         name == "aten::broadcast_tensors";
}

// What the walk learns of one life beyond StorageLife.
struct LifeFacts {
  int64_t first_step = -1, last_step = -1;
  int64_t view_bytes = 0;   // largest extent seen only through expanded views
  uint64_t elem_bytes = 0;  // of the tensor that allocated it
  // Where ids count with ops: the id the trace gave it when first seen (its
  // storage's, or a new tensor's on a storage seen before); 0 unknown.
  uint64_t made_number = 0;
  uint8_t roles = 0;  // bit per NodeRole that used it
  NodeRole alloc_role = NodeRole::kOther;
  bool allocated = false;  // an op of the trace allocated it
  bool comm = false;       // a collective moved it
};

uint8_t Bit(NodeRole r) {
  return static_cast<uint8_t>(1u << static_cast<int>(r));
}

bool IsAncestor(const NodeModel& m, NodeIndex ancestor, NodeIndex i) {
  const uint64_t want = m.id(ancestor);
  NodeIndex cur = i;
  for (int depth = 0; depth < 64; ++depth) {  // ET call trees are shallow
    const uint64_t p = m.parent_id(cur);
    if (p == 0) return false;
    if (p == want) return true;
    std::optional<NodeIndex> next = m.Find(p);
    if (!next) return false;
    cur = *next;
  }
  return false;
}

// Whether the trace numbers its tensors from the counter that numbers its
// ops (PyTorch 1.13's ET does): then no tensor id is an op's id, and a
// tensor's id tells which op made it.
bool TensorIdsCountWithOps(const NodeModel& m) {
  absl::flat_hash_set<uint64_t> op_ids;
  for (NodeIndex i = 0; i < m.size(); ++i) op_ids.insert(m.id(i));
  int64_t tensors = 0;
  for (NodeIndex i = 0; i < m.size(); ++i) {
    for (bool out : {false, true}) {
      for (const IoTensor& t : m.recorded_tensors(i, out)) {
        if (op_ids.contains(t.tensor_id)) return false;
        ++tensors;
      }
    }
  }
  return tensors > 0;
}

class Walker {
 public:
  explicit Walker(const NodeModel& m)
      : m_(m), ids_count_with_ops_(TensorIdsCountWithOps(m)) {}

  void Node(NodeIndex i) {
    if (!walked_ids_.empty() && m_.id(i) <= walked_ids_.back())
      ids_count_with_ops_ = false;  // not in id order: no maker to look up
    if (ids_count_with_ops_) walked_ids_.push_back(m_.id(i));
    const auto ins = m_.recorded_tensors(i, false);
    const auto outs = m_.recorded_tensors(i, true);
    if (m_.folded_peak_bytes(i) > 0) FoldedTemporaries(i, ins, outs);
    for (const IoTensor& t : m_.held_tensors(i)) Hold(i, t);
    if (ins.empty() && outs.empty()) return;
    result_.tensors += static_cast<int64_t>(ins.size() + outs.size());
    const bool expands = ExpandsView(m_.name(i));
    for (const IoTensor& t : outs) {
      if (!Usable(t)) continue;
      const StorageKey key{t.device, t.storage_id};
      const bool fresh =
          std::none_of(ins.begin(), ins.end(), [&](const IoTensor& in) {
            return in.device == t.device && in.storage_id == t.storage_id;
          });
      if (fresh) Allocate(i, key, t);
      if (expands) expanded_.insert({t.tensor_id, t.storage_id});
    }
    if (m_.role(i) == NodeRole::kOptimizer && UpdatesHeldStorage(ins, outs))
      updates_persistent_.insert(i);
    for (const IoTensor& t : ins) Use(i, t, expands, /*input=*/true);
    for (const IoTensor& t : outs) Use(i, t, expands, /*input=*/false);
  }

  StorageLivesResult Finish(int64_t steps);

 private:
  static bool Usable(const IoTensor& t) {
    return t.device != kOtherDevice && t.elem_bytes > 0;
  }

  // An output whose storage none of the op's inputs holds: a new allocation,
  // unless the op nests inside the one that made it (--keep all keeps both).
  void Allocate(NodeIndex i, const StorageKey& key, const IoTensor& t) {
    auto it = open_.find(key);
    if (it != open_.end()) {
      const StorageLife& life = result_.lives[it->second];
      if (facts_[it->second].allocated &&
          (life.first == i || IsAncestor(m_, life.first, i)))
        return;
    }
    const uint32_t index = NewLife(i, key);
    facts_[index].allocated = true;
    facts_[index].alloc_role = m_.role(i);
    facts_[index].elem_bytes = t.elem_bytes;
    result_.lives[index].bytes = static_cast<int64_t>(t.extent_bytes());
    expanded_.erase({t.tensor_id, t.storage_id});
    open_[key] = index;
  }

  void Use(NodeIndex i, const IoTensor& t, bool expands, bool input) {
    if (t.device == kOtherDevice) ++result_.other_device;
    if (!Usable(t)) return;
    const StorageKey key{t.device, t.storage_id};
    const TensorKey tensor{t.tensor_id, t.storage_id};
    const bool viewed = expands || expanded_.contains(tensor);
    const int64_t extent = static_cast<int64_t>(t.extent_bytes());
    auto it = open_.find(key);
    // Ids are object ids: a tensor or storage at a freed object's address
    // gets the old id again, so only an id seen for the first time dates it.
    const bool fresh_tensor =
        ids_count_with_ops_ && seen_tensor_ids_.insert(t.tensor_id).second;
    const bool new_pair =
        ids_count_with_ops_ && seen_pairs_.insert(tensor).second;
    if (it != open_.end() && input && fresh_tensor) {
      if (auto maker = MadeAgainUnseen(it->second, i, t)) {
        const uint32_t index = NewLife(*maker, key);
        facts_[index].allocated = true;
        facts_[index].alloc_role = m_.role(*maker);
        facts_[index].elem_bytes = t.elem_bytes;
        result_.lives[index].bytes = extent;
        open_[key] = index;
        it = open_.find(key);
      }
    }
    uint32_t index;
    // A storage neither grows nor changes its element type: a use beyond what
    // its allocation holds, or of another element size, is another
    // allocation at the same address, made inside a folded op.
    if (it == open_.end() ||
        (facts_[it->second].allocated && !viewed &&
         (extent > result_.lives[it->second].bytes ||
          t.elem_bytes != facts_[it->second].elem_bytes)) ||
        HiddenActivationAgain(it->second, i) ||
        (input && new_pair &&
         AllocatedAgainInLaterStep(it->second, i, extent))) {
      const bool fresh_storage = it == open_.end();
      index = NewLife(i, key);  // held before the trace (or made unseen)
      if (ids_count_with_ops_) {
        facts_[index].made_number = fresh_storage  ? t.storage_id
                                    : fresh_tensor ? t.tensor_id
                                                   : 0;
      }
      open_[key] = index;
    } else {
      index = it->second;
    }
    StorageLife& life = result_.lives[index];
    LifeFacts& f = facts_[index];
    life.last = i;
    const int64_t step = m_.step(i);
    if (f.first_step < 0) f.first_step = step;
    f.last_step = std::max(f.last_step, step);
    f.roles |= Bit(m_.role(i));
    if (m_.role(i) == NodeRole::kOptimizer) {
      if (life.optimizer_first == kNoNode) life.optimizer_first = i;
      optimizer_uses_.push_back(index);
    }
    if (IsCommunication(m_.kind(i))) f.comm = true;
    if (viewed) {
      f.view_bytes = std::max(f.view_bytes, extent);
    } else {
      life.bytes = std::max(life.bytes, extent);
    }
  }

  // Whether an op writes in place a storage the trace never allocated (a
  // parameter, by the optimizer's update).
  bool UpdatesHeldStorage(absl::Span<const IoTensor> ins,
                          absl::Span<const IoTensor> outs) const {
    for (const IoTensor& t : outs) {
      auto it = open_.find(StorageKey{t.device, t.storage_id});
      if (it == open_.end() || facts_[it->second].allocated) continue;
      for (const IoTensor& in : ins)
        if (in.device == t.device && in.storage_id == t.storage_id) return true;
    }
    return false;
  }

  // A tensor an op around node `i` read that no node under it reads
  // (container_inputs): the storage it is on lives to here. Where ids are
  // object ids, only a pair seen before counts (the ids may since name
  // another allocation).
  void Hold(NodeIndex i, const IoTensor& t) {
    if (!Usable(t)) return;
    auto it = open_.find(StorageKey{t.device, t.storage_id});
    if (it == open_.end() ||
        (ids_count_with_ops_ &&
         !seen_pairs_.contains(TensorKey{t.tensor_id, t.storage_id})))
      return;
    StorageLife& life = result_.lives[it->second];
    LifeFacts& f = facts_[it->second];
    life.last = std::max(life.last, i);
    f.last_step = std::max(f.last_step, m_.step(i));
    f.roles |= Bit(m_.role(i));
  }

  // An allocated storage's tensor seen for the first time as an input of the
  // backward pass and numbered after the storage's last use by a forward op:
  // that op made it without touching the storage (an op that did would be
  // its last use), so the allocator handed the address out again inside an
  // op the converter folded (dropout's mask, kept for the backward). Returns
  // that op. (A tensor numbered in the backward pass is autograd unpacking
  // a saved output, a new object on the same storage: no new allocation.)
  std::optional<NodeIndex> MadeAgainUnseen(uint32_t index, NodeIndex i,
                                           const IoTensor& t) const {
    if (!ids_count_with_ops_ || !facts_[index].allocated) return std::nullopt;
    const NodeIndex last = result_.lives[index].last;
    if (t.tensor_id <= m_.id(last) || t.tensor_id >= m_.id(i))
      return std::nullopt;
    std::optional<NodeIndex> maker = MakerOf(t.tensor_id);
    if (!maker || m_.id(*maker) <= m_.id(last) ||
        m_.role(i) != NodeRole::kBackward || !BeforeBackward(*maker, i))
      return std::nullopt;
    return maker;
  }

  // Whether `maker` ran before the backward pass of `use`'s step began.
  bool BeforeBackward(NodeIndex maker, NodeIndex use) const {
    const int64_t step = m_.step(use);
    if (step < 0 || static_cast<size_t>(step) >= first_backward_.size())
      return false;
    const NodeIndex start = first_backward_[step];
    return start != kNoNode && maker < start;
  }

  // Where tensor ids count with op ids: the op walked so far numbered last
  // before `number` (a tensor's or storage's first id), the one that made it
  // (or, for one no recorded op output, the one that first used it).
  std::optional<NodeIndex> MakerOf(uint64_t number) const {
    if (!ids_count_with_ops_ || number == 0) return std::nullopt;
    auto after =
        std::upper_bound(walked_ids_.begin(), walked_ids_.end(), number);
    if (after == walked_ids_.begin()) return std::nullopt;
    return m_.Find(*(after - 1));
  }

  // A storage never allocated in the trace whose first use was by the
  // backward pass was made inside a folded forward op and kept for the
  // backward (StartHiddenActivations): the next step's backward use of the
  // same id is that step's own, made at an address the allocator handed out
  // again, not one storage held across steps. (A buffer a collective moves,
  // DDP's bucket, is filled by the backward and held: it stays one life.)
  bool HiddenActivationAgain(uint32_t index, NodeIndex i) const {
    const LifeFacts& f = facts_[index];
    return !f.allocated && !f.comm && f.first_step >= 0 &&
           m_.step(i) > f.last_step && m_.role(i) == NodeRole::kBackward &&
           m_.role(result_.lives[index].first) == NodeRole::kBackward;
  }

  // An allocated storage read by a later step's backward pass through a
  // tensor never seen on it, of another size than the storage held: where
  // ids are object ids (PyTorch 1.13's ET numbers a freed object's address
  // again with its old id), the allocator handed the address out again
  // inside a folded forward op (dropout's mask), kept for the backward: a
  // life of its own (StartHiddenActivations). A state carried into the next
  // step (an RNN's detached hidden state) is read by that step's forward
  // pass; a tensor of the same size may be either, and stays one life (the
  // larger estimate).
  bool AllocatedAgainInLaterStep(uint32_t index, NodeIndex i,
                                 int64_t extent) const {
    const LifeFacts& f = facts_[index];
    return ids_count_with_ops_ && f.allocated && !f.comm && f.last_step >= 0 &&
           m_.step(i) > f.last_step && m_.role(i) == NodeRole::kBackward &&
           extent != result_.lives[index].bytes;
  }

  // What the ops et-convert folded into node `i` allocated and freed inside
  // it (converter/graph/folded_memory.h): a temporary of the node alone, on
  // the GPU its tensors are on (else the host), storage unknown.
  void FoldedTemporaries(NodeIndex i, absl::Span<const IoTensor> ins,
                         absl::Span<const IoTensor> outs) {
    int32_t device = kHostDevice;
    for (auto tensors : {ins, outs})
      for (const IoTensor& t : tensors)
        if (device == kHostDevice && t.device >= 0) device = t.device;
    const uint32_t index = NewLife(i, {device, 0});
    StorageLife& life = result_.lives[index];
    life.bytes = m_.folded_peak_bytes(i);
    LifeFacts& f = facts_[index];
    f.allocated = true;
    f.alloc_role = m_.role(i);
    f.first_step = f.last_step = m_.step(i);
    if (m_.role(i) == NodeRole::kOptimizer) {
      life.optimizer_first = i;
      optimizer_uses_.push_back(index);
    }
  }

  uint32_t NewLife(NodeIndex i, const StorageKey& key) {
    StorageLife life;
    life.device = key.first;
    life.storage_id = key.second;
    life.first = life.last = i;
    result_.lives.push_back(life);
    facts_.emplace_back();
    return static_cast<uint32_t>(result_.lives.size() - 1);
  }

  const NodeModel& m_;
  bool ids_count_with_ops_;
  std::vector<uint64_t> walked_ids_;  // ascending: the walk's order
  absl::flat_hash_set<uint64_t> seen_tensor_ids_;  // used so far
  absl::flat_hash_set<TensorKey> seen_pairs_;      // used so far
  StorageLivesResult result_;
  std::vector<LifeFacts> facts_;
  absl::flat_hash_map<StorageKey, uint32_t> open_;  // latest life per storage
  absl::flat_hash_set<TensorKey> expanded_;
  std::vector<uint32_t> optimizer_uses_;  // lives, in the optimizer's order
  // Optimizer nodes that write a never-allocated storage in place.
  absl::flat_hash_set<NodeIndex> updates_persistent_;
  std::vector<NodeIndex> first_backward_;  // per step: its first backward node
  // Lives of a one-step trace first used by a backward op and never by the
  // forward, the optimizer or AccumulateGrad: made inside a folded op of that
  // backward, not held across steps (Finish).
  std::vector<bool> backward_only_;
  absl::flat_hash_map<int64_t, NodeIndex> step_end_;  // per step: its last node
  void AssignOwners();
  void StartHiddenActivations();
  void HoldGradientsToStepEnd();
  void HoldOptimizerLoopLocals();

 public:
  void SeeRole(NodeIndex i) {
    const int64_t step = m_.step(i);
    if (step >= 0) step_end_[step] = i;  // nodes come in id order
    if (step < 0 || m_.role(i) != NodeRole::kBackward) return;
    if (first_backward_.size() <= static_cast<size_t>(step))
      first_backward_.resize(static_cast<size_t>(step) + 1, kNoNode);
    if (first_backward_[step] == kNoNode) first_backward_[step] = i;
  }
};

MemoryKind Classify(const StorageLife& life, const LifeFacts& f) {
  const bool optimizer = f.roles & Bit(NodeRole::kOptimizer);
  const bool grad = f.roles & Bit(NodeRole::kGradAccumulation);
  const bool backward = f.roles & Bit(NodeRole::kBackward);
  const bool forward = f.roles & Bit(NodeRole::kOther);
  if (life.persistent) {
    if (f.comm && !optimizer) return MemoryKind::kCommBuffer;
    if (grad) return MemoryKind::kGradient;
    if (optimizer && (forward || backward)) return MemoryKind::kParameter;
    if (optimizer) return MemoryKind::kOptimizerState;
    return MemoryKind::kOther;
  }
  if (grad) return MemoryKind::kGradient;
  if (f.alloc_role == NodeRole::kOther && (backward || grad))
    return MemoryKind::kActivation;
  return MemoryKind::kTemporary;
}

// The parameter each optimizer-made or optimizer-only life belongs to: the
// parameter the optimizer used last before it.
void Walker::AssignOwners() {
  int32_t owner = -1;
  for (uint32_t index : optimizer_uses_) {
    StorageLife& life = result_.lives[index];
    if (life.persistent && life.kind == MemoryKind::kParameter) {
      owner = static_cast<int32_t>(index);
      life.owner = owner;
    } else if (life.owner < 0 &&
               (life.kind == MemoryKind::kOptimizerState ||
                (!life.persistent &&
                 facts_[index].alloc_role == NodeRole::kOptimizer))) {
      life.owner = owner;
    }
  }
}

// A storage first seen as an input of the backward pass, never allocated in
// the trace, was made inside an op the converter folded into its parent (max
// pooling's indices, batch norm's saved statistics, dropout's mask): the
// forward kept it for the backward, so it is live from the forward op that
// made it where tensor ids tell (MakerOf), else from the backward's start.
void Walker::StartHiddenActivations() {
  for (size_t k = 0; k < result_.lives.size(); ++k) {
    StorageLife& life = result_.lives[k];
    const LifeFacts& f = facts_[k];
    if (f.allocated || life.persistent || f.first_step < 0) continue;
    const NodeRole first_role = m_.role(life.first);
    if (first_role != NodeRole::kBackward &&
        first_role != NodeRole::kGradAccumulation)
      continue;
    if (static_cast<size_t>(f.first_step) >= first_backward_.size()) continue;
    // A one-step trace's backward-only storage was made by the backward op
    // that first uses it (Finish): it starts there.
    if (backward_only_[k]) continue;
    NodeIndex start = first_backward_[f.first_step];
    const std::optional<NodeIndex> maker = MakerOf(f.made_number);
    if (maker && start != kNoNode && *maker < start &&
        m_.role(*maker) == NodeRole::kOther && m_.step(*maker) == f.first_step)
      start = *maker;
    if (start != kNoNode && start < life.first) {
      life.first = start;
      life.kind = MemoryKind::kActivation;
    }
  }
}

// A gradient the backward pass allocated and the optimizer read is a
// parameter's `.grad`: the parameter holds it after the optimizer's last use,
// until the next step's `zero_grad` drops it (torch 2.x's default
// `set_to_none=True`) or the step ends, whichever the trace shows first; no op
// uses it in between, so it lives to its step's last node. (torch 1.13 zeroes
// `.grad` in place: persistent, never allocated here. The incoming gradient
// AccumulateGrad adds into it is not read by the optimizer and dies there.)
void Walker::HoldGradientsToStepEnd() {
  for (size_t k = 0; k < result_.lives.size(); ++k) {
    StorageLife& life = result_.lives[k];
    const LifeFacts& f = facts_[k];
    if (life.persistent || life.kind != MemoryKind::kGradient ||
        life.optimizer_first == kNoNode || f.last_step < 0)
      continue;
    auto end = step_end_.find(f.last_step);
    if (end != step_end_.end()) life.last = std::max(life.last, end->second);
  }
}

// A per-parameter optimizer loop (PyTorch's single-tensor Adam and AdamW)
// binds what the update reads to a Python local (`denom`, read by
// `param.addcdiv_`), freed only when the next parameter's iteration binds it
// again: the optimizer's temporary whose last use is an in-place update of a
// persistent storage lives until the optimizer's next op of the name that
// made it (the next `div`), in the same step. The last parameter's dies with
// the loop.
void Walker::HoldOptimizerLoopLocals() {
  absl::flat_hash_map<absl::string_view, std::vector<NodeIndex>> by_name;
  for (uint32_t index : optimizer_uses_) {
    const StorageLife& life = result_.lives[index];
    if (facts_[index].allocated && !life.persistent)
      by_name[m_.name(life.first)];
  }
  if (by_name.empty()) return;
  for (NodeIndex i = 0; i < m_.size(); ++i) {
    if (m_.role(i) != NodeRole::kOptimizer) continue;
    if (auto it = by_name.find(m_.name(i)); it != by_name.end())
      it->second.push_back(i);
  }
  for (size_t k = 0; k < result_.lives.size(); ++k) {
    StorageLife& life = result_.lives[k];
    const LifeFacts& f = facts_[k];
    if (!f.allocated || life.persistent ||
        f.alloc_role != NodeRole::kOptimizer ||
        m_.role(life.last) != NodeRole::kOptimizer ||
        !updates_persistent_.contains(life.last))
      continue;
    const std::vector<NodeIndex>& makers = by_name[m_.name(life.first)];
    auto next = std::upper_bound(makers.begin(), makers.end(), life.last);
    if (next != makers.end() && m_.step(*next) == m_.step(life.last))
      life.last = *next;
  }
}

StorageLivesResult Walker::Finish(int64_t steps) {
  result_.steps = steps;
  for (size_t k = 0; k < result_.lives.size(); ++k) {
    StorageLife& life = result_.lives[k];
    const LifeFacts& f = facts_[k];
    if (life.bytes == 0) life.bytes = f.view_bytes;
    // Never allocated here and used in two steps (or the only one): held by
    // the program across steps (parameters, optimizer state, the batch).
    // In a one-step trace, one first used by a backward op and never by the
    // forward, the optimizer or AccumulateGrad is the backward's own, made by
    // that op (in an op folded into it: the loss's gradient, attention's
    // backward copies), and lives from there to its last use; one step of
    // gradient accumulation has many.
    const bool backward_only =
        steps <= 1 && !f.allocated &&
        m_.role(life.first) == NodeRole::kBackward &&
        !(f.roles & (Bit(NodeRole::kOptimizer) |
                     Bit(NodeRole::kGradAccumulation) | Bit(NodeRole::kOther)));
    backward_only_.push_back(backward_only);
    life.persistent = !f.allocated && !backward_only &&
                      (steps <= 1 || f.last_step > f.first_step);
    life.kind = Classify(life, f);
    life.first_use = life.first;
    if (!f.allocated) {
      if (const std::optional<NodeIndex> maker = MakerOf(f.made_number))
        life.hidden_maker = *maker;
    }
  }
  AssignOwners();
  StartHiddenActivations();
  HoldGradientsToStepEnd();
  HoldOptimizerLoopLocals();
  return std::move(result_);
}

}  // namespace

absl::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kParameter:
      return "parameters";
    case MemoryKind::kGradient:
      return "gradients";
    case MemoryKind::kOptimizerState:
      return "optimizer_state";
    case MemoryKind::kActivation:
      return "activations";
    case MemoryKind::kTemporary:
      return "temporaries";
    case MemoryKind::kCommBuffer:
      return "comm_buffers";
    case MemoryKind::kOther:
      return "other";
    case MemoryKind::kWorkspace:
      return "workspaces";
  }
  return "other";
}

StorageLivesResult FindStorageLives(const NodeModel& model) {
  Walker walker(model);
  absl::flat_hash_set<int64_t> steps;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    if (model.step(i) >= 0) steps.insert(model.step(i));
    // A GPU op carries its launcher's tensors (or none): the launcher, a host
    // op, used them when it ran.
    if (!model.on_host(i) && model.device(i) >= 0) continue;
    walker.SeeRole(i);
    walker.Node(i);
  }
  StorageLivesResult result = walker.Finish(static_cast<int64_t>(steps.size()));
  for (StorageLife& life : CublasWorkspaceLives(model))
    result.lives.push_back(life);
  return result;
}

}  // namespace et
