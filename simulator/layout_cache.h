// What the layouts of one trace share (et-sim --search): the trace's node
// model and each tensor-parallel split of it, computed once and then read by
// every layout's Simulation. Without a cache a Simulation computes both
// itself, per layout; the results are the same pure functions of the graph
// and the options either way (tests/simulator/layout_cache_test.cc), so a
// search's rows do not depend on which layouts shared them.
//
// Thread-safe: layouts run on several threads; each entry is computed by the
// first thread that asks for it (the others wait for it) and is immutable
// after. Entries live as long as the cache and the Simulations holding them.
#ifndef SIMULATOR_LAYOUT_CACHE_H_
#define SIMULATOR_LAYOUT_CACHE_H_

#include <memory>
#include <string>

#include "absl/base/call_once.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/dp_sync.h"
#include "scaleout/tensor_parallel.h"

namespace et::sim {

class LayoutCache {
 public:
  explicit LayoutCache(std::shared_ptr<const Graph> graph);

  // The one rank's graph every layout starts from.
  const std::shared_ptr<const Graph>& graph() const { return graph_; }

  // NodeModel::FromGraph(graph(), options).
  std::shared_ptr<const NodeModel> Model(const ModelOptions& options);

  // scaleout::ShardTensorParallel(graph(), split) and the split graph's node
  // model with `options`; the split's refusal as it gave it.
  struct TpSplit {
    std::shared_ptr<const scaleout::TpShardResult> result;
    std::shared_ptr<const NodeModel> model;
  };
  absl::StatusOr<TpSplit> TensorParallel(const scaleout::TpShardOptions& split,
                                         const ModelOptions& options);

  // scaleout::AddDpSync(base, sync, options) where its nodes do not depend on
  // dp (scaleout::DpSyncNodesIndependentOfDp(sync.mode)): once for every
  // dp_size and dp_ranks, the result as the first caller's dp gave it (its
  // graph dropped) with the node model of that graph (null when nothing was
  // added); the caller puts its own dp's group table and note on them
  // (NodeModel::WithGroupTable, scaleout::DpSyncMetadata, DpSyncNote).
  // `base` is Model()'s or a split's model this cache holds: it is told
  // apart by its address.
  struct DpSync {
    std::shared_ptr<const scaleout::DpSyncResult> result;
    std::shared_ptr<const NodeModel> model;
  };
  absl::StatusOr<DpSync> DataParallelSync(const NodeModel& base,
                                          const scaleout::DpSyncOptions& sync,
                                          const ModelOptions& options);

  // How many entries were computed (each once), for tests.
  int64_t computed() const;

 private:
  template <typename T>
  struct Entry {
    absl::once_flag once;
    absl::StatusOr<T> value = absl::UnknownError("not computed");
  };
  template <typename T>
  using Entries = absl::flat_hash_map<std::string, std::unique_ptr<Entry<T>>>;
  // The entry for `key` in `entries`, made empty if absent.
  template <typename T>
  Entry<T>* Find(Entries<T>& entries, const std::string& key);

  const std::shared_ptr<const Graph> graph_;
  mutable absl::Mutex mu_;
  Entries<std::shared_ptr<const NodeModel>> models_ ABSL_GUARDED_BY(mu_);
  Entries<TpSplit> tp_splits_ ABSL_GUARDED_BY(mu_);
  Entries<DpSync> dp_syncs_ ABSL_GUARDED_BY(mu_);
  int64_t computed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace et::sim

#endif  // SIMULATOR_LAYOUT_CACHE_H_
