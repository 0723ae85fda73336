// The host side of a Kineto trace as nested intervals: per CPU thread, its CPU
// ops (cpu_op and user_annotation events) in start order, and for every CPU op
// and runtime call the innermost CPU op around it on the same thread. Built
// once in O(n log n) with a stack per thread; read-only afterwards.
#ifndef CONVERTER_KINETO_CPU_OP_NESTING_H_
#define CONVERTER_KINETO_CPU_OP_NESTING_H_

#include <cstdint>
#include <vector>

#include "converter/kineto/kineto_trace.h"

namespace et::kineto {

struct KinetoThread {
  int64_t pid = 0;
  int64_t tid = 0;
  std::vector<int32_t> ops;      // CPU-op event indices in start order
  std::vector<int32_t> runtime;  // runtime-call event indices in start order
};

class CpuOpNesting {
 public:
  explicit CpuOpNesting(const KinetoTrace& trace);

  const std::vector<KinetoThread>& threads() const { return threads_; }
  // Innermost CPU op enclosing `event` on its thread; -1 when none. Defined for
  // CPU ops and runtime calls.
  int32_t parent(int32_t event) const { return parent_[event]; }
  // Sum of the durations of `event`'s direct CPU-op children.
  int64_t children_dur_ns(int32_t event) const {
    return children_dur_ns_[event];
  }
  // Index in threads() of the thread an event belongs to; -1 for GPU-side
  // events.
  int32_t thread_of(int32_t event) const { return thread_of_[event]; }

 private:
  void Nest(const KinetoTrace& trace, const std::vector<int32_t>& ordered);

  std::vector<KinetoThread> threads_;
  std::vector<int32_t> parent_;
  std::vector<int64_t> children_dur_ns_;
  std::vector<int32_t> thread_of_;
};

}  // namespace et::kineto

#endif  // CONVERTER_KINETO_CPU_OP_NESTING_H_
