// Dependency computation; see dependency_builder.h.
#include "converter/graph/dependency_builder.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "converter/graph/cross_thread_waits.h"

namespace et::convert {
namespace {

void SortUnique(std::vector<uint64_t>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

// Records dependencies of nodes on ops: each target is replaced by the node
// standing for it (KeepPlan::stand_in), and a target with none is counted in
// the stats instead of being dropped silently.
class DepAdder {
 public:
  DepAdder(const OpTable& table, const KeepPlan& plan,
           std::vector<NodeDeps>* deps, DependencyStats* stats)
      : table_(table), plan_(plan), deps_(*deps), stats_(*stats) {}

  void Ctrl(uint32_t node, uint32_t target) {
    Add(node, target, &NodeDeps::ctrl);
  }
  void Data(uint32_t node, uint32_t target) {
    Add(node, target, &NodeDeps::data);
  }
  // A linked trace's inter_thread_dep / sync_dep, named by ET id.
  void LinkedCtrl(uint32_t node, uint64_t id) {
    auto target = table_.Find(id);
    if (!target.has_value()) ++stats_.missing_targets;
    Ctrl(node, target.value_or(kNoOp));
  }

 private:
  void Add(uint32_t node, uint32_t target,
           std::vector<uint64_t> NodeDeps::*list) {
    if (target == kNoOp) {
      ++stats_.unresolved;
      return;
    }
    const uint32_t s = plan_.stand_in(target);
    if (s == kNoOp) {
      ++stats_.unresolved;
      return;
    }
    if (s == node) return;
    (deps_[node].*list).push_back(table_.op(s).id);
  }

  const OpTable& table_;
  const KeepPlan& plan_;
  std::vector<NodeDeps>& deps_;
  DependencyStats& stats_;
};

// Control: the caller, issue order per thread, stream order per GPU stream,
// the linked trace's deps, and a wait's collective.
void AddControlDeps(const OpTable& table, const CollectiveResolver& comms,
                    const KeepPlan& plan, DepAdder* add) {
  absl::flat_hash_map<int64_t, uint32_t> last_on_thread;
  // Keyed by the (device, stream) pair itself: packing them as device << 32
  // was undefined for device -1 and collided for streams >= 2^32.
  absl::flat_hash_map<std::pair<int32_t, int64_t>, uint32_t> last_on_stream;
  absl::flat_hash_map<int64_t, uint32_t> collective_by_seq;
  const uint32_t n = static_cast<uint32_t>(table.size());
  for (uint32_t i = 0; i < n; ++i) {  // ascending id == start order
    if (!plan.is_node(i)) continue;
    const HostOp& op = table.op(i);
    if (plan.caller(i) != kNoOp) add->Ctrl(i, plan.caller(i));
    if (op.is_gpu()) {
      auto [it, fresh] =
          last_on_stream.try_emplace(std::make_pair(op.device, op.stream), i);
      if (!fresh) add->Ctrl(i, it->second);
      it->second = i;
    } else {
      auto [it, fresh] = last_on_thread.try_emplace(op.tid, i);
      if (!fresh && it->second != plan.caller(i)) add->Ctrl(i, it->second);
      it->second = i;
    }
    for (uint64_t id : op.inter_thread_deps) add->LinkedCtrl(i, id);
    for (uint64_t id : op.sync_deps) add->LinkedCtrl(i, id);
    const int32_t rec = comms.record_of(i);
    if (rec >= 0 && comms.is_owner(i)) {
      const CommRecord& r = comms.records()[rec];
      if (r.kind == CommKind::kWait) {
        auto it = collective_by_seq.find(r.seq);
        if (it != collective_by_seq.end()) add->Ctrl(i, it->second);
      } else if (r.seq >= 0) {
        collective_by_seq[r.seq] = i;
      }
    }
  }
}

// Issue order per process group: each collective's node depends on the node
// of the group's previous collective, in recorded (call) order. NCCL and gloo
// require every rank to issue a group's collectives in one order; a graph that
// leaves two of them independent lets a consumer that issues whatever is ready
// first (ASTRA-sim: the lowest ready id, one collective in flight per rank)
// issue them in different orders on different ranks, which stalls. A
// collective's node is the NCCL kernel it launched, else its call. Sends and
// receives are left alone: a pair exchanged both ways (batch_isend_irecv) would
// wait on itself.
void AddGroupOrderDeps(const OpTable& table, const CollectiveResolver& comms,
                       const KeepPlan& plan, DepAdder* add) {
  struct Entry {
    uint32_t call;  // the op that issued it (orders the group)
    uint32_t node;  // the op that is its node
  };
  const uint32_t n = static_cast<uint32_t>(table.size());
  auto collective_call = [&](uint32_t op) -> int32_t {
    const int32_t r = comms.record_of(op);
    return r >= 0 && comms.records()[r].kind == CommKind::kCollective ? r : -1;
  };
  std::vector<bool> launches_kernel(n, false);
  std::vector<Entry> entries;
  for (uint32_t i = 0; i < n; ++i) {
    if (!plan.is_node(i) || !table.op(i).is_gpu() ||
        !IsNcclKernelName(table.name(i))) {
      continue;
    }
    for (uint32_t a = table.parent(i); a != kNoOp; a = table.parent(a)) {
      if (!comms.is_owner(a)) continue;
      if (collective_call(a) >= 0) entries.push_back({a, i});
      launches_kernel[a] = true;
      break;
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (plan.is_node(i) && comms.is_owner(i) && !launches_kernel[i] &&
        collective_call(i) >= 0) {
      entries.push_back({i, i});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.call != b.call ? a.call < b.call : a.node < b.node;
  });
  absl::flat_hash_map<std::string, uint32_t> last_in_group;
  for (const Entry& e : entries) {
    const std::string& group = comms.records()[comms.record_of(e.call)].pg_name;
    auto [it, fresh] = last_in_group.try_emplace(group, e.node);
    if (!fresh) add->Ctrl(e.node, it->second);
    it->second = e.node;
  }
}

// Data: sweeps starts in id order and publishes an op's outputs once its
// subtree has ended, so a consumer depends on the op that last wrote the
// tensor before it began.
void AddDataDeps(const OpTable& table, const KeepPlan& plan, DepAdder* add) {
  const uint32_t n = static_cast<uint32_t>(table.size());
  using Pending = std::pair<uint64_t, uint32_t>;  // (subtree max id, op)
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>>
      open;
  absl::flat_hash_map<int64_t, uint32_t> last_writer;
  last_writer.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const HostOp& op = table.op(i);
    while (!open.empty() && open.top().first < op.id) {
      for (const TensorRef& t : table.outputs(open.top().second)) {
        last_writer[t.tensor_id] = open.top().second;
      }
      open.pop();
    }
    if (plan.is_node(i)) {
      for (const TensorRef& t : table.inputs(i)) {
        auto it = last_writer.find(t.tensor_id);
        if (it != last_writer.end()) add->Data(i, it->second);
      }
    }
    if (op.num_outputs > 0) open.emplace(table.subtree_max_id(i), i);
  }
}

// True when some node depends on a node with an id not below its own (the
// lists are sorted, so their last element says).
bool HasForwardDep(const OpTable& table, const std::vector<NodeDeps>& deps) {
  for (uint32_t i = 0; i < deps.size(); ++i) {
    for (const auto* list : {&deps[i].ctrl, &deps[i].data}) {
      if (!list->empty() && list->back() >= table.op(i).id) return true;
    }
  }
  return false;
}

// Kahn's algorithm over the dependencies: for each op, how many of its deps
// never finished (all zero when the graph is acyclic).
std::vector<uint32_t> UnfinishedDeps(const OpTable& table,
                                     const std::vector<NodeDeps>& deps) {
  const uint32_t n = static_cast<uint32_t>(table.size());
  std::vector<uint32_t> pending(n, 0);
  std::vector<std::vector<uint32_t>> users(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (const auto* list : {&deps[i].ctrl, &deps[i].data}) {
      for (uint64_t id : *list) {
        users[*table.Find(id)].push_back(i);
        ++pending[i];
      }
    }
  }
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    uint32_t i = ready.back();
    ready.pop_back();
    for (uint32_t u : users[i]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  return pending;
}

// The error naming one cycle among the ops Kahn's algorithm left unfinished
// (`pending`, at least one non-zero): walks back through unfinished deps until
// an op repeats, which closes a cycle.
absl::Status CycleError(const std::string& path, const OpTable& table,
                        const std::vector<NodeDeps>& deps,
                        const std::vector<uint32_t>& pending) {
  auto next_pending = [&](uint32_t i) {
    for (const auto* list : {&deps[i].ctrl, &deps[i].data}) {
      for (uint64_t id : *list) {
        const uint32_t d = *table.Find(id);
        if (pending[d] != 0) return d;
      }
    }
    return i;
  };
  uint32_t cur = 0;
  while (pending[cur] == 0) ++cur;
  std::vector<uint32_t> walk;
  std::vector<bool> seen(table.size(), false);
  for (; !seen[cur]; cur = next_pending(cur)) {
    seen[cur] = true;
    walk.push_back(cur);
  }
  std::vector<uint64_t> cycle;
  for (auto it = std::find(walk.begin(), walk.end(), cur); it != walk.end();
       ++it) {
    cycle.push_back(table.op(*it).id);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: node %d: dependency cycle through nodes %s", path,
                      cycle.front(), absl::StrJoin(cycle, " <- ")));
}

}  // namespace

absl::Status DependencyBuilder::Build(const std::string& path,
                                      const OpTable& table,
                                      const CollectiveResolver& comms,
                                      const KeepPlan& plan,
                                      std::vector<NodeDeps>* deps,
                                      bool timed_waits) {
  deps->assign(table.size(), {});
  stats_ = {};
  DepAdder add(table, plan, deps, &stats_);
  AddControlDeps(table, comms, plan, &add);
  AddGroupOrderDeps(table, comms, plan, &add);
  AddDataDeps(table, plan, &add);
  if (timed_waits) {
    for (const CrossThreadWait& w : FindCrossThreadWaits(table, plan)) {
      add.Ctrl(w.op, w.waits_for);
      ++stats_.cross_thread_waits;
    }
  }
  for (auto& d : *deps) {
    SortUnique(&d.ctrl);
    SortUnique(&d.data);
  }
  // Callers, issue order and last writers all precede their node, so only
  // linked-trace deps (inter_thread_dep, sync_dep) can point forward; without
  // one the graph is acyclic by construction and the check below (a second pass
  // over every dep) is skipped.
  if (!HasForwardDep(table, *deps)) return absl::OkStatus();
  const std::vector<uint32_t> pending = UnfinishedDeps(table, *deps);
  if (std::all_of(pending.begin(), pending.end(),
                  [](uint32_t p) { return p == 0; })) {
    return absl::OkStatus();
  }
  return CycleError(path, table, *deps, pending);
}

}  // namespace et::convert
