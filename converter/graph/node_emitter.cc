// Chakra node construction; see node_emitter.h.
#include "converter/graph/node_emitter.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/common/json_text.h"
#include "converter/graph/folded_memory.h"
#include "model/io_shapes.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

uint64_t WholeMicros(double us) {
  return us <= 0 ? 0 : static_cast<uint64_t>(std::llround(us));
}
int64_t Nanos(double us) {
  return static_cast<int64_t>(std::llround(us * 1000.0));
}

// A marker (profiler root, process-group table) costs nothing: its recorded
// time is its children's, which have nodes of their own.
void SetMarkerAttrs(AttrList* attrs) {
  SetInt64(attrs, attr::kDurationNs, 0);
  SetInt64(attrs, attr::kNumOps, 0);
  SetUint64(attrs, attr::kTensorSize, 0);
}

// Attributes of the nested format with no typed HostOp field, as recorded.
void SetExtraAttrs(const HostOp& op, const StringPool& pool, AttrList* attrs) {
  for (const ExtraAttr& a : op.extra_attrs) {
    switch (a.kind) {
      case ExtraAttr::Kind::kInt:
        SetInt64(attrs, pool.Get(a.name), a.i);
        break;
      case ExtraAttr::Kind::kUint:
        SetUint64(attrs, pool.Get(a.name), a.i);
        break;
      case ExtraAttr::Kind::kDouble:
        SetDouble(attrs, pool.Get(a.name), a.d);
        break;
      case ExtraAttr::Kind::kBool:
        SetBool(attrs, pool.Get(a.name), a.i != 0);
        break;
      case ExtraAttr::Kind::kString:
        SetString(attrs, pool.Get(a.name), a.s);
        break;
      case ExtraAttr::Kind::kIntList:
        SetInt64List(attrs, pool.Get(a.name), a.list);
        break;
    }
  }
}

// Groups of one member that are not the whole world: a world of one (a
// one-rank trace's default group) stays a collective, since et-sim --world N
// scales it to N ranks. The world is the default group's size.
absl::flat_hash_set<std::string> OneRankGroups(
    const std::vector<ProcessGroup>& groups) {
  int64_t world = 0;
  for (const ProcessGroup& g : groups)
    if (g.name == "0") world = g.MemberCount(0);
  absl::flat_hash_set<std::string> out;
  for (const ProcessGroup& g : groups) {
    const bool whole_world = g.name == "0" || g.desc == "default_pg";
    if (g.MemberCount(world) == 1 && (world > 1 || !whole_world))
      out.insert(g.name);
  }
  return out;
}

}  // namespace

NodeEmitter::NodeEmitter(const OpTable& table, const CollectiveResolver& comms,
                         const KeepPlan& plan,
                         const std::vector<NodeDeps>& deps,
                         const std::vector<ProcessGroup>& groups,
                         const ConvertOptions& options)
    : table_(table),
      comms_(comms),
      plan_(plan),
      deps_(deps),
      groups_(groups),
      options_(options),
      launches_gpu_collective_(table.size(), false),
      gemm_launcher_(table.size(), kNoOp) {
  one_rank_groups_ = OneRankGroups(groups);
  // A GEMM op's longest kernel is its GEMM; the others (split-K reductions,
  // bias copies) keep their own, empty, IOInfo.
  absl::flat_hash_map<uint32_t, uint32_t> longest_kernel;
  for (uint32_t i = 0; i < table.size(); ++i) {
    if (!table.op(i).is_gpu()) continue;
    const uint32_t launcher = table.parent(i);
    if (IsNcclKernelName(table.name(i))) {
      for (uint32_t a = launcher; a != kNoOp; a = table.parent(a)) {
        if (comms.is_owner(a)) {
          launches_gpu_collective_[a] = true;
          break;
        }
      }
    } else if (launcher != kNoOp &&
               (plan.kind(launcher) == OpKind::kGemm ||
                plan.kind(launcher) == OpKind::kBatchedGemm)) {
      auto [it, fresh] = longest_kernel.try_emplace(launcher, i);
      if (!fresh && table.op(i).dur_us > table.op(it->second).dur_us)
        it->second = i;
    }
  }
  for (const auto& [launcher, kernel] : longest_kernel)
    gemm_launcher_[kernel] = launcher;
}

const CommRecord* NodeEmitter::LaunchingCollective(uint32_t i) const {
  for (uint32_t a = table_.parent(i); a != kNoOp; a = table_.parent(a)) {
    const int32_t rec = comms_.record_of(a);
    if (rec >= 0) return &comms_.records()[rec];
  }
  return nullptr;
}

