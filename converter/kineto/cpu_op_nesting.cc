// Stack-based interval nesting of the CPU ops of each Kineto thread.
#include "converter/kineto/cpu_op_nesting.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace et::kineto {
namespace {

bool IsCpuOp(EventKind kind) {
  return kind == EventKind::kCpuOp || kind == EventKind::kUserAnnotation;
}

// True when `inner` lies within `outer`. A zero-length event at the very end of
// a longer one is its next sibling, not its child.
bool Contains(const KinetoEvent& outer, const KinetoEvent& inner) {
  const int64_t outer_end = outer.ts_ns + outer.dur_ns;
  if (inner.ts_ns < outer.ts_ns || inner.ts_ns + inner.dur_ns > outer_end)
    return false;
  return inner.ts_ns < outer_end || outer.dur_ns == 0;
}

// Each event's rank in the order the profiler issued it, by `events` index
// (0 where unknown): for CPU ops the `Ev Idx` when every op of the thread has
// one, else the `External id` when every op has one (both count up as ops
// start, a parent before its children); for runtime calls the `correlation`.
// One key for the whole thread, or the comparison would not be an order.
void IssueOrder(const std::vector<KinetoEvent>& events,
                const std::vector<int32_t>& thread_events,
                std::vector<int64_t>* seq) {
  bool all_ev_idx = true, all_external = true;
  for (int32_t e : thread_events) {
    if (!IsCpuOp(events[e].kind)) continue;
    all_ev_idx &= events[e].ev_idx >= 0;
    all_external &= events[e].external_id >= 0;
  }
  for (int32_t e : thread_events) {
    const KinetoEvent& event = events[e];
    if (event.kind == EventKind::kRuntime) {
      (*seq)[e] = std::max<int64_t>(0, event.correlation);
    } else if (all_ev_idx) {
      (*seq)[e] = event.ev_idx;
    } else if (all_external) {
      (*seq)[e] = event.external_id;
    }
  }
}

}  // namespace

CpuOpNesting::CpuOpNesting(const KinetoTrace& trace) {
  const auto& events = trace.events();
  parent_.assign(events.size(), -1);
  children_dur_ns_.assign(events.size(), 0);
  thread_of_.assign(events.size(), -1);

  absl::flat_hash_map<std::pair<int64_t, int64_t>, int32_t> thread_ids;
  std::vector<std::vector<int32_t>> per_thread;
  for (size_t i = 0; i < events.size(); ++i) {
    const KinetoEvent& e = events[i];
    if (!IsCpuOp(e.kind) && e.kind != EventKind::kRuntime) continue;
    auto [it, inserted] = thread_ids.try_emplace(
        {e.pid, e.tid}, static_cast<int32_t>(threads_.size()));
    if (inserted) {
      threads_.push_back(KinetoThread{e.pid, e.tid, {}, {}});
      per_thread.emplace_back();
    }
    thread_of_[i] = it->second;
    per_thread[it->second].push_back(static_cast<int32_t>(i));
  }
  std::vector<int64_t> seq(events.size(), 0);  // by event; one for all threads
  for (size_t t = 0; t < threads_.size(); ++t) {
    std::vector<int32_t>& ordered = per_thread[t];
    IssueOrder(events, ordered, &seq);
    // Start order; at equal starts CPU ops before the runtime calls they make,
    // then the order the profiler issued them in (IssueOrder), and only where
    // the trace carries none the enclosing (longer) op first, then file order.
    // Durations come last because they mislead: siblings `aten::lift_fresh`
    // (0 us) and `aten::detach_` (2 us) starting in one microsecond were
    // swapped, and the aligner then lost its place.
    // The keys are copied out of the events before sorting: comparing through
    // indices into 128-byte events missed the cache on every comparison (a
    // third of the nesting's time on a 400k-op nsys graph).
    std::vector<std::tuple<int64_t, bool, int64_t, int64_t, int32_t>> keys;
    keys.reserve(ordered.size());
    for (int32_t e : ordered) {
      keys.emplace_back(events[e].ts_ns, events[e].kind == EventKind::kRuntime,
                        seq[e], -events[e].dur_ns, e);
    }
    std::sort(keys.begin(), keys.end());
    for (size_t k = 0; k < keys.size(); ++k) ordered[k] = std::get<4>(keys[k]);
    for (int32_t e : ordered) {
      if (events[e].kind == EventKind::kRuntime) {
        threads_[t].runtime.push_back(e);
      } else {
        threads_[t].ops.push_back(e);
      }
    }
    Nest(trace, ordered);
  }
  // Deterministic thread order: by (pid, tid).
  std::vector<int32_t> order(threads_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return std::make_pair(threads_[a].pid, threads_[a].tid) <
           std::make_pair(threads_[b].pid, threads_[b].tid);
  });
  std::vector<int32_t> new_index(order.size());
  std::vector<KinetoThread> sorted;
  sorted.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    new_index[order[i]] = static_cast<int32_t>(i);
    sorted.push_back(std::move(threads_[order[i]]));
  }
  threads_ = std::move(sorted);
  for (int32_t& t : thread_of_) {
    if (t >= 0) t = new_index[t];
  }
}

void CpuOpNesting::Nest(const KinetoTrace& trace,
                        const std::vector<int32_t>& ordered) {
  const auto& events = trace.events();
  std::vector<int32_t> stack;
  for (int32_t e : ordered) {
    const KinetoEvent& event = events[e];
    while (!stack.empty() && !Contains(events[stack.back()], event))
      stack.pop_back();
    if (!stack.empty()) {
      parent_[e] = stack.back();
      if (event.kind != EventKind::kRuntime) {
        children_dur_ns_[stack.back()] += event.dur_ns;
      }
    }
    if (event.kind != EventKind::kRuntime) stack.push_back(e);
  }
}

}  // namespace et::kineto
