// Synthesized data-parallel sync; see dp_sync.h and docs/dp-sync.md.
#include "scaleout/dp_sync.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/gradients.h"

namespace et::scaleout {
namespace {

using ChakraProtoMsg::CollectiveCommType;
using ChakraProtoMsg::Node;

// The synthesized sync's nodes, before they are put on a graph or a model.
struct DpSyncNodes {
  bool synthesized = false;  // false: nothing to add (none, or recorded)
  std::vector<Node> added;   // ids above the model's
  std::vector<std::pair<NodeIndex, uint64_t>> waits;  // (node, dep id)
};

// Makes the synthesized collectives of a model's sync: new nodes (ids above
// the model's) and the waits of the model's nodes on them, applied by the
// caller to a graph or to the model.
class SyncBuilder {
 public:
  SyncBuilder(const NodeModel& model, const DpSyncOptions& options)
      : model_(model), options_(options) {
    uint64_t max_id = 0;
    int64_t max_stream = 0;
    for (NodeIndex i = 0; i < model.size(); ++i) {
      max_id = std::max(max_id, model.id(i));
      if (model.queue(i).kind == QueueKind::kStream)
        max_stream = std::max(max_stream, model.queue(i).number);
    }
    next_id_ = max_id + 1;
    stream_ = max_stream + 1;
  }

  // A collective depending on `deps` (node ids); returns its id.
  uint64_t Add(absl::string_view name, CollectiveCommType type, int64_t bytes,
               Dtype dtype, int64_t step, std::vector<uint64_t> deps) {
    Node n;
    n.set_id(next_id_++);
    n.set_name(std::string(name));
    n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (uint64_t d : deps) n.add_data_deps(d);
    auto* attrs = n.mutable_attr();
    SetBool(attrs, attr::kIsCpuOp, false);
    SetInt64(attrs, attr::kCommType, type);
    SetInt64(attrs, attr::kCommSize, bytes);
    SetString(attrs, attr::kPgName, options_.pg_name);
    SetInt64(attrs, attr::kStream, stream_);
    if (step >= 0) SetInt64(attrs, attr::kStep, step);
    if (dtype != Dtype::kUnknown)
      SetString(attrs, attr::kDtype, DtypeName(dtype));
    SetBool(attrs, attr::kSynthesized, true);
    added_.push_back(std::move(n));
    return added_.back().id();
  }

  // Makes the model's node `target` wait for node `dep_id`.
  void Wait(NodeIndex target, uint64_t dep_id) {
    waits_.emplace_back(target, dep_id);
  }

  uint64_t id(NodeIndex i) const { return model_.id(i); }
  int64_t added() const { return static_cast<int64_t>(added_.size()); }

  // What a gradient's all-reduce waits for: the host op that makes it ready
  // and, in a linked GPU trace, the device ops launched by it and by the ops
  // whose outputs it reads (AccumulateGrad often only detaches the gradient
  // that a backward op's kernel wrote). DDP's collective is enqueued behind
  // the compute stream's work, so it cannot start before that kernel ends.
  // A device node that makes it ready (its kernel) launches nothing: its own
  // device users are the next kernels on its stream, which may be the
  // optimizer's, and waiting for them made a cycle (issue 48).
  void AppendReadyIds(NodeIndex ready, std::vector<uint64_t>* ids) const {
    ids->push_back(id(ready));
    const DepGraph& deps = model_.deps();
    std::vector<NodeIndex> launchers;
    if (model_.on_host(ready)) launchers.push_back(ready);
    for (NodeIndex d : deps.data_deps(ready)) {
      if (model_.on_host(d)) launchers.push_back(d);
    }
    for (NodeIndex l : launchers) {
      for (auto users : {deps.data_users(l), deps.ctrl_users(l)}) {
        for (NodeIndex u : users) {
          const NodeKind kind = model_.kind(u);
          if (!model_.on_host(u) &&
              (kind == NodeKind::kKernel || kind == NodeKind::kGemm ||
               kind == NodeKind::kMemory)) {
            ids->push_back(id(u));
          }
        }
      }
    }
  }
  DpSyncNodes TakeNodes() {
    return {true, std::move(added_), std::move(waits_)};
  }

