// Start-order renumbering of linked traces; see linked_order.h.
#include "converter/kineto/linked_order.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_map.h"

namespace et::convert {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

using IdIndex = absl::flat_hash_map<uint64_t, uint32_t>;

// The call tree by position: children in old-id order, as CSR.
struct CallTree {
  std::vector<uint32_t> parent;  // kNone for a root
  std::vector<uint32_t> by_id;   // positions in old-id order
  std::vector<uint32_t> begin;   // kids of i: kids[begin[i], begin[i + 1])
  std::vector<uint32_t> kids;
  std::vector<uint32_t> roots;  // in old-id order
};

// Only a trace with host start times can be put in start order.
bool HasHostStarts(const std::vector<HostOp>& v) {
  return std::any_of(v.begin(), v.end(), [](const HostOp& op) {
    return !op.is_gpu() && op.ts_us >= 0;
  });
}

// Position of each id; false on a duplicate id (OpTable says so).
bool IndexIds(const std::vector<HostOp>& v, IdIndex* index) {
  index->reserve(v.size());
  for (uint32_t i = 0; i < v.size(); ++i) {
    if (!index->emplace(v[i].id, i).second) return false;
  }
  return true;
}

// Parent position per op; false on an absent parent, which is OpTable's error
// to report.
bool FindParents(const std::vector<HostOp>& v, const IdIndex& index,
                 std::vector<uint32_t>* parent) {
  parent->assign(v.size(), kNone);
  for (uint32_t i = 0; i < v.size(); ++i) {
    if (v[i].parent == 0 || v[i].parent == v[i].id) continue;
    auto it = index.find(v[i].parent);
    if (it == index.end()) return false;
    (*parent)[i] = it->second;
  }
  return true;
}

// Children and roots in old-id order, so that ties keep the old order.
void LinkChildren(const std::vector<HostOp>& v, CallTree* tree) {
  const uint32_t n = static_cast<uint32_t>(v.size());
  tree->by_id.resize(n);
  std::iota(tree->by_id.begin(), tree->by_id.end(), 0);
  std::sort(tree->by_id.begin(), tree->by_id.end(),
            [&](uint32_t a, uint32_t b) { return v[a].id < v[b].id; });
  tree->begin.assign(n + 1, 0);
  tree->kids.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (tree->parent[i] != kNone) ++tree->begin[tree->parent[i] + 1];
  }
  for (uint32_t i = 0; i < n; ++i) tree->begin[i + 1] += tree->begin[i];
  std::vector<uint32_t> fill(tree->begin.begin(), tree->begin.end() - 1);
  for (uint32_t i : tree->by_id) {
    if (tree->parent[i] == kNone) {
      tree->roots.push_back(i);
    } else {
      tree->kids[fill[tree->parent[i]]++] = i;
    }
  }
}

// Effective start and depth, parents first (explicit stack: deep traces).
// Each op starts no earlier than its parent; one without `ts` starts with
// the sibling before it. False when some op is not reached: a parent cycle,
// which OpTable reports.
bool PlaceStarts(const std::vector<HostOp>& v, const CallTree& tree,
                 std::vector<double>* start, std::vector<uint32_t>* depth) {
  constexpr double kEarliest = -std::numeric_limits<double>::infinity();
  start->assign(v.size(), kEarliest);
  depth->assign(v.size(), 0);
  std::vector<uint32_t> stack;
  auto place = [&](const std::vector<uint32_t>& list, size_t from, size_t to,
                   double floor, uint32_t d) {
    double previous = floor;
    for (size_t k = from; k < to; ++k) {
      const uint32_t c = list[k];
      (*start)[c] = v[c].ts_us >= 0 ? std::max(v[c].ts_us, floor) : previous;
      previous = std::max(previous, (*start)[c]);
      (*depth)[c] = d;
      stack.push_back(c);
    }
  };
  place(tree.roots, 0, tree.roots.size(), kEarliest, 0);
  uint32_t reached = 0;
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    ++reached;
    place(tree.kids, tree.begin[i], tree.begin[i + 1], (*start)[i],
          (*depth)[i] + 1);
  }
  return reached == v.size();
}

// Positions by start, ties by depth (a parent before its child) then old id.
std::vector<uint32_t> StartOrder(const std::vector<HostOp>& v,
                                 const std::vector<double>& start,
                                 const std::vector<uint32_t>& depth) {
  std::vector<uint32_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::make_tuple(start[a], depth[a], v[a].id) <
           std::make_tuple(start[b], depth[b], v[b].id);
  });
  return order;
}

// Deps of op `i` in new ids; one on an op that starts later cannot have been
// waited for, and one on an absent id cannot be written: both dropped, counted.
void RemapDeps(uint32_t i, const IdIndex& index,
               const std::vector<uint64_t>& new_id, std::vector<uint64_t>* deps,
               LinkedOrderStats* stats) {
  size_t kept = 0;
  for (uint64_t d : *deps) {
    auto it = index.find(d);
    if (it == index.end()) {
      ++stats->deps_to_absent;
    } else if (new_id[it->second] >= new_id[i]) {
      ++stats->deps_against_time;
    } else {
      (*deps)[kept++] = new_id[it->second];
    }
  }
  deps->resize(kept);
}

// Gives every op its new id, keeping the old one as `source_id` so that a
// node can still be found in the input.
void Renumber(const IdIndex& index, const std::vector<uint32_t>& parent,
              const std::vector<uint64_t>& new_id, StringPool* pool,
              std::vector<HostOp>* ops, LinkedOrderStats* stats) {
  std::vector<HostOp>& v = *ops;
  const StringPool::Id source_id = pool->Intern("source_id");
  for (uint32_t i = 0; i < v.size(); ++i) {
    ExtraAttr old;
    old.name = source_id;
    old.kind = ExtraAttr::Kind::kUint;
    old.i = static_cast<int64_t>(v[i].id);
    v[i].extra_attrs.push_back(std::move(old));
    v[i].parent = parent[i] == kNone ? 0 : new_id[parent[i]];
    RemapDeps(i, index, new_id, &v[i].inter_thread_deps, stats);
    RemapDeps(i, index, new_id, &v[i].sync_deps, stats);
  }
  for (uint32_t i = 0; i < v.size(); ++i) v[i].id = new_id[i];
}

}  // namespace

LinkedOrderStats OrderLinkedTraceByStart(std::vector<HostOp>* ops,
                                         StringPool* pool) {
  LinkedOrderStats stats;
  const std::vector<HostOp>& v = *ops;
  if (!HasHostStarts(v)) return stats;
  IdIndex index;
  CallTree tree;
  if (!IndexIds(v, &index) || !FindParents(v, index, &tree.parent)) {
    return stats;  // OpTable reports duplicate and absent ids
  }
  LinkChildren(v, &tree);
  std::vector<double> start;
  std::vector<uint32_t> depth;
  if (!PlaceStarts(v, tree, &start, &depth)) return stats;
  const std::vector<uint32_t> order = StartOrder(v, start, depth);
  if (order == tree.by_id) return stats;  // id order already is start order
  std::vector<uint64_t> new_id(v.size());
  for (uint32_t r = 0; r < v.size(); ++r) {
    new_id[order[r]] = r + 1;  // 0 reads as "no parent"
    stats.moved += order[r] != tree.by_id[r];
  }
  Renumber(index, tree.parent, new_id, pool, ops, &stats);
  return stats;
}

}  // namespace et::convert
