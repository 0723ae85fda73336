// A rank's timeline by side; see timeline_sides.h.
#include "simulator/report/timeline_sides.h"

#include <utility>

#include "simulator/report/step_breakdown.h"

namespace et::sim {
namespace {

bool IsComm(SimOpKind k) {
  return k == SimOpKind::kCollective || k == SimOpKind::kSend ||
         k == SimOpKind::kRecv;
}

// A GPU op's set by its part (step_breakdown.h's rule on its name).
std::vector<Interval>* GpuSetOf(absl::string_view name, TimelineSides* s) {
  switch (GpuPartOf(name)) {
    case StepPart::kMemcpy:
      return &s->memcpy;
    case StepPart::kMemset:
      return &s->memset;
    default:
      return &s->kernel;
  }
}

}  // namespace

TimelineSides SortTimeline(const RankProgram& p, const ClassTimeline& tl) {
  TimelineSides s;
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (p.kind[i] == SimOpKind::kNoop || tl.finish_ns[i] < 0) continue;
    const Interval op = {tl.start_ns[i], tl.finish_ns[i]};
    if (IsComm(p.kind[i])) {
      s.comm.push_back({tl.issue_ns[i], tl.finish_ns[i]});
      continue;
    }
    const uint32_t r = p.resource[i];
    if (r < p.resource_is_host.size() && p.resource_is_host[r]) {
      s.host_ops.push_back(op);
      s.host_gaps.push_back({op.first - p.gap_ns[i], op.first});
      continue;
    }
    GpuSetOf(p.graph->name(i), &s)->push_back(op);
  }
  for (std::vector<Interval>* v :
       {&s.host_ops, &s.host_gaps, &s.kernel, &s.memcpy, &s.memset, &s.comm}) {
    *v = Merge(std::move(*v));
  }
  s.host = Union(s.host_ops, s.host_gaps);
  s.gpu = Union(Union(s.kernel, s.memcpy), s.memset);
  s.exposed_comm = Subtract(s.comm, p.steps.has_gpu_ops() ? s.gpu : s.host);
  return s;
}

}  // namespace et::sim
