// Memory at another layout (docs/memory-model.md, "At another layout").
#include "scaleout/memory_at_layout.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

namespace et::scaleout {
namespace {

int64_t Shard(int64_t bytes, int64_t dp) { return (bytes + dp - 1) / dp; }

StorageLife BufferLife(int32_t device, int64_t bytes, MemoryKind kind) {
  StorageLife life;
  life.device = device;
  life.bytes = bytes;
  life.persistent = true;
  life.kind = kind;
  return life;
}

// ZeroRedundancyOptimizer's partition of `params` (indices into `lives`, in
// registration order: the optimizer's order): largest first (a stable sort,
// as Python's sorted), each to the first rank with the fewest bytes so far.
// Returns the rank of each.
std::vector<int64_t> Partition(const std::vector<StorageLife>& lives,
                               const std::vector<size_t>& params, int64_t dp) {
  std::vector<size_t> order(params.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return lives[params[a]].bytes > lives[params[b]].bytes;
  });
  std::vector<int64_t> held(static_cast<size_t>(dp), 0), rank(params.size());
  for (size_t k : order) {
    auto r = std::min_element(held.begin(), held.end());
    *r += lives[params[k]].bytes;
    rank[k] = r - held.begin();
  }
  return rank;
}

// ZeRO-1 on rank `dp_index`: the optimizer state and the optimizer's
// temporaries of the parameters other ranks own are gone; state owned by no
// parameter is scaled by the rank's share.
void ShardOptimizer(std::vector<StorageLife>* lives, int64_t dp,
                    int64_t dp_index, double share) {
  std::vector<size_t> params;
  for (size_t k = 0; k < lives->size(); ++k) {
    const StorageLife& l = (*lives)[k];
    if (l.persistent && l.kind == MemoryKind::kParameter &&
        l.optimizer_first != kNoNode)
      params.push_back(k);
  }
  std::stable_sort(params.begin(), params.end(), [&](size_t a, size_t b) {
    return (*lives)[a].optimizer_first < (*lives)[b].optimizer_first;
  });
  const std::vector<int64_t> rank = Partition(*lives, params, dp);
  std::vector<char> foreign(lives->size(), 0);
  for (size_t k = 0; k < params.size(); ++k)
    foreign[params[k]] = rank[k] != dp_index;
  for (StorageLife& l : *lives) {
    const bool optimizer_made = l.kind == MemoryKind::kOptimizerState ||
                                (!l.persistent && l.owner >= 0);
    if (!optimizer_made) continue;
    if (l.owner >= 0 && l.kind != MemoryKind::kParameter) {
      if (foreign[static_cast<size_t>(l.owner)]) l.bytes = 0;
    } else if (l.kind == MemoryKind::kOptimizerState) {
      l.bytes =
          static_cast<int64_t>(static_cast<double>(l.bytes) * share + 0.5);
    }
  }
}

}  // namespace

ShardStage ShardStageOf(absl::string_view dp_sync) {
  if (dp_sync == "zero1") return ShardStage::kOptimizer;
  if (dp_sync == "zero2" || dp_sync == "zero") return ShardStage::kGradients;
  if (dp_sync == "zero3" || dp_sync == "fsdp") return ShardStage::kParameters;
  return ShardStage::kNone;
}

std::vector<int64_t> OptimizerHeld(const std::vector<int64_t>& parameter_bytes,
                                   int64_t dp) {
  std::vector<int64_t> sorted = parameter_bytes;
  std::stable_sort(sorted.begin(), sorted.end(), std::greater<int64_t>());
  std::vector<int64_t> held(static_cast<size_t>(std::max<int64_t>(dp, 1)), 0);
  // torch's _get_min_index: the first rank with the fewest. A heap of
  // (bytes, rank) pops exactly that rank: each parameter costs log(dp), not
  // dp (dp=16384 took seconds).
  using Entry = std::pair<int64_t, int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> fewest;
  const int64_t ranks = static_cast<int64_t>(held.size());
  // Ranks that hold nothing yet are all tied at 0: only as many as there are
  // parameters can ever be chosen, the first ones.
  const int64_t seeded =
      std::min<int64_t>(ranks, static_cast<int64_t>(sorted.size()));
  for (int64_t r = 0; r < seeded; ++r) fewest.push({0, r});
  for (int64_t b : sorted) {
    const auto [bytes, rank] = fewest.top();
    fewest.pop();
    held[static_cast<size_t>(rank)] = bytes + b;
    fewest.push({bytes + b, rank});
  }
  return held;
}

double OptimizerShare(const std::vector<int64_t>& parameter_bytes, int64_t dp,
                      int64_t dp_index) {
  if (dp <= 1) return 1.0;
  const std::vector<int64_t> held = OptimizerHeld(parameter_bytes, dp);
  int64_t total = 0;
  for (int64_t b : parameter_bytes) total += b;
  if (total == 0) return 1.0 / static_cast<double>(dp);
  const int64_t index = std::clamp<int64_t>(dp_index, 0, dp - 1);
  return static_cast<double>(held[static_cast<size_t>(index)]) /
         static_cast<double>(total);
}

std::vector<StorageLife> LivesAtLayout(std::vector<StorageLife> lives,
                                       const LayoutMemoryOptions& options) {
  if (options.dp <= 1) return lives;
  const int stage = static_cast<int>(options.stage);
  std::vector<int64_t> params;
  int32_t device = kHostDevice;
  bool found = false;
  for (const StorageLife& l : lives) {
    if (!l.persistent) continue;
    if (l.kind == MemoryKind::kParameter) params.push_back(l.bytes);
    if (!found &&
        (l.kind == MemoryKind::kGradient || l.kind == MemoryKind::kParameter)) {
      device = l.device;
      found = true;
    }
  }
  const double share = OptimizerShare(params, options.dp, options.dp_index);
  if (stage >= 1)
    ShardOptimizer(&lives, options.dp,
                   std::clamp<int64_t>(options.dp_index, 0, options.dp - 1),
                   share);
  for (StorageLife& l : lives) {
    if (!l.persistent) continue;
    if (stage >= 2 && l.kind == MemoryKind::kGradient)
      l.bytes = Shard(l.bytes, options.dp);
    if (stage >= 3 && l.kind == MemoryKind::kParameter)
      l.bytes = Shard(l.bytes, options.dp);
  }
  if (options.ddp_buckets && stage <= 1) {
    for (int64_t b : options.bucket_bytes)
      lives.push_back(BufferLife(device, b, MemoryKind::kCommBuffer));
  }
  if (stage >= 3 && !options.bucket_bytes.empty()) {
    // The unit running and the one prefetched, gathered whole.
    std::vector<int64_t> units = options.bucket_bytes;
    std::sort(units.begin(), units.end(), std::greater<int64_t>());
    for (size_t k = 0; k < units.size() && k < 2; ++k)
      lives.push_back(BufferLife(device, units[k], MemoryKind::kParameter));
  }
  return lives;
}

}  // namespace et::scaleout
