// Matches communication ops across rank classes: a collective instance (process
// group, n-th use of that group) or a point-to-point pair (src, dst, n-th
// message) starts when every required member has issued it. Remembers
// incomplete instances so that a deadlock can name the ranks that issued and
// the ones that never did. Not thread-safe.
#ifndef SIMULATOR_ENGINE_COLLECTIVE_RENDEZVOUS_H_
#define SIMULATOR_ENGINE_COLLECTIVE_RENDEZVOUS_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace et::sim {

// (kind, a, b, seq): kind 0 = collective (a = global group id), 1 =
// point-to-point (a = src rank, b = dst rank).
struct RendezvousKey {
  int64_t kind = 0, a = 0, b = 0, seq = 0;
  bool operator==(const RendezvousKey& o) const {
    return std::tie(kind, a, b, seq) == std::tie(o.kind, o.a, o.b, o.seq);
  }
  template <typename H>
  friend H AbslHashValue(H h, const RendezvousKey& k) {
    return H::combine(std::move(h), k.kind, k.a, k.b, k.seq);
  }
};

struct RendezvousArrival {
  uint32_t actor = 0;  // rank class
  uint32_t node = 0;
  int64_t issue_ns = 0;
};

class CollectiveRendezvous {
 public:
  // Records an arrival. When `required` arrivals are in, fills `complete` with
  // all of them (in arrival order), forgets the instance and returns true.
  bool Arrive(const RendezvousKey& key, size_t required,
              const RendezvousArrival& arrival,
              std::vector<RendezvousArrival>* complete);

  struct Pending {
    RendezvousKey key;
    size_t required = 0;
    std::vector<RendezvousArrival> arrived;
  };
  // Instances still waiting for members, sorted by key (deterministic).
  std::vector<Pending> PendingInstances() const;

 private:
  struct Instance {
    size_t required = 0;
    std::vector<RendezvousArrival> arrived;
  };
  absl::flat_hash_map<RendezvousKey, Instance> open_;
};

}  // namespace et::sim

#endif  // SIMULATOR_ENGINE_COLLECTIVE_RENDEZVOUS_H_
