// LinkKineto: match host ops, then derive timings, GPU ops, sync edges and
// steps.
#include "converter/kineto/kineto_link.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/gpu_op_linker.h"
#include "converter/kineto/host_op_matcher.h"
#include "converter/kineto/nested_op_gap.h"
#include "converter/kineto/sync_edges.h"
#include "converter/kineto/view_op_span.h"
#include "step/step_model.h"

namespace et::kineto {
namespace {

void CollectSteps(const KinetoTrace& trace, LinkResult* result) {
  for (const KinetoEvent& e : trace.events()) {
    if (e.kind != EventKind::kUserAnnotation && e.kind != EventKind::kCpuOp)
      continue;
    const absl::string_view name = trace.name(e.name);
    if (StepNumberOfName(name) < 0) continue;
    result->steps.push_back(StepSpan{std::string(name), e.ts_ns, e.dur_ns});
  }
  std::sort(result->steps.begin(), result->steps.end(),
            [](const StepSpan& a, const StepSpan& b) {
              return std::make_pair(a.start_ns, a.name) <
                     std::make_pair(b.start_ns, b.name);
            });
  // Profiled periods: start to the next start; the last step ends with the
  // last GPU op launched inside its span.
  auto& steps = result->steps;
  for (size_t s = 0; s < steps.size(); ++s) {
    StepSpan& step = steps[s];
    step.period_ns = step.dur_ns;
    if (s + 1 < steps.size()) {
      step.period_ns = steps[s + 1].start_ns - step.start_ns;
      continue;
    }
    for (const GpuOp& op : result->gpu_ops) {
      if (op.launch_ns < step.start_ns ||
          op.launch_ns >= step.start_ns + step.dur_ns)
        continue;
      step.period_ns =
          std::max(step.period_ns, op.start_ns + op.dur_ns - step.start_ns);
    }
  }
  // The step holding most of the matched ops' window.
  int64_t best_overlap = 0;
  for (size_t s = 0; s < result->steps.size(); ++s) {
    const StepSpan& step = result->steps[s];
    const int64_t overlap =
        std::min(step.start_ns + step.dur_ns, result->window_end_ns) -
        std::max(step.start_ns, result->window_start_ns);
    if (overlap > best_overlap) {
      best_overlap = overlap;
      result->matched_step = static_cast<int>(s);
    }
  }
}

}  // namespace

absl::StatusOr<LinkResult> LinkKineto(const KinetoTrace& trace,
                                      absl::Span<const HostOpView> host_ops,
                                      const LinkOptions& options) {
  absl::flat_hash_set<uint64_t> ids;
  for (const HostOpView& op : host_ops) {
    if (!ids.insert(op.et_id).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kineto link: node %d: duplicate host op id", op.et_id));
    }
  }
  LinkResult result;
  std::optional<CpuOpNesting> built;
  if (options.nesting == nullptr) built.emplace(trace);
  const CpuOpNesting& nesting =
      options.nesting != nullptr ? *options.nesting : *built;
  // The matcher pairs threads with threads (quadratic) and indexes each.
  if (static_cast<int64_t>(nesting.threads().size()) > kMaxTraceThreads) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CPU ops on %d threads, over the limit of %d threads in one trace",
        nesting.threads().size(), kMaxTraceThreads));
  }
  const HostMatch match = MatchHostOps(trace, nesting, host_ops, options);
  result.per_thread = match.per_thread;
  result.used_record_function_id = match.used_record_function_id;

  const auto& events = trace.events();
  std::vector<uint64_t> event_et_id(events.size(), 0);
  int64_t window_start = std::numeric_limits<int64_t>::max();
  int64_t window_end = std::numeric_limits<int64_t>::min();
  for (size_t h = 0; h < host_ops.size(); ++h) {
    if (match.considered[h]) ++result.host_ops_considered;
    const int32_t e = match.twin[h];
    if (e < 0) continue;
    ++result.host_ops_matched;
    const KinetoEvent& event = events[e];
    event_et_id[e] = host_ops[h].et_id;
    const int64_t exclusive =
        std::max<int64_t>(0, event.dur_ns - nesting.children_dur_ns(e));
    result.timings.push_back(
        HostTiming{host_ops[h].et_id, event.ts_ns, event.dur_ns, exclusive});
    window_start = std::min(window_start, event.ts_ns);
    window_end = std::max(window_end, event.ts_ns + event.dur_ns);
  }
  if (result.host_ops_matched ==
      0) {  // nothing to delimit an iteration: take it all
    window_start = std::numeric_limits<int64_t>::min();
    window_end = std::numeric_limits<int64_t>::max();
  }
  result.window_start_ns = window_start;
  result.window_end_ns = window_end;

  GpuLink link = LinkGpuOps(trace, nesting, event_et_id, host_ops, window_start,
                            window_end);
  result.orphan_gpu_ops = link.orphans;
  result.orphans_without_launch_record = link.orphans_without_launch_record;
  result.orphans_with_unmatched_launch = link.orphans_with_unmatched_launch;
  result.gpu_ops_outside_window = link.outside_window;
  result.gpu_ops_before_trace = link.before_trace;
  result.external_id_mismatches = link.external_id_mismatches;
  result.sync_edges =
      BuildSyncEdges(trace, nesting, link, event_et_id, window_start,
                     window_end, &result.unresolved_syncs);
  result.gpu_ops = std::move(link.gpu_ops);
  CollectSteps(trace, &result);
  if (std::optional<NestedOpGap> gap = MeasureNestedOpGap(trace, nesting)) {
    result.nested_op_gap_ns = gap->median_ns;
    result.nested_op_pairs = gap->pairs;
  }
  if (std::optional<ViewOpSpan> span = MeasureViewOpSpan(trace, nesting)) {
    result.view_op_span_ns = span->median_ns;
    result.view_ops = span->ops;
  }
  return result;
}

}  // namespace et::kineto
