// PyTorch DDP's bucket assignment; see ddp_buckets.h.
#include "scaleout/ddp_buckets.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace et::scaleout {

std::vector<Bucket> AssignBuckets(absl::Span<const BucketInput> inputs,
                                  absl::Span<const int64_t> limits_bytes) {
  struct Open {
    Dtype dtype;
    Bucket bucket;
    size_t limit = 0;  // index into limits_bytes
  };
  std::vector<Open> open;  // one per dtype, in order of first appearance
  std::vector<Bucket> result;
  if (limits_bytes.empty()) return result;
  for (const BucketInput& in : inputs) {
    auto it = std::find_if(open.begin(), open.end(),
                           [&](const Open& o) { return o.dtype == in.dtype; });
    if (it == open.end()) {
      open.push_back({in.dtype, {}, 0});
      it = open.end() - 1;
    }
    Bucket& b = it->bucket;
    b.members.push_back(in.index);
    b.bytes += in.bytes;
    b.dtype = in.dtype;
    b.limit_bytes = limits_bytes[it->limit];
    if (b.bytes >= b.limit_bytes) {
      result.push_back(std::move(b));
      b = Bucket{};
      if (it->limit + 1 < limits_bytes.size()) ++it->limit;
    }
  }
  for (Open& o : open)
    if (!o.bucket.members.empty()) result.push_back(std::move(o.bucket));
  return result;
}

std::vector<Bucket> RebuiltBuckets(absl::Span<const BucketInput> ready,
                                   int64_t bucket_cap_bytes,
                                   int64_t first_bucket_bytes) {
  const int64_t limits[] = {first_bucket_bytes, bucket_cap_bytes};
  return AssignBuckets(ready, limits);
}

std::vector<Bucket> InitialBuckets(absl::Span<const BucketInput> registered,
                                   int64_t bucket_cap_bytes,
                                   int64_t first_bucket_bytes,
                                   bool find_unused_parameters) {
  std::vector<Bucket> buckets;
  if (!find_unused_parameters) {
    const int64_t limits[] = {std::numeric_limits<int64_t>::max()};
    buckets = AssignBuckets(registered, limits);
  } else {
    const int64_t limits[] = {first_bucket_bytes, bucket_cap_bytes};
    buckets = AssignBuckets(registered, limits);
  }
  // Sorted by the smallest registration position each holds.
  absl::flat_hash_map<int, size_t> position;
  for (size_t k = 0; k < registered.size(); ++k)
    position.try_emplace(registered[k].index, k);
  std::vector<std::pair<size_t, Bucket>> keyed;
  for (Bucket& b : buckets) {
    size_t m = registered.size();
    for (int i : b.members) m = std::min(m, position[i]);
    keyed.emplace_back(m, std::move(b));
  }
  std::stable_sort(
      keyed.begin(), keyed.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  buckets.clear();
  for (auto& [m, b] : keyed) buckets.push_back(std::move(b));
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

}  // namespace et::scaleout