const OpCost& NodeEmitter::CostOf(uint32_t i, absl::string_view text) {
  const HostOp& op = table_.op(i);
  const OpKind kind = plan_.kind(i);
  if (kind == OpKind::kOther || kind == OpKind::kView) {
    cost_ = OpCost();
    cost_.kind = kind;
    if (kind == OpKind::kOther) {
      for (const TensorRef& t : table_.inputs(i))
        cost_.tensor_size_bytes += t.bytes();
      for (const TensorRef& t : table_.outputs(i))
        cost_.tensor_size_bytes += t.bytes();
    }
    return cost_;
  }
  key_.clear();
  absl::StrAppend(&key_, op.name, "|", op.io(text, kInShapes), "|",
                  op.io(text, kInTypes), "|", op.io(text, kOutShapes), "|",
                  op.io(text, kOutTypes));
  auto [it, fresh] = cost_cache_.try_emplace(key_);
  if (fresh) {
    it->second = EstimateOpCost(
        table_.name(i),
        ParseIoInfo(op.io(text, kInShapes), op.io(text, kInTypes)),
        ParseIoInfo(op.io(text, kOutShapes), op.io(text, kOutTypes)));
  }
  return it->second;
}

bool NodeEmitter::SetCommAttrs(const CommRecord& rec, Node* node,
                               ConvertReport* summary) {
  auto* attrs = node->mutable_attr();
  if (rec.kind != CommKind::kCollective && rec.peer < 0) {
    // ASTRA-sim waits forever on a send without comm_dst (and et-sim cannot
    // pair it either): a malformed record, counted and left a COMP node.
    ++summary->skipped_by_reason[kPeerlessP2pReason];
    return false;
  }
  if (rec.kind == CommKind::kCollective &&
      one_rank_groups_.contains(rec.pg_name)) {
    ++summary->skipped_by_reason[kOneRankGroupReason];
    SetInt64(attrs, attr::kCommType, rec.type);
    SetInt64(attrs, attr::kCommSize, std::max<int64_t>(rec.size_bytes, 0));
    SetString(attrs, attr::kPgName, rec.pg_name);
    return false;
  }
  // Every COMM node is issued to the network, whichever side launched it:
  // ASTRA-sim's Workload::issue_comm refuses a comm node with is_cpu_op true,
  // and host-side collectives (gloo, or a 4-byte c10d::allreduce_ on CPU
  // tensors in an NCCL job) have no GPU kernel to stand in for them.
  SetBool(attrs, attr::kIsCpuOp, false);
  if (rec.on_host) SetBool(attrs, attr::kCommOnHost, true);
  if (rec.kind == CommKind::kCollective) {
    node->set_type(ChakraProtoMsg::COMM_COLL_NODE);
    SetInt64(attrs, attr::kCommType, rec.type);
    const std::string type_name(CommTypeName(rec.type));
    ++summary->collectives_by_type[type_name];
    summary->collective_bytes_by_type[type_name] +=
        std::max<int64_t>(rec.size_bytes, 0);
  } else {
    node->set_type(rec.kind == CommKind::kSend
                       ? ChakraProtoMsg::COMM_SEND_NODE
                       : ChakraProtoMsg::COMM_RECV_NODE);
    SetInt32(attrs,
             rec.kind == CommKind::kSend ? attr::kCommDst : attr::kCommSrc,
             static_cast<int32_t>(rec.peer));
    if (rec.tag >= 0)
      SetInt32(attrs, attr::kCommTag, static_cast<int32_t>(rec.tag));
    const std::string type_name = rec.kind == CommKind::kSend ? "SEND" : "RECV";
    ++summary->collectives_by_type[type_name];
    summary->collective_bytes_by_type[type_name] +=
        std::max<int64_t>(rec.size_bytes, 0);
  }
  SetInt64(attrs, attr::kCommSize, std::max<int64_t>(rec.size_bytes, 0));
  if (!rec.dtype.empty()) SetString(attrs, attr::kDtype, rec.dtype);
  if (!rec.pg_name.empty()) SetString(attrs, attr::kPgName, rec.pg_name);
  if (rec.seq >= 0) SetInt64(attrs, attr::kCommSeq, rec.seq);
  if (rec.root >= 0) SetInt64(attrs, attr::kCommRoot, rec.root);
  if (const int64_t work_ns = HostWorkNs(rec); work_ns > 0)
    SetInt64(attrs, attr::kCommWorkNs, work_ns);
  return true;
}