 private:
  const NodeModel& model_;
  const DpSyncOptions& options_;
  std::vector<Node> added_;
  std::vector<std::pair<NodeIndex, uint64_t>> waits_;
  uint64_t next_id_ = 1;
  int64_t stream_ = 1;
};

std::vector<BucketInput> ReadyInputs(const Iteration& it) {
  std::vector<BucketInput> inputs;
  for (int k = 0; k < static_cast<int>(it.gradients.size()); ++k)
    inputs.push_back({k, it.gradients[k].bytes, it.gradients[k].dtype});
  return inputs;
}

std::vector<uint64_t> ReadyIds(const SyncBuilder& b, const Iteration& it,
                               const Bucket& bucket) {
  std::vector<uint64_t> ids;
  for (int k : bucket.members)
    b.AppendReadyIds(it.gradients[k].ready_node, &ids);
  return ids;
}

int64_t ShardBytes(int64_t bytes, int64_t dp) { return (bytes + dp - 1) / dp; }

// The trace holds its own data-parallel sync when, in some iteration, the
// all-reduces and reduce-scatters issued between its first ready gradient and
// its optimizer carry at least the iteration's gradient bytes.
bool SyncIsRecorded(const NodeModel& model, const GradientsResult& grads) {
  for (const Iteration& it : grads.iterations) {
    const NodeIndex end = it.optimizer_first.value_or(model.size());
    int64_t bytes = 0;
    for (NodeIndex i = it.gradients.front().first_node; i < end; ++i) {
      const CommSpec* c = model.comm(i);
      if (c == nullptr || model.kind(i) != NodeKind::kCollective) continue;
      if (c->type == ChakraProtoMsg::ALL_REDUCE ||
          c->type == ChakraProtoMsg::REDUCE_SCATTER)
        bytes += c->bytes;
    }
    if (bytes >= it.Bytes()) return true;
  }
  return false;
}

void AddDdp(const Iteration& it, const std::vector<Bucket>& buckets,
            SyncBuilder* b) {
  for (const Bucket& bucket : buckets) {
    const uint64_t id =
        b->Add("ddp:all_reduce", ChakraProtoMsg::ALL_REDUCE, bucket.bytes,
               bucket.dtype, it.step, ReadyIds(*b, it, bucket));
    if (it.optimizer_first) b->Wait(*it.optimizer_first, id);
  }
}

void AddZero(const Iteration& it, const Iteration* next,
             const std::vector<Bucket>& buckets, int64_t dp, SyncBuilder* b) {
  for (const Bucket& bucket : buckets) {
    const uint64_t id =
        b->Add("zero:reduce_scatter", ChakraProtoMsg::REDUCE_SCATTER,
               bucket.bytes, bucket.dtype, it.step, ReadyIds(*b, it, bucket));
    if (it.optimizer_first) b->Wait(*it.optimizer_first, id);
  }
  const NodeIndex after =
      it.optimizer_last.value_or(it.gradients.back().ready_node);
  for (const Bucket& bucket : buckets) {
    const uint64_t id = b->Add("zero:all_gather", ChakraProtoMsg::ALL_GATHER,
                               ShardBytes(bucket.bytes, dp), bucket.dtype,
                               it.step, {b->id(after)});
    if (next != nullptr) b->Wait(next->first_node, id);
  }
}

void AddFsdp(const Iteration& it, const Iteration* previous,
             const std::vector<Bucket>& units, int64_t dp, SyncBuilder* b) {
  std::vector<uint64_t> after_update;
  if (previous != nullptr && previous->optimizer_last)
    after_update.push_back(b->id(*previous->optimizer_last));
  // Forward: units in registration order (the reverse of ready order).
  const NodeIndex backward_start = it.gradients.front().first_node;
  for (auto u = units.rbegin(); u != units.rend(); ++u) {
    const uint64_t id =
        b->Add("fsdp:all_gather", ChakraProtoMsg::ALL_GATHER,
               ShardBytes(u->bytes, dp), u->dtype, it.step, after_update);
    if (u == units.rbegin() && it.first_node < backward_start)
      b->Wait(it.first_node, id);
    b->Wait(backward_start, id);
  }
  // Backward: gather unit u while unit u-1 computes, free it after its last
  // gradient by reducing and scattering the gradients.
  for (size_t u = 0; u < units.size(); ++u) {
    const NodeIndex unit_first =
        it.gradients[units[u].members.front()].first_node;
    // Prefetched during the previous unit's backward; units of different
    // dtypes can interleave in ready order, and a gather never waits for
    // work after its own unit's.
    std::vector<uint64_t> prefetch_after;
    if (u > 0) {
      const NodeIndex previous_first =
          it.gradients[units[u - 1].members.front()].first_node;
      if (previous_first < unit_first)
        prefetch_after.push_back(b->id(previous_first));
    }
    const uint64_t gather =
        b->Add("fsdp:all_gather", ChakraProtoMsg::ALL_GATHER,
               ShardBytes(units[u].bytes, dp), units[u].dtype, it.step,
               prefetch_after);
    b->Wait(unit_first, gather);
    const uint64_t reduce = b->Add(
        "fsdp:reduce_scatter", ChakraProtoMsg::REDUCE_SCATTER, units[u].bytes,
        units[u].dtype, it.step, ReadyIds(*b, it, units[u]));
    if (it.optimizer_first) b->Wait(*it.optimizer_first, reduce);
  }
}

}  // namespace

ChakraProtoMsg::GlobalMetadata DpSyncMetadata(
    ChakraProtoMsg::GlobalMetadata meta, const DpSyncOptions& options) {
  std::vector<ProcessGroup> groups = DecodeProcessGroups(meta.attr());
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [&](const ProcessGroup& g) {
                                return g.name == options.pg_name;
                              }),
               groups.end());
  ProcessGroup dp;
  dp.name = options.pg_name;
  dp.desc = "data_parallel (synthesized)";
  dp.size = options.dp_size;
  dp.ranks = options.dp_ranks;
  groups.push_back(dp);
  EncodeProcessGroups(groups, meta.mutable_attr());
  return meta;
}

