// Start-order renumbering of linked traces; see linked_order.h.
#include "converter/linked_order.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_map.h"

namespace et::convert {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

}  // namespace

LinkedOrderStats OrderLinkedTraceByStart(std::vector<HostOp>* ops,
                                         StringPool* pool) {
  LinkedOrderStats stats;
  std::vector<HostOp>& v = *ops;
  const uint32_t n = static_cast<uint32_t>(v.size());
  if (std::none_of(v.begin(), v.end(), [](const HostOp& op) {
        return !op.is_gpu() && op.ts_us >= 0;
      })) {
    return stats;
  }
  absl::flat_hash_map<uint64_t, uint32_t> index;
  index.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (!index.emplace(v[i].id, i).second) return stats;  // OpTable says so
  }
  // Parent index per op; an absent parent is OpTable's error to report.
  std::vector<uint32_t> parent(n, kNone);
  for (uint32_t i = 0; i < n; ++i) {
    if (v[i].parent == 0 || v[i].parent == v[i].id) continue;
    auto it = index.find(v[i].parent);
    if (it == index.end()) return stats;
    parent[i] = it->second;
  }
  // Children in old-id order, CSR; roots likewise.
  std::vector<uint32_t> by_id(n);
  std::iota(by_id.begin(), by_id.end(), 0);
  std::sort(by_id.begin(), by_id.end(),
            [&](uint32_t a, uint32_t b) { return v[a].id < v[b].id; });
  std::vector<uint32_t> begin(n + 1, 0), kids(n), roots;
  for (uint32_t i = 0; i < n; ++i) {
    if (parent[i] != kNone) ++begin[parent[i] + 1];
  }
  for (uint32_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
  for (uint32_t i : by_id) {
    if (parent[i] == kNone) {
      roots.push_back(i);
    } else {
      kids[fill[parent[i]]++] = i;
    }
  }
  // Effective start and depth, parents first (explicit stack: deep traces).
  // Each op starts no earlier than its parent; one without `ts` starts with
  // the sibling before it.
  constexpr double kEarliest = -std::numeric_limits<double>::infinity();
  std::vector<double> start(n, kEarliest);
  std::vector<uint32_t> depth(n, 0);
  std::vector<uint32_t> stack;
  auto place = [&](const std::vector<uint32_t>& list, size_t from, size_t to,
                   double floor, uint32_t d) {
    double previous = floor;
    for (size_t k = from; k < to; ++k) {
      const uint32_t c = list[k];
      start[c] = v[c].ts_us >= 0 ? std::max(v[c].ts_us, floor) : previous;
      previous = std::max(previous, start[c]);
      depth[c] = d;
      stack.push_back(c);
    }
  };
  place(roots, 0, roots.size(), kEarliest, 0);
  uint32_t reached = 0;
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    ++reached;
    place(kids, begin[i], begin[i + 1], start[i], depth[i] + 1);
  }
  if (reached != n) return stats;  // a parent cycle: OpTable reports it
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::make_tuple(start[a], depth[a], v[a].id) <
           std::make_tuple(start[b], depth[b], v[b].id);
  });
  if (order == by_id) return stats;  // id order already is start order
  std::vector<uint64_t> new_id(n);
  for (uint32_t r = 0; r < n; ++r) {
    new_id[order[r]] = r + 1;  // 0 reads as "no parent"
    stats.moved += order[r] != by_id[r];
  }
  const StringPool::Id source_id = pool->Intern("source_id");
  auto remap = [&](uint32_t i, std::vector<uint64_t>* deps) {
    size_t kept = 0;
    for (uint64_t d : *deps) {
      auto it = index.find(d);
      if (it == index.end()) {
        ++stats.deps_to_absent;
      } else if (new_id[it->second] >= new_id[i]) {
        ++stats.deps_against_time;
      } else {
        (*deps)[kept++] = new_id[it->second];
      }
    }
    deps->resize(kept);
  };
  for (uint32_t i = 0; i < n; ++i) {
    ExtraAttr old;
    old.name = source_id;
    old.kind = ExtraAttr::Kind::kUint;
    old.i = static_cast<int64_t>(v[i].id);
    v[i].extra_attrs.push_back(std::move(old));
    v[i].parent = parent[i] == kNone ? 0 : new_id[parent[i]];
    remap(i, &v[i].inter_thread_deps);
    remap(i, &v[i].sync_deps);
  }
  for (uint32_t i = 0; i < n; ++i) v[i].id = new_id[i];
  return stats;
}

}  // namespace et::convert
