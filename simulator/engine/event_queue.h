// The simulator's time-ordered event queue: integer nanoseconds, 24-byte POD
// events, ordered by (time, priority, insertion sequence) so that runs are
// deterministic. Not thread-safe.
#ifndef SIMULATOR_ENGINE_EVENT_QUEUE_H_
#define SIMULATOR_ENGINE_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace et::sim {

struct SimEvent {
  int64_t time_ns;
  uint32_t seq;    // insertion order; breaks ties deterministically
  uint32_t actor;  // rank class
  uint32_t node;   // NodeIndex within the class's program
  uint32_t
      prio;  // lower first at equal time: finishes (0) before anything else
};
static_assert(sizeof(SimEvent) == 24, "events stay small: millions are queued");

class EventQueue {
 public:
  void Push(int64_t time_ns, uint32_t prio, uint32_t actor, uint32_t node);
  bool empty() const { return heap_.empty(); }
  const SimEvent& top() const { return heap_.front(); }
  SimEvent Pop();
  size_t size() const { return heap_.size(); }

 private:
  static bool Later(const SimEvent& a, const SimEvent& b);
  std::vector<SimEvent> heap_;
  uint32_t next_seq_ = 0;
};

}  // namespace et::sim

#endif  // SIMULATOR_ENGINE_EVENT_QUEUE_H_