namespace {

std::string BucketText(const std::vector<Bucket>& buckets) {
  std::vector<std::string> sizes;
  for (const Bucket& b : buckets) sizes.push_back(absl::StrCat(b.bytes));
  return absl::StrJoin(sizes, " + ");
}

}  // namespace

absl::string_view DpSyncModeName(DpSyncMode mode) {
  switch (mode) {
    case DpSyncMode::kNone:
      return "none";
    case DpSyncMode::kDdp:
      return "ddp";
    case DpSyncMode::kZero:
      return "zero";
    case DpSyncMode::kFsdp:
      return "fsdp";
  }
  return "none";
}

absl::StatusOr<DpSyncMode> ParseDpSyncMode(absl::string_view text) {
  for (DpSyncMode m : {DpSyncMode::kNone, DpSyncMode::kDdp, DpSyncMode::kZero,
                       DpSyncMode::kFsdp}) {
    if (text == DpSyncModeName(m)) return m;
  }
  // The ZeRO stages by number (their memory: scaleout/memory_at_layout.h):
  // stages 1 and 2 communicate as `zero`, stage 3 as FSDP's full shard.
  if (text == "zero1" || text == "zero2") return DpSyncMode::kZero;
  if (text == "zero3") return DpSyncMode::kFsdp;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown data-parallel sync '", text,
      "' (ddp, zero1, zero2, zero3, zero (= zero2), fsdp or none)"));
}

