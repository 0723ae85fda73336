// Rendezvous bookkeeping for collectives and send/recv pairs.
#include "simulator/engine/collective_rendezvous.h"

#include <algorithm>

namespace et::sim {

bool CollectiveRendezvous::Arrive(const RendezvousKey& key, size_t required,
                                  const RendezvousArrival& arrival,
                                  std::vector<RendezvousArrival>* complete) {
  complete->clear();
  if (required <= 1) {
    complete->push_back(arrival);
    return true;
  }
  Instance& inst = open_[key];
  inst.required = required;
  inst.arrived.push_back(arrival);
  if (inst.arrived.size() < required) return false;
  *complete = std::move(inst.arrived);
  open_.erase(key);
  return true;
}

std::vector<CollectiveRendezvous::Pending>
CollectiveRendezvous::PendingInstances() const {
  std::vector<Pending> out;
  for (const auto& [key, inst] : open_)
    out.push_back({key, inst.required, inst.arrived});
  std::sort(out.begin(), out.end(), [](const Pending& x, const Pending& y) {
    return std::tie(x.key.kind, x.key.a, x.key.b, x.key.seq) <
           std::tie(y.key.kind, y.key.a, y.key.b, y.key.seq);
  });
  return out;
}

}  // namespace et::sim
