// Dependency computation; see dependency_builder.h.
#include "converter/dependency_builder.h"

#include <algorithm>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et::convert {
namespace {

void SortUnique(std::vector<uint64_t>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

absl::Status DependencyBuilder::Build(const std::string& path,
                                      const OpTable& table,
                                      const CollectiveResolver& comms,
                                      const KeepPlan& plan,
                                      std::vector<NodeDeps>* deps) {
  const uint32_t n = static_cast<uint32_t>(table.size());
  deps->assign(n, {});
  stats_ = {};
  auto add = [&](uint32_t node, uint32_t target, bool data) {
    if (target == kNoOp) {
      ++stats_.unresolved;
      return;
    }
    const uint32_t s = plan.stand_in(target);
    if (s == kNoOp) {
      ++stats_.unresolved;
      return;
    }
    if (s == node) return;
    ((*deps)[node].*(data ? &NodeDeps::data : &NodeDeps::ctrl))
        .push_back(table.op(s).id);
  };
  // Control: caller, issue order per thread, stream order per GPU stream.
  absl::flat_hash_map<int64_t, uint32_t> last_on_thread;
  // Keyed by the (device, stream) pair itself: packing them as device << 32
  // was undefined for device -1 and collided for streams >= 2^32.
  absl::flat_hash_map<std::pair<int32_t, int64_t>, uint32_t> last_on_stream;
  absl::flat_hash_map<int64_t, uint32_t> collective_by_seq;
  for (uint32_t i = 0; i < n; ++i) {  // ascending id == start order
    if (!plan.is_node(i)) continue;
    const HostOp& op = table.op(i);
    if (plan.caller(i) != kNoOp) add(i, plan.caller(i), false);
    if (op.is_gpu()) {
      auto [it, fresh] =
          last_on_stream.try_emplace(std::make_pair(op.device, op.stream), i);
      if (!fresh) add(i, it->second, false);
      it->second = i;
    } else {
      auto [it, fresh] = last_on_thread.try_emplace(op.tid, i);
      if (!fresh && it->second != plan.caller(i)) add(i, it->second, false);
      it->second = i;
    }
    for (uint64_t id : op.inter_thread_deps) {
      auto target = table.Find(id);
      if (!target.has_value()) ++stats_.missing_targets;
      add(i, target.value_or(kNoOp), false);
    }
    for (uint64_t id : op.sync_deps) {
      auto target = table.Find(id);
      if (!target.has_value()) ++stats_.missing_targets;
      add(i, target.value_or(kNoOp), false);
    }
    const int32_t rec = comms.record_of(i);
    if (rec >= 0 && comms.is_owner(i)) {
      const CommRecord& r = comms.records()[rec];
      if (r.kind == CommKind::kWait) {
        auto it = collective_by_seq.find(r.seq);
        if (it != collective_by_seq.end()) add(i, it->second, false);
      } else if (r.seq >= 0) {
        collective_by_seq[r.seq] = i;
      }
    }
  }
  // Data: sweep starts in id order; publish an op's outputs once its subtree
  // has ended.
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
        if (it != last_writer.end()) add(i, it->second, true);
      }
    }
    if (op.num_outputs > 0) open.emplace(table.subtree_max_id(i), i);
  }
  for (auto& d : *deps) {
    SortUnique(&d.ctrl);
    SortUnique(&d.data);
  }
  // Callers, issue order and last writers all precede their node, so only
  // linked-trace deps (inter_thread_dep, sync_dep) can point forward; without
  // one the graph is acyclic by construction and the check below (a second pass
  // over every dep) is skipped.
  bool forward = false;
  for (uint32_t i = 0; i < n && !forward; ++i) {
    for (const auto* list : {&(*deps)[i].ctrl, &(*deps)[i].data}) {
      forward |=
          !list->empty() && list->back() >= table.op(i).id;  // lists are sorted
    }
  }
  if (!forward) return absl::OkStatus();
  std::vector<uint32_t> pending(n, 0);
  std::vector<std::vector<uint32_t>> users(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (const auto* list : {&(*deps)[i].ctrl, &(*deps)[i].data}) {
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
  size_t done = 0;
  while (!ready.empty()) {
    uint32_t i = ready.back();
    ready.pop_back();
    ++done;
    for (uint32_t u : users[i]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  if (done == n) return absl::OkStatus();
  // Walk back through unfinished deps until an op repeats: that closes a cycle.
  auto next_pending = [&](uint32_t i) {
    for (const auto* list : {&(*deps)[i].ctrl, &(*deps)[i].data}) {
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
  std::vector<bool> seen(n, false);
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

}  // namespace et::convert
