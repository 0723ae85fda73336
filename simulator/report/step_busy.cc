// Per-step busy times by side; see step_busy.h.
#include "simulator/report/step_busy.h"

#include <algorithm>
#include <set>
#include <utility>

#include "simulator/report/interval_set.h"

namespace et::sim {
namespace {

bool IsComm(SimOpKind k) {
  return k == SimOpKind::kCollective || k == SimOpKind::kSend ||
         k == SimOpKind::kRecv;
}

// One step's nodes sorted into the intervals each side is busy.
struct SideIntervals {
  std::set<uint32_t> host_threads;
  std::vector<Interval> host_compute, gpu, comm;  // host: ops + gaps
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
      s.host_threads.insert(r);
      s.host_compute.push_back({op.first - p.gap_ns[i], op.second});
    } else {
      s.gpu.push_back(op);
    }
  }
  for (SideIntervals& s : by_step) {
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
  // Every step's work together: each side is measured in a step's window,
  // whatever step its nodes are of (the host runs a step's work ahead, inside
  // the step before; a thread's gap may span the step before), so no side
  // is busy longer than the step and the steps add up to the run.
  std::vector<Interval> host, gpu, comm;
  for (const SideIntervals& s : by_step) {
    host.insert(host.end(), s.host_compute.begin(), s.host_compute.end());
    gpu.insert(gpu.end(), s.gpu.begin(), s.gpu.end());
    comm.insert(comm.end(), s.comm.begin(), s.comm.end());
  }
  host = Merge(std::move(host));
  gpu = Merge(std::move(gpu));
  // Communication is exposed where the side that computes is idle: the GPU
  // when the trace has GPU ops, else the host threads, gaps included (a
  // CPU-only run).
  const std::vector<Interval> exposed =
      Subtract(Merge(std::move(comm)), p.steps.has_gpu_ops() ? gpu : host);
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
    b.host_busy_us = within(host);
    b.host_threads = static_cast<int64_t>(by_step[k].host_threads.size());
    b.gpu_busy_us = within(gpu);
    b.exposed_comm_us = within(exposed);
    b.gpu_ops_unrecorded = !p.steps.has_gpu_ops() && p.graph->info().gpu_job;
    PickBoundSide(&b);
    bounds.push_back(b);
  }
  return bounds;
}

}  // namespace et::sim
