// The cache's entries: one per key, each computed under its own once flag.
#include "simulator/layout_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace et::sim {
namespace {

std::string ModelKey(const ModelOptions& options) {
  return absl::StrCat(options.keep_io, options.keep_tensors,
                      options.host_gemms);
}

}  // namespace

LayoutCache::LayoutCache(std::shared_ptr<const Graph> graph)
    : graph_(std::move(graph)) {}

template <typename T>
LayoutCache::Entry<T>* LayoutCache::Find(Entries<T>& entries,
                                         const std::string& key) {
  absl::MutexLock lock(&mu_);
  std::unique_ptr<Entry<T>>& entry = entries[key];
  if (entry == nullptr) {
    entry = std::make_unique<Entry<T>>();
    ++computed_;
  }
  return entry.get();
}

std::shared_ptr<const NodeModel> LayoutCache::Model(
    const ModelOptions& options) {
  Entry<std::shared_ptr<const NodeModel>>* entry =
      Find(models_, ModelKey(options));
  absl::call_once(entry->once, [&] {
    entry->value = std::make_shared<const NodeModel>(
        NodeModel::FromGraph(*graph_, options));
  });
  return *entry->value;
}

absl::StatusOr<LayoutCache::TpSplit> LayoutCache::TensorParallel(
    const scaleout::TpShardOptions& split, const ModelOptions& options) {
  // Every field of the split's options and the model's: equal keys are equal
  // inputs.
  const std::string key =
      absl::StrCat(split.tp, "|", split.pg_name, "|",
                   absl::StrJoin(split.tp_ranks, ","), "|", ModelKey(options));
  Entry<TpSplit>* entry = Find(tp_splits_, key);
  absl::call_once(entry->once, [&] {
    absl::StatusOr<scaleout::TpShardResult> result =
        scaleout::ShardTensorParallel(*graph_, split);
    if (!result.ok()) {
      entry->value = result.status();
      return;
    }
    TpSplit out;
    out.model = std::make_shared<const NodeModel>(
        NodeModel::FromGraph(result->graph, options));
    out.result =
        std::make_shared<const scaleout::TpShardResult>(std::move(*result));
    entry->value = std::move(out);
  });
  return entry->value;
}

absl::StatusOr<LayoutCache::DpSync> LayoutCache::DataParallelSync(
    const NodeModel& base, const scaleout::DpSyncOptions& sync,
    const ModelOptions& options) {
  // Every field but dp_size and dp_ranks, which the nodes do not read.
  const std::string key = absl::StrCat(
      absl::Hex(reinterpret_cast<uintptr_t>(&base)), "|",
      static_cast<int>(sync.mode), "|", sync.pg_name, "|",
      sync.bucket_cap_bytes, "|", sync.first_bucket_bytes, "|", sync.tp, "|",
      absl::Hex(reinterpret_cast<uintptr_t>(sync.tp_split_storages)), "|",
      absl::Hex(reinterpret_cast<uintptr_t>(sync.ep_other_storages)), "|",
      ModelKey(options));
  Entry<DpSync>* entry = Find(dp_syncs_, key);
  absl::call_once(entry->once, [&] {
    absl::StatusOr<scaleout::DpSyncResult> result =
        scaleout::AddDpSync(base, sync, options);
    if (!result.ok()) {
      entry->value = result.status();
      return;
    }
    DpSync out;
    if (result->model.has_value()) {
      out.model = std::make_shared<const NodeModel>(std::move(*result->model));
      result->model.reset();
    }
    out.result =
        std::make_shared<const scaleout::DpSyncResult>(std::move(*result));
    entry->value = std::move(out);
  });
  return entry->value;
}

int64_t LayoutCache::computed() const {
  absl::MutexLock lock(&mu_);
  return computed_;
}

}  // namespace et::sim
