// PyTorch DistributedDataParallel's gradient buckets, as torch 1.13 (and
// later) assigns them: `compute_bucket_assignment_by_size` in
// torch/csrc/distributed/c10d/reducer.cpp, called from
// torch/nn/parallel/distributed.py and from `Reducer::rebuild_buckets`.
//
// The rule: walk the gradients in a given order, one open bucket per dtype
// (and device); add the gradient's bytes; when the bucket reaches its limit
// (>=, so the gradient that crosses the limit is in it) close it and move
// this dtype to the next limit of the list, the last limit repeating. Open
// buckets are closed at the end. A gradient larger than the limit is a bucket
// of its own.
//
// Which iteration: with DDP's defaults (find_unused_parameters=False) the
// first iteration runs with one bucket holding every gradient (limit
// sys.maxsize); after it, the reducer rebuilds the buckets from the order in
// which the gradients became ready during that first backward pass, with
// limits {dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB, bucket_cap_mb = 25 MiB},
// and keeps them for every later iteration. `RebuiltBuckets` is that steady
// state, the one a profiled step (after warm-up) records; `InitialBuckets` is
// the construction-time assignment (registration order, reversed), for the
// first iteration.
#ifndef SCALEOUT_DDP_BUCKETS_H_
#define SCALEOUT_DDP_BUCKETS_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "model/dtype.h"

namespace et::scaleout {

// torch.nn.parallel.DistributedDataParallel's defaults.
inline constexpr int64_t kDefaultBucketCapBytes = 25 * 1024 * 1024;
inline constexpr int64_t kDefaultFirstBucketBytes = 1024 * 1024;

// One gradient to place: its index in the caller's list, bytes and dtype.
struct BucketInput {
  int index = 0;
  int64_t bytes = 0;
  Dtype dtype = Dtype::kUnknown;
};

struct Bucket {
  std::vector<int> members;  // BucketInput::index, in the order walked
  int64_t bytes = 0;
  int64_t limit_bytes = 0;  // the limit it was filled against
  Dtype dtype = Dtype::kUnknown;
};

// compute_bucket_assignment_by_size over `inputs` in the order given, with
// the per-dtype sequence of limits (the last one repeats). Buckets in the
// order they were closed; the buckets still open at the end follow, in the
// order their dtype first appeared (PyTorch iterates a hash map there).
std::vector<Bucket> AssignBuckets(absl::Span<const BucketInput> inputs,
                                  absl::Span<const int64_t> limits_bytes);

// The buckets DDP uses after its first iteration: gradients in ready order
// (the order of `ready`), limits {first_bucket_bytes, bucket_cap_bytes}.
// Bucket 0 is the first to be all-reduced.
std::vector<Bucket> RebuiltBuckets(absl::Span<const BucketInput> ready,
                                   int64_t bucket_cap_bytes,
                                   int64_t first_bucket_bytes);

// The buckets DDP's constructor assigns (the first iteration's):
// `registered` in parameter registration order; one bucket of everything
// unless `find_unused_parameters`, then limits {first, cap} over the
// registration order, sorted by their smallest index and reversed, so that
// bucket 0 holds the last-registered parameters (ready first).
std::vector<Bucket> InitialBuckets(absl::Span<const BucketInput> registered,
                                   int64_t bucket_cap_bytes,
                                   int64_t first_bucket_bytes,
                                   bool find_unused_parameters);

}  // namespace et::scaleout

#endif  // SCALEOUT_DDP_BUCKETS_H_
