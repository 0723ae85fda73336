// Temporaries inside a node's folded children (docs/memory-model.md).
#include "converter/graph/folded_memory.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace et::convert {
namespace {

using StorageKey = std::pair<bool, int64_t>;  // on a GPU, storage id

struct Temp {
  int64_t bytes = 0;
  uint32_t first = 0, last = 0;  // positions in the subtree walk
  bool on_gpu = false;
};

bool Holds(absl::Span<const TensorRef> refs, const TensorRef& t) {
  return std::any_of(refs.begin(), refs.end(), [&](const TensorRef& r) {
    return r.on_gpu == t.on_gpu && r.storage_id == t.storage_id;
  });
}

// Running peak of [first, last] intervals over `n` positions.
int64_t PeakOf(const std::vector<Temp>& temps, bool on_gpu, uint32_t n) {
  std::vector<int64_t> delta(n + 1, 0);
  for (const Temp& t : temps) {
    if (t.on_gpu != on_gpu) continue;
    delta[t.first] += t.bytes;
    delta[t.last + 1] -= t.bytes;
  }
  int64_t live = 0, peak = 0;
  for (uint32_t k = 0; k < n; ++k) peak = std::max(peak, live += delta[k]);
  return peak;
}

}  // namespace

int64_t FoldedPeakBytes(const OpTable& table, uint32_t node) {
  absl::flat_hash_set<StorageKey> own;
  for (auto refs : {table.inputs(node), table.outputs(node)})
    for (const TensorRef& t : refs) own.insert({t.on_gpu, t.storage_id});
  absl::flat_hash_map<StorageKey, size_t> index;
  std::vector<Temp> temps;
  uint32_t pos = 0;
  // The subtree in preorder (start order on the node's thread). Walking the
  // id range [node, subtree_max_id] instead met every other thread's ops
  // started meanwhile: quadratic on a long nsys capture (100 MB: minutes).
  std::vector<uint32_t> stack(table.children(node).rbegin(),
                              table.children(node).rend());
  for (; !stack.empty(); ++pos) {
    const uint32_t k = stack.back();
    stack.pop_back();
    const auto children = table.children(k);
    stack.insert(stack.end(), children.rbegin(), children.rend());
    if (table.op(k).is_gpu()) continue;
    for (const TensorRef& t : table.outputs(k)) {
      const StorageKey key{t.on_gpu, t.storage_id};
      if (t.elem_bytes <= 0 || own.contains(key) || index.contains(key) ||
          Holds(table.inputs(k), t))
        continue;
      index[key] = temps.size();
      temps.push_back({t.bytes(), pos, pos, t.on_gpu});
    }
    // Later uses extend a life, never its size (an expanded view's numel
    // exceeds its storage's).
    for (auto refs : {table.inputs(k), table.outputs(k)}) {
      for (const TensorRef& t : refs) {
        auto it = index.find({t.on_gpu, t.storage_id});
        if (it != index.end()) temps[it->second].last = pos;
      }
    }
  }
  if (temps.empty()) return 0;
  const int64_t gpu = PeakOf(temps, true, pos);
  return gpu > 0 ? gpu : PeakOf(temps, false, pos);
}

}  // namespace et::convert