// A host backend (gloo) runs the collective on a worker thread under its own
// record (gloo:all_reduce), waits for peers included; the call record
// (c10d::allreduce_) only queues it. The time from the call to the end of
// that record is when the collective completed for this rank.
int64_t NodeEmitter::HostWorkNs(const CommRecord& rec) const {
  const HostOp& call = table_.op(rec.owner);
  if (!rec.on_host || call.ts_us < 0) return 0;
  for (uint32_t m : rec.members) {
    const HostOp& op = table_.op(m);
    if (!IsWorkRecordName(table_.name(m)) || op.inclusive_dur_us <= 0 ||
        op.ts_us < call.ts_us)
      continue;
    return std::llround((op.ts_us + op.inclusive_dur_us - call.ts_us) * 1e3);
  }
  return 0;
}

void NodeEmitter::ResetNode(uint32_t i, Node* node) {
  // Clear() deletes proto3 submessages, so each node allocated and freed two
  // IOInfo messages and their six strings (8 of the ~19 allocations per node
  // with `--keep all`); they are kept, and overwritten by SetIoInfo.
  std::unique_ptr<ChakraProtoMsg::IOInfo> kept_in(node->release_inputs());
  std::unique_ptr<ChakraProtoMsg::IOInfo> kept_out(node->release_outputs());
  node->Clear();
  if (kept_in != nullptr) node->set_allocated_inputs(kept_in.release());
  if (kept_out != nullptr) node->set_allocated_outputs(kept_out.release());
  node->set_id(table_.op(i).id);
  const absl::string_view name = table_.name(i);
  node->mutable_name()->assign(name.data(), name.size());
}

void NodeEmitter::SetDeps(uint32_t i, Node* node, ConvertReport* summary) {
  for (uint64_t d : deps_[i].ctrl) node->add_ctrl_deps(d);
  // data_deps carry the issue order too: ASTRA-sim's feeders v1/v2 (and
  // Chakra readers of that era) follow data_deps only, and would otherwise run
  // a rank's collectives in any order. Both lists are sorted and unique.
  merged_deps_.clear();
  std::set_union(deps_[i].data.begin(), deps_[i].data.end(),
                 deps_[i].ctrl.begin(), deps_[i].ctrl.end(),
                 std::back_inserter(merged_deps_));
  for (uint64_t d : merged_deps_) node->add_data_deps(d);
  summary->ctrl_deps += deps_[i].ctrl.size();
  summary->data_deps += merged_deps_.size();
}

void NodeEmitter::SetIoInfo(uint32_t io_source, absl::string_view text,
                            Node* node) {
  const HostOp& io_op = table_.op(io_source);
  auto part = [&](IoPart p, std::string* out) {
    CompactJsonTo(io_op.io(text, p), out);
  };
  auto* io_in = node->mutable_inputs();
  part(kInValues, io_in->mutable_values());
  part(kInShapes, io_in->mutable_shapes());
  part(kInTypes, io_in->mutable_types());
  auto* io_out = node->mutable_outputs();
  part(kOutValues, io_out->mutable_values());
  part(kOutShapes, io_out->mutable_shapes());
  part(kOutTypes, io_out->mutable_types());
}

double NodeEmitter::ExclusiveUs(uint32_t i) const {
  const HostOp& op = table_.op(i);
  if (op.exclusive_dur_us >= 0 || op.inclusive_dur_us < 0)
    return op.exclusive_dur_us;
  // Only the span was recorded (an ET+ `dur`): its self time is the span less
  // its host children's, as the Kineto linker derives it from Kineto's CPU
  // ops. GPU children run beside it, not inside it.
  double children_us = 0;
  for (uint32_t c : table_.children(i)) {
    const HostOp& child = table_.op(c);
    if (!child.is_gpu() && child.inclusive_dur_us > 0)
      children_us += child.inclusive_dur_us;
  }
  return std::max(0.0, op.inclusive_dur_us - children_us);
}

