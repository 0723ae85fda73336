// Per-step busy times by side; see step_busy.h.
#include "simulator/report/step_busy.h"

#include <algorithm>
#include <map>
#include <utility>

namespace et::sim {
namespace {

using Interval = std::pair<int64_t, int64_t>;

// Sorted, disjoint intervals covering the same time as `v`.
std::vector<Interval> Merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.second <= i.first) continue;
    if (out.empty() || i.first > out.back().second) {
      out.push_back(i);
    } else {
      out.back().second = std::max(out.back().second, i.second);
    }
  }
  return out;
}

int64_t Length(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& i : merged) total += i.second - i.first;
  return total;
}

bool IsComm(SimOpKind k) {
  return k == SimOpKind::kCollective || k == SimOpKind::kSend ||
         k == SimOpKind::kRecv;
}

// One step's nodes sorted into the intervals each side is busy.
struct SideIntervals {
  std::map<uint32_t, std::vector<Interval>> host_by_thread;  // ops + gaps
  std::vector<Interval> host_compute, gpu, comm;             // host: ops + gaps
};

int32_t StepOf(const RankProgram& p, size_t i) {
  return p.steps.step_ids().empty()
             ? 0
             : p.steps.step_index(static_cast<NodeIndex>(i));
}

// By step: intervals[k] holds step k's nodes as simulated.
std::vector<SideIntervals> Collect(const RankProgram& p,
                                   const ClassTimeline& tl, size_t steps) {
  std::vector<SideIntervals> by_step(steps);
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (p.kind[i] == SimOpKind::kNoop || tl.finish_ns[i] < 0) continue;
    const int32_t k = StepOf(p, i);
    if (k < 0 || static_cast<size_t>(k) >= steps) continue;
    SideIntervals& s = by_step[k];
    const Interval op = {tl.start_ns[i], tl.finish_ns[i]};
    if (IsComm(p.kind[i])) {
      // From its issue: the time it waits for the other members is the
      // rank's communication too (a rendezvous with a slower rank).
      s.comm.push_back({tl.issue_ns[i], tl.finish_ns[i]});
      continue;
    }
    const uint32_t r = p.resource[i];
    if (r < p.resource_is_host.size() && p.resource_is_host[r]) {
      // The engine charges a host op's gap on its thread before it starts.
      s.host_by_thread[r].push_back({op.first - p.gap_ns[i], op.second});
      s.host_compute.push_back(s.host_by_thread[r].back());
    } else {
      s.gpu.push_back(op);
    }
  }
  for (SideIntervals& s : by_step) {
    for (auto& [r, v] : s.host_by_thread) v = Merge(std::move(v));
    s.host_compute = Merge(std::move(s.host_compute));
    s.gpu = Merge(std::move(s.gpu));
    s.comm = Merge(std::move(s.comm));
  }
  return by_step;
}

}  // namespace

std::vector<StepBound> StepBounds(const RankProgram& p, const ClassTimeline& tl,
                                  const std::vector<int64_t>& step_end_ns) {
  const std::vector<SideIntervals> by_step = Collect(p, tl, step_end_ns.size());
  // Communication is exposed where the side that computes is idle: the GPU
  // when the trace has GPU ops, else the host threads, gaps included (a
  // CPU-only run); the compute of any step hides it.
  std::vector<Interval> compute;
  for (const SideIntervals& s : by_step) {
    const auto& side = p.steps.has_gpu_ops() ? s.gpu : s.host_compute;
    compute.insert(compute.end(), side.begin(), side.end());
  }
  compute = Merge(std::move(compute));
  const int64_t compute_ns = Length(compute);
  std::vector<StepBound> bounds;
  int64_t prev_end = 0;
  for (size_t k = 0; k < step_end_ns.size(); ++k) {
    const SideIntervals& s = by_step[k];
    const int64_t end = std::max(step_end_ns[k], prev_end);
    StepBound b;
    b.step_us = static_cast<double>(end - prev_end) / 1e3;
    prev_end = end;
    // The host threads together: the main thread waits while the autograd
    // thread runs the backward pass, so their busy times add up, and any one
    // of them alone would understate what the host needs for a step.
    std::vector<Interval> host;
    for (const auto& [r, v] : s.host_by_thread)
      host.insert(host.end(), v.begin(), v.end());
    b.host_busy_us = static_cast<double>(Length(Merge(std::move(host)))) / 1e3;
    b.host_threads = static_cast<int64_t>(s.host_by_thread.size());
    b.gpu_busy_us = static_cast<double>(Length(s.gpu)) / 1e3;
    std::vector<Interval> both = compute;
    both.insert(both.end(), s.comm.begin(), s.comm.end());
    b.exposed_comm_us =
        static_cast<double>(Length(Merge(std::move(both))) - compute_ns) / 1e3;
    PickBoundSide(&b);
    bounds.push_back(b);
  }
  return bounds;
}

}  // namespace et::sim
