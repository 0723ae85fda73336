// Operator-granularity policy; see keep_plan.h.
#include "converter/graph/keep_plan.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"
#include "step/step_model.h"

namespace et::convert {
namespace {

// Ops whose own cost model covers their children's work.
bool FoldsChildren(OpKind kind) {
  return kind != OpKind::kOther && kind != OpKind::kView;
}

}  // namespace

bool IsProfilerRootName(absl::string_view name) {
  return absl::StartsWith(name, "[pytorch|profiler|");
}

bool IsProcessGroupInitName(absl::string_view name) {
  return name == "## process_group:init ##";
}

// Ops on other threads (the autograd engine's) are not nested under the main
// thread's ProfilerStep#N span, but ET ids are a global start order: an op
// started while step N was open has an id within [span id, largest id in the
// span's subtree].
void KeepPlan::AssignStepsByIdRange(const OpTable& table) {
  struct Span {
    uint64_t first, last;
    int64_t step;
  };
  std::vector<Span> spans;
  for (uint32_t i = 0; i < table.size(); ++i) {
    const int64_t step = StepNumberOfName(table.name(i));
    if (step >= 0)
      spans.push_back({table.op(i).id, table.subtree_max_id(i), step});
  }
  if (spans.empty())
    return;  // ids ascend with i, so spans are sorted by `first`
  for (uint32_t i = 0; i < table.size(); ++i) {
    // A GPU op's step is its launcher's; Kineto-linked GPU ops have ids after
    // every ET id, so an id range says nothing about them.
    if (step_[i] >= 0 || table.op(i).is_gpu()) continue;
    const uint64_t id = table.op(i).id;
    auto it =
        std::upper_bound(spans.begin(), spans.end(), id,
                         [](uint64_t v, const Span& s) { return v < s.first; });
    if (it != spans.begin() && id <= std::prev(it)->last)
      step_[i] = std::prev(it)->step;
  }
  // GPU ops launched by ops that only now have a step.
  for (uint32_t i : table.preorder()) {
    const uint32_t p = table.parent(i);
    if (step_[i] < 0 && table.op(i).is_gpu() && p != kNoOp) step_[i] = step_[p];
  }
}

// An ET without step ops: each linked host op is of the Kineto step its start
// falls in; a GPU op of its launcher's.
void KeepPlan::AssignStepsByWindow(const OpTable& table,
                                   const std::vector<StepWindow>& windows) {
  if (windows.empty() ||
      std::any_of(step_.begin(), step_.end(), [](int64_t s) { return s >= 0; }))
    return;  // the ET's own steps rule
  for (uint32_t i : table.preorder()) {
    const HostOp& op = table.op(i);
    const uint32_t p = table.parent(i);
    if (op.is_gpu()) {
      if (p != kNoOp) step_[i] = step_[p];
      continue;
    }
    if (op.ts_us < 0) continue;
    for (const StepWindow& w : windows) {
      if (op.ts_us >= w.start_us && op.ts_us < w.end_us) step_[i] = w.step;
    }
  }
}

void KeepPlan::Build(const OpTable& table, const CollectiveResolver& comms,
                     Granularity granularity,
                     const std::vector<StepWindow>& windows) {
  const uint32_t n = static_cast<uint32_t>(table.size());
  disposition_.assign(n, Disposition::kNode);
  stand_in_.assign(n, kNoOp);
  caller_.assign(n, kNoOp);
  kind_.assign(n, OpKind::kOther);
  step_.assign(n, -1);
  skipped_.clear();
  absl::flat_hash_map<StringPool::Id, OpKind> kind_by_name;
  for (uint32_t i = 0; i < n; ++i) {
    auto [it, fresh] =
        kind_by_name.try_emplace(table.op(i).name, OpKind::kOther);
    if (fresh) it->second = OpKindFromName(table.name(i));
    kind_[i] = it->second;
  }
  const bool all = granularity == Granularity::kAll;
  for (uint32_t i : table.preorder()) {
    const HostOp& op = table.op(i);
    const uint32_t p = table.parent(i);
    const int32_t rec = comms.record_of(i);
    if (p != kNoOp) {
      caller_[i] = is_node(p) ? p : caller_[p];
      step_[i] = step_[p];
    }
    if (const int64_t step = StepNumberOfName(table.name(i)); step >= 0)
      step_[i] = step;
    if (op.is_gpu())
      continue;  // GPU ops are always nodes, launched by their caller
    if (all)
      continue;  // every op is a node; profiler roots become METADATA nodes
    if (IsProfilerRootName(table.name(i))) {
      disposition_[i] = Disposition::kProfilerRoot;
      ++skipped_["profiler root"];
    } else if (rec >= 0 && !comms.is_owner(i)) {
      disposition_[i] = Disposition::kFolded;
      stand_in_[i] = comms.records()[rec].owner;
      ++skipped_["record of a collective, folded into its call"];
    } else if (rec >= 0) {
      // A collective's call is a node wherever it sits.
    } else if (p != kNoOp &&
               (disposition_[p] == Disposition::kFolded ||
                (is_node(p) && !table.op(p).is_gpu() &&
                 (comms.is_owner(p) || FoldsChildren(kind_[p]))))) {
      disposition_[i] = Disposition::kFolded;
      stand_in_[i] = disposition_[p] == Disposition::kFolded ? stand_in_[p] : p;
      ++skipped_["child of an op that carries its cost, folded into it"];
    } else if (!IsProcessGroupInitName(table.name(i)) &&
               !FoldsChildren(kind_[i])) {
      for (uint32_t c : table.children(i)) {
        if (!table.op(c).is_gpu()) {
          disposition_[i] = Disposition::kContainer;
          ++skipped_["container, its time is carried by its children"];
          break;
        }
      }
    }
  }
  AssignStepsByIdRange(table);
  AssignStepsByWindow(table, windows);
  // A container stands in as the last host node of its subtree (largest id;
  // linked GPU ops have ids after every ET op, and a kernel must not stand in
  // for host work): post-order.
  const auto& pre = table.preorder();
  std::vector<uint32_t> last_node(n, kNoOp);
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    const uint32_t i = *it;
    if (is_node(i) && !table.op(i).is_gpu() &&
        (last_node[i] == kNoOp || table.op(i).id > table.op(last_node[i]).id)) {
      last_node[i] = i;
    }
    const uint32_t p = table.parent(i);
    if (p != kNoOp && last_node[i] != kNoOp &&
        (last_node[p] == kNoOp ||
         table.op(last_node[i]).id > table.op(last_node[p]).id)) {
      last_node[p] = last_node[i];
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (is_node(i)) {
      stand_in_[i] = i;
    } else if (disposition_[i] == Disposition::kContainer) {
      stand_in_[i] = last_node[i];
    }
  }
  CountHostOps(table);
}

void KeepPlan::CountHostOps(const OpTable& table) {
  host_ops_.assign(table.size(), 0);
  for (uint32_t i = 0; i < table.size(); ++i) {
    if (table.op(i).is_gpu() || disposition_[i] == Disposition::kProfilerRoot) {
      continue;
    }
    const uint32_t target = stand_in_[i];
    if (target != kNoOp) ++host_ops_[target];
  }
}

}  // namespace et::convert
