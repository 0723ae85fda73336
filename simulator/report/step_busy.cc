// Per-step busy times by side; see step_busy.h.
#include "simulator/report/step_busy.h"

#include <algorithm>
#include <set>
#include <utility>

#include "simulator/report/interval_set.h"
#include "simulator/report/timeline_sides.h"

namespace et::sim {
namespace {

int32_t StepOf(const RankProgram& p, size_t i) {
  return p.steps.step_ids().empty()
             ? 0
             : p.steps.step_index(static_cast<NodeIndex>(i));
}

// The host threads that run each step's host ops.
std::vector<std::set<uint32_t>> HostThreadsByStep(const RankProgram& p,
                                                  const ClassTimeline& tl,
                                                  size_t steps) {
  std::vector<std::set<uint32_t>> threads(steps);
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (p.kind[i] == SimOpKind::kNoop || tl.finish_ns[i] < 0) continue;
    const int32_t k = StepOf(p, i);
    const uint32_t r = p.resource[i];
    if (k < 0 || static_cast<size_t>(k) >= steps ||
        r >= p.resource_is_host.size() || !p.resource_is_host[r]) {
      continue;
    }
    threads[k].insert(r);
  }
  return threads;
}

}  // namespace

std::vector<StepBound> StepBounds(const RankProgram& p, const ClassTimeline& tl,
                                  const std::vector<int64_t>& step_end_ns) {
  // Every node as simulated, whatever step it is of: each side is measured
  // in a step's window (the host runs a step's work ahead, inside the step
  // before; a thread's gap may span the step before), so no side is busy
  // longer than the step and the steps add up to the run.
  const TimelineSides sides = SortTimeline(p, tl);
  const std::vector<std::set<uint32_t>> threads =
      HostThreadsByStep(p, tl, step_end_ns.size());
  std::vector<StepBound> bounds;
  int64_t prev_end = 0;
  for (size_t k = 0; k < step_end_ns.size(); ++k) {
    const int64_t start = prev_end;
    const int64_t end = std::max(step_end_ns[k], prev_end);
    prev_end = end;
    auto within = [&](const std::vector<Interval>& v) {
      return static_cast<double>(Length(Clip(v, start, end))) / 1e3;
    };
    StepBound b;
    b.step_us = static_cast<double>(end - start) / 1e3;
    // The host threads together: the main thread waits while the autograd
    // thread runs the backward pass, so their busy times add up, and any one
    // of them alone would understate what the host needs for a step.
    b.host_busy_us = within(sides.host);
    b.host_threads = static_cast<int64_t>(threads[k].size());
    b.gpu_busy_us = within(sides.gpu);
    b.exposed_comm_us = within(sides.exposed_comm);
    b.gpu_ops_unrecorded = !p.steps.has_gpu_ops() && p.graph->info().gpu_job;
    PickBoundSide(&b);
    bounds.push_back(b);
  }
  return bounds;
}

}  // namespace et::sim
