// Waits between host threads from recorded times; see cross_thread_waits.h.
#include "converter/graph/cross_thread_waits.h"

#include <algorithm>
#include <map>

namespace et::convert {
namespace {

struct Span {
  uint32_t op;
  double start_us, end_us;
};

// One thread's top-level ops, its ranges (ops at any depth that are not
// nodes: containers) and its nodes, in start order, and its nodes in end
// order.
struct ThreadOps {
  std::vector<Span> top, ranges, nodes, nodes_by_end;
};

bool Timed(const HostOp& op) {
  return !op.is_gpu() && op.ts_us >= 0 && op.inclusive_dur_us >= 0;
}

std::map<int64_t, ThreadOps> CollectThreads(const OpTable& table,
                                            const KeepPlan& plan) {
  std::map<int64_t, ThreadOps> threads;
  for (uint32_t i = 0; i < table.size(); ++i) {  // ids ascend: start order
    const HostOp& op = table.op(i);
    if (!Timed(op)) continue;
    const Span s{i, op.ts_us, op.ts_us + op.inclusive_dur_us};
    ThreadOps& t = threads[op.tid];
    const uint32_t p = table.parent(i);
    if (p == kNoOp || !Timed(table.op(p)) || table.op(p).tid != op.tid)
      t.top.push_back(s);
    if (plan.is_node(i)) {
      t.nodes.push_back(s);
    } else if (s.end_us > s.start_us) {
      t.ranges.push_back(s);
    }
  }
  for (auto& [tid, t] : threads) {
    auto by_start = [](const Span& a, const Span& b) {
      return a.start_us < b.start_us;
    };
    std::stable_sort(t.top.begin(), t.top.end(), by_start);
    std::stable_sort(t.ranges.begin(), t.ranges.end(), by_start);
    std::stable_sort(t.nodes.begin(), t.nodes.end(), by_start);
    t.nodes_by_end = t.nodes;
    std::stable_sort(
        t.nodes_by_end.begin(), t.nodes_by_end.end(),
        [](const Span& a, const Span& b) { return a.end_us < b.end_us; });
  }
  return threads;
}

// The first span starting at or after `t`, or nullptr.
const Span* FirstFrom(const std::vector<Span>& v, double t) {
  auto it = std::lower_bound(
      v.begin(), v.end(), t,
      [](const Span& s, double value) { return s.start_us < value; });
  return it == v.end() ? nullptr : &*it;
}

// The last span (in end order) ending at or before `t`, or nullptr.
const Span* LastEndingBy(const std::vector<Span>& by_end, double t) {
  auto it = std::upper_bound(
      by_end.begin(), by_end.end(), t,
      [](double value, const Span& s) { return value < s.end_us; });
  return it == by_end.begin() ? nullptr : &*std::prev(it);
}

}  // namespace

std::vector<CrossThreadWait> FindCrossThreadWaits(const OpTable& table,
                                                  const KeepPlan& plan) {
  const std::map<int64_t, ThreadOps> threads = CollectThreads(table, plan);
  std::vector<CrossThreadWait> waits;
  if (threads.size() < 2) return waits;
  for (const auto& [tid_a, a] : threads) {
    for (const Span& range : a.ranges) {
      for (const auto& [tid_b, b] : threads) {
        if (tid_b == tid_a) continue;
        const Span* first = FirstFrom(b.top, range.start_us);
        if (first == nullptr || first->start_us >= range.end_us) continue;
        // The last of B's top-level ops that began and ended inside R.
        const Span* last = nullptr;
        for (const Span* s = first;
             s != b.top.data() + b.top.size() && s->start_us < range.end_us;
             ++s) {
          if (s->end_us <= range.end_us) last = s;
        }
        const Span* handed_to = FirstFrom(b.nodes, first->start_us);
        const Span* handed_by = LastEndingBy(a.nodes_by_end, first->start_us);
        if (handed_to != nullptr && handed_by != nullptr &&
            handed_to->start_us < range.end_us)
          waits.push_back({handed_to->op, handed_by->op});
        const Span* after = FirstFrom(a.nodes, range.end_us);
        if (last != nullptr && after != nullptr)
          waits.push_back({after->op, last->op});
      }
    }
  }
  return waits;
}

}  // namespace et::convert