void NodeEmitter::SetTimes(uint32_t i, Node* node) {
  const HostOp& op = table_.op(i);
  // A node that carries folded children keeps its inclusive time (see
  // keep_plan.h).
  const bool carries_children =
      options_.granularity == Granularity::kSimulation &&
      !table_.children(i).empty();
  double dur_us = op.is_gpu()        ? op.dur_us
                  : carries_children ? op.inclusive_dur_us
                                     : ExclusiveUs(i);
  if (op.ts_us >= 0) node->set_start_time_micros(WholeMicros(op.ts_us));
  auto* attrs = node->mutable_attr();
  if (dur_us >= 0) {
    node->set_duration_micros(WholeMicros(dur_us));
    SetInt64(attrs, attr::kDurationNs, Nanos(dur_us));
  }
  if (op.inclusive_dur_us >= 0)
    SetInt64(attrs, attr::kInclusiveDurNs, Nanos(op.inclusive_dur_us));
}

void NodeEmitter::SetOpAttrs(uint32_t i, uint32_t io_source,
                             absl::string_view text, Node* node) {
  const HostOp& op = table_.op(i);
  const HostOp& io_op = table_.op(io_source);
  const StringPool& pool = table_.pool();
  auto* attrs = node->mutable_attr();
  // Chakra's attributes, then ours.
  SetInt64(attrs, attr::kRfId, op.rf_id);
  SetInt64(attrs, attr::kFwParent, op.fw_parent);
  SetInt64(attrs, attr::kSeqId, op.seq_id);
  SetInt64(attrs, attr::kScope, op.scope);
  SetInt64(attrs, attr::kTid, op.tid);
  SetInt64(attrs, attr::kFwTid, op.fw_tid);
  SetString(attrs, attr::kOpSchema, pool.Get(op.op_schema));
  SetBool(attrs, attr::kIsCpuOp, !op.is_gpu());
  if (op.parent != 0) SetUint64(attrs, attr::kParentId, op.parent);
  if (plan_.step(i) >= 0) SetInt64(attrs, attr::kStep, plan_.step(i));
  if (!op.is_gpu() && plan_.host_ops(i) > 1) {
    SetInt64(attrs, attr::kHostOps, plan_.host_ops(i));
    if (const int64_t bytes = FoldedPeakBytes(table_, i); bytes > 0)
      SetInt64(attrs, attr::kFoldedPeakBytes, bytes);
  }
  if (op.is_gpu()) {
    SetBool(attrs, attr::kIsGpuOp, true);
    SetInt64(attrs, attr::kStream, op.stream);
    if (op.device >= 0) SetInt64(attrs, attr::kDevice, op.device);
    if (op.category != 0)
      SetString(attrs, attr::kGpuCategory, pool.Get(op.category));
  }
  for (auto [p, name] : {std::pair{kInStrides, attr::kInputStrides},
                         std::pair{kOutStrides, attr::kOutputStrides}}) {
    if (io_op.io_len[p] > 2)
      SetString(attrs, name, CompactJson(io_op.io(text, p)));  // not "", "[]"
  }
  if (io_source != i) SetString(attrs, attr::kIoOp, table_.name(io_source));
  SetTrainingRoleAttrs(i, attrs);
  SetExtraAttrs(op, pool, attrs);
}

// The autograd and optimizer spans are containers, not nodes, at simulation
// granularity; the work under them is stamped with the span's ET id so that
// scaleout/gradients can find each parameter's gradient (and the optimizer
// that waits for them) without names, and the work of a backward pass with
// `autograd_backward` so that the memory model can tell what the forward
// kept for it (docs/memory-model.md).
void NodeEmitter::SetTrainingRoleAttrs(uint32_t i, AttrList* attrs) const {
  bool grad_found = false, optimizer_found = false, backward_found = false;
  for (uint32_t a = i;
       a != kNoOp && !(grad_found && optimizer_found && backward_found);
       a = table_.parent(a)) {
    const absl::string_view name = table_.name(a);
    if (!backward_found &&
        absl::StartsWith(name, "autograd::engine::evaluate_function")) {
      SetBool(attrs, attr::kAutogradBackward, true);
      backward_found = true;
    } else if (!grad_found && name == "torch::autograd::AccumulateGrad") {
      SetUint64(attrs, attr::kGradAccumulator, table_.op(a).id);
      grad_found = true;
    } else if (!optimizer_found && absl::StartsWith(name, "Optimizer.step#")) {
      SetUint64(attrs, attr::kOptimizerStep, table_.op(a).id);
      optimizer_found = true;
    }
  }
  // DDP's reducer all-reduces a bucket from the hook that runs after a
  // gradient's AccumulateGrad, inside the autograd engine's span of it (not
  // under the AccumulateGrad op itself, so not stamped above).
  if (!comms_.is_owner(i) || grad_found) return;
  for (uint32_t a = table_.parent(i); a != kNoOp; a = table_.parent(a)) {
    if (absl::EndsWith(table_.name(a), "torch::autograd::AccumulateGrad")) {
      SetBool(attrs, attr::kGradSync, true);
      return;
    }
  }
}