namespace {

// The sync of `model` as `options` ask: what AddDpSync says, its nodes in
// `nodes`.
absl::StatusOr<DpSyncResult> PlanDpSync(const NodeModel& model,
                                        const DpSyncOptions& options,
                                        DpSyncNodes* nodes) {
  DpSyncResult result;
  if (options.mode == DpSyncMode::kNone || options.dp_size <= 1) {
    result.note = options.mode == DpSyncMode::kNone
                      ? "data-parallel sync: none (--dp-sync none)"
                      : "data-parallel sync: none (one replica)";
    return result;
  }
  if (options.bucket_cap_bytes <= 0 || options.first_bucket_bytes <= 0)
    return absl::InvalidArgumentError("bucket sizes must be positive");
  ASSIGN_OR_RETURN(GradientsResult grads, FindGradients(model));
  if (options.tp != options.recorded_tp && options.tp > 0 &&
      options.tp_split_storages != nullptr) {
    for (Iteration& it : grads.iterations) {
      for (Gradient& g : it.gradients) {
        if (g.storage_id != 0 &&
            options.tp_split_storages->contains(g.storage_id))
          g.bytes =
              (g.bytes * options.recorded_tp + options.tp - 1) / options.tp;
      }
    }
  }
  if (options.ep_other_storages != nullptr) {
    for (Iteration& it : grads.iterations) {
      it.gradients.erase(
          std::remove_if(it.gradients.begin(), it.gradients.end(),
                         [&](const Gradient& g) {
                           return g.storage_id != 0 &&
                                  options.ep_other_storages->contains(
                                      g.storage_id);
                         }),
          it.gradients.end());
    }
  }
  const Iteration& first = grads.iterations.front();
  result.gradients = static_cast<int>(first.gradients.size());
  result.gradient_bytes = first.Bytes();
  result.iterations = static_cast<int>(grads.iterations.size());
  result.buckets = RebuiltBuckets(ReadyInputs(first), options.bucket_cap_bytes,
                                  options.first_bucket_bytes);
  if (SyncIsRecorded(model, grads)) {
    result.recorded = true;
    result.note = absl::StrFormat(
        "data-parallel sync: recorded (the trace's all-reduces and "
        "reduce-scatters carry its %d gradients' %d bytes); kept, none "
        "synthesized",
        result.gradients, result.gradient_bytes);
    return result;
  }
  SyncBuilder b(model, options);
  for (size_t k = 0; k < grads.iterations.size(); ++k) {
    const Iteration& it = grads.iterations[k];
    const std::vector<Bucket> buckets = RebuiltBuckets(
        ReadyInputs(it), options.bucket_cap_bytes, options.first_bucket_bytes);
    const Iteration* next =
        k + 1 < grads.iterations.size() ? &grads.iterations[k + 1] : nullptr;
    const Iteration* previous = k > 0 ? &grads.iterations[k - 1] : nullptr;
    switch (options.mode) {
      case DpSyncMode::kDdp:
        AddDdp(it, buckets, &b);
        break;
      case DpSyncMode::kZero:
        AddZero(it, next, buckets, options.dp_size, &b);
        break;
      case DpSyncMode::kFsdp:
        AddFsdp(it, previous, buckets, options.dp_size, &b);
        break;
      case DpSyncMode::kNone:
        break;
    }
  }
  result.collectives_added = b.added();
  *nodes = b.TakeNodes();
  result.note = DpSyncNote(result, options);
  return result;
}

}  // namespace

absl::StatusOr<DpSyncResult> AddDpSync(const Graph& graph,
                                       const DpSyncOptions& options) {
  ModelOptions model_options;
  model_options.keep_io = false;
  DpSyncNodes nodes;
  ASSIGN_OR_RETURN(
      DpSyncResult result,
      PlanDpSync(NodeModel::FromGraph(graph, model_options), options, &nodes));
  if (!nodes.synthesized) return result;
  std::vector<Node> all = graph.nodes();
  for (const auto& [target, dep] : nodes.waits) all[target].add_data_deps(dep);
  for (Node& n : nodes.added) all.push_back(std::move(n));
  result.graph =
      Graph::Build(DpSyncMetadata(graph.metadata(), options), std::move(all));
  return result;
}

absl::StatusOr<DpSyncResult> AddDpSync(const NodeModel& model,
                                       const DpSyncOptions& options,
                                       const ModelOptions& model_options) {
  DpSyncNodes nodes;
  ASSIGN_OR_RETURN(DpSyncResult result, PlanDpSync(model, options, &nodes));
  if (!nodes.synthesized) return result;
  NodeModel copy = model;
  ASSIGN_OR_RETURN(result.model,
                   NodeModel::WithAddedNodes(
                       &copy, DpSyncMetadata(model.metadata(), options),
                       nodes.added, nodes.waits, model_options));
  return result;
}

absl::StatusOr<DpSyncResult> AddDpSync(NodeModel* model,
                                       const DpSyncOptions& options,
                                       const ModelOptions& model_options) {
  DpSyncNodes nodes;
  ASSIGN_OR_RETURN(DpSyncResult result, PlanDpSync(*model, options, &nodes));
  if (!nodes.synthesized) return result;
  ASSIGN_OR_RETURN(result.model,
                   NodeModel::WithAddedNodes(
                       model, DpSyncMetadata(model->metadata(), options),
                       nodes.added, nodes.waits, model_options));
  return result;
}

bool DpSyncNodesIndependentOfDp(DpSyncMode mode) {
  return mode == DpSyncMode::kDdp;
}

std::string DpSyncNote(const DpSyncResult& result,
                       const DpSyncOptions& options) {
  return absl::StrFormat(
      "data-parallel sync: synthesized %s over %d replicas (group '%s'): %d "
      "gradients, %d bytes, in %d buckets per iteration (%s bytes, in launch "
      "order), %d collectives in %d iterations",
      DpSyncModeName(options.mode), options.dp_size, options.pg_name,
      result.gradients, result.gradient_bytes,
      static_cast<int>(result.buckets.size()), BucketText(result.buckets),
      result.collectives_added, result.iterations);
}

}  // namespace et::scaleout
