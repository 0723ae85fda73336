// Binary min-heap over SimEvent.
#include "simulator/engine/event_queue.h"

#include <algorithm>

namespace et::sim {

bool EventQueue::Later(const SimEvent& a, const SimEvent& b) {
  if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
  if (a.prio != b.prio) return a.prio > b.prio;
  return a.seq > b.seq;
}

void EventQueue::Push(int64_t time_ns, uint32_t prio, uint32_t actor,
                      uint32_t node) {
  heap_.push_back(SimEvent{time_ns, next_seq_++, actor, node, prio});
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

SimEvent EventQueue::Pop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  SimEvent e = heap_.back();
  heap_.pop_back();
  return e;
}

}  // namespace et::sim