void NodeEmitter::SetMarker(uint32_t i, Node* node) {
  // Markers, not work. They used to be METADATA_NODEs, which ASTRA-sim's
  // current feeder rejects (its statistics assert on the type); a COMP node
  // with no time and no cost means the same to every reader. The process
  // groups also live in the global metadata, where readers look first.
  auto* attrs = node->mutable_attr();
  SetMarkerAttrs(attrs);
  node->set_duration_micros(0);
  if (IsProcessGroupInitName(table_.name(i)))
    EncodeProcessGroups(groups_, attrs);
}

void NodeEmitter::SetCommunication(uint32_t i, Node* node,
                                   ConvertReport* summary) {
  const int32_t rec = comms_.record_of(i);
  if (table_.op(i).is_gpu() && IsNcclKernelName(table_.name(i))) {
    // The kernel stands for its launching call's collective; an orphan kernel
    // has only what its name says.
    const CommRecord* host = LaunchingCollective(i);
    CommRecord rec_copy;
    if (host != nullptr) rec_copy = *host;
    if (auto s = ParseNcclKernelName(table_.name(i));
        s.has_value() && host == nullptr) {
      rec_copy.kind = s->kind;
      rec_copy.type = s->type;
    }
    SetCommAttrs(rec_copy, node, summary);
  } else if (rec >= 0 && comms_.is_owner(i)) {
    const CommRecord& r = comms_.records()[rec];
    if (r.kind == CommKind::kWait) {
      if (r.seq >= 0) SetInt64(node->mutable_attr(), attr::kWaitSeq, r.seq);
    } else if ((r.kind == CommKind::kCollective || r.kind == CommKind::kSend ||
                r.kind == CommKind::kRecv) &&
               !launches_gpu_collective_[i]) {
      if (options_.collectives_need_kernel) {
        ++summary->skipped_by_reason[kCutCollectiveReason];
      } else {
        SetCommAttrs(r, node, summary);
      }
    }
  } else if (rec >= 0) {
    // --keep all: another record of a collective counted once at its call.
    SetUint64(node->mutable_attr(), attr::kCollectiveId,
              table_.op(comms_.records()[rec].owner).id);
  }
}

void NodeEmitter::SetSizeAttrs(uint32_t i, uint32_t io_source,
                               absl::string_view text, Node* node,
                               ConvertReport* summary) {
  auto* attrs = node->mutable_attr();
  if (node->type() == ChakraProtoMsg::COMP_NODE) {
    const OpCost& cost = CostOf(io_source, text);
    SetInt64(attrs, attr::kNumOps, cost.num_ops);
    SetUint64(attrs, attr::kTensorSize,
              static_cast<uint64_t>(cost.tensor_size_bytes));
    SetString(attrs, attr::kOpKind, OpKindName(cost.kind));
    if (cost.kind == OpKind::kOther && !table_.op(i).is_gpu() &&
        comms_.record_of(i) < 0) {
      ++summary->unknown_ops[std::string(table_.name(i))];
    }
  } else if (node->type() != ChakraProtoMsg::METADATA_NODE) {
    SetUint64(attrs, attr::kTensorSize,
              static_cast<uint64_t>(std::max<int64_t>(
                  GetInt(*node, attr::kCommSize).value_or(0), 0)));
  }
}

void NodeEmitter::Emit(uint32_t i, absl::string_view text, Node* node,
                       ConvertReport* summary) {
  const uint32_t io_source = IoSourceOf(i);
  // Attributes are a list, so these steps write them in a fixed order.
  ResetNode(i, node);
  SetDeps(i, node, summary);
  SetIoInfo(io_source, text, node);
  SetTimes(i, node);
  SetOpAttrs(i, io_source, text, node);
  node->set_type(ChakraProtoMsg::COMP_NODE);
  if (IsProcessGroupInitName(table_.name(i)) ||
      IsProfilerRootName(table_.name(i))) {
    SetMarker(i, node);
  } else {
    SetCommunication(i, node, summary);
    SetSizeAttrs(i, io_source, text, node, summary);
  }
  ++summary->nodes_by_type[ChakraProtoMsg::NodeType_Name(node->type())];
}

}  // namespace et::convert
