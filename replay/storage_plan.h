// Device memory for a replay: one buffer per recorded storage id, sized to the
// largest extent any view of it needs, allocated before its first device use
// and freed after its last (PARAM pre-allocated every op's inputs and ran out
// of memory on large models). Built once from the plan; the peak is known
// before anything is allocated, so a trace that needs more than the cap fails
// up front with the op where the peak occurs.
#ifndef REPLAY_STORAGE_PLAN_H_
#define REPLAY_STORAGE_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "model/node_model.h"
#include "replay/replay_plan.h"

namespace et::replay {

// A view of a storage used by an op: the dense storage index and the byte
// offset.
struct StorageUse {
  uint32_t storage = 0;
  uint64_t offset_bytes = 0;
  uint64_t bytes = 0;
  bool is_output = false;
};

class StoragePlan {
 public:
  // Only ops that run on the device (GEMMs, kernels, communication) hold
  // storage.
  static StoragePlan Build(const NodeModel& graph, const ReplayPlan& plan);

  size_t storage_count() const { return storage_bytes_.size(); }
  uint64_t storage_bytes(uint32_t s) const { return storage_bytes_[s]; }
  // Views op i reads and writes, inputs first, in recorded argument order.
  absl::Span<const StorageUse> uses(size_t op) const { return Row(uses_, op); }
  // Storages whose first use is op i / whose last use is op i.
  absl::Span<const uint32_t> allocate_before(size_t op) const {
    return Row(alloc_, op);
  }
  absl::Span<const uint32_t> free_after(size_t op) const {
    return Row(free_, op);
  }

  uint64_t peak_bytes() const { return peak_bytes_; }
  size_t peak_op() const { return peak_op_; }

  // Fails when the peak exceeds `cap_bytes`, naming the op at the peak.
  absl::Status CheckCap(const ReplayPlan& plan, uint64_t cap_bytes) const;

 private:
  template <typename T>
  struct Csr {
    std::vector<uint32_t> offsets{0};
    std::vector<T> targets;
  };
  template <typename T>
  static absl::Span<const T> Row(const Csr<T>& csr, size_t i) {
    return absl::MakeConstSpan(csr.targets.data() + csr.offsets[i],
                               csr.offsets[i + 1] - csr.offsets[i]);
  }

  std::vector<uint64_t> storage_bytes_;
  Csr<StorageUse> uses_;
  Csr<uint32_t> alloc_, free_;
  uint64_t peak_bytes_ = 0;
  size_t peak_op_ = 0;
};

}  // namespace et::replay

#endif  // REPLAY_STORAGE_PLAN_H_
