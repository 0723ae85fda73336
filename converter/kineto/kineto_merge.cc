// Kineto merge; see kineto_merge.h.
#include "converter/kineto/kineto_merge.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "converter/kineto/gpu_queued_gap.h"
#include "converter/kineto/kineto_link.h"
#include "proto/attr_names.h"

namespace et::convert {
namespace {

double Micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

HostOp MakeGpuOp(const kineto::GpuOp& g, uint64_t id, StringPool* pool) {
  HostOp op;
  op.id = id;
  op.parent = g.launcher_et_id;
  op.name = pool->Intern(g.name);
  op.category = pool->Intern(g.category.empty() ? "kernel" : g.category);
  op.stream = g.stream;
  op.device = static_cast<int32_t>(g.device);
  op.tid = -1;
  op.ts_us = Micros(g.start_ns);
  op.dur_us = Micros(g.dur_ns);
  op.inclusive_dur_us = op.dur_us;
  auto add_int = [&](const char* name, int64_t v) {
    ExtraAttr a;
    a.name = pool->Intern(name);
    a.kind = ExtraAttr::Kind::kInt;
    a.i = v;
    op.extra_attrs.push_back(std::move(a));
  };
  auto add_list = [&](const char* name, const std::vector<int64_t>& v) {
    ExtraAttr a;
    a.name = pool->Intern(name);
    a.kind = ExtraAttr::Kind::kIntList;
    a.list = v;
    op.extra_attrs.push_back(std::move(a));
  };
  if (g.correlation >= 0) add_int("correlation", g.correlation);
  if (g.launch_ns >= 0) add_int(attr::kLaunchNs, g.launch_ns);
  if (!g.grid.empty()) add_list(attr::kGrid, g.grid);
  if (!g.block.empty()) add_list(attr::kBlock, g.block);
  if (g.bytes >= 0) add_int(attr::kTensorSize, g.bytes);
  if (!g.pg_name.empty()) {
    ExtraAttr a;
    a.name = pool->Intern(attr::kPgName);
    a.s = g.pg_name;
    op.extra_attrs.push_back(std::move(a));
  }
  return op;
}

// What the linker needs of each ET op, without tying it to HostOp; the
// largest id, after which GPU ops are numbered.
std::vector<kineto::HostOpView> HostOpViews(const std::vector<HostOp>& ops,
                                            const StringPool& pool,
                                            uint64_t* max_id) {
  std::vector<kineto::HostOpView> views;
  views.reserve(ops.size());
  *max_id = 0;
  for (const HostOp& op : ops) {
    views.push_back({op.id, op.parent, pool.Get(op.name), op.tid, op.rf_id,
                     op.rf_id >= 0 ? op.rf_id : static_cast<int64_t>(op.id)});
    *max_id = std::max(*max_id, op.id);
  }
  return views;
}

// Measured times replace the ET's own for every matched host op.
void ApplyHostTimings(const kineto::LinkResult& link,
                      const absl::flat_hash_map<uint64_t, size_t>& index,
                      std::vector<HostOp>* ops) {
  for (const kineto::HostTiming& t : link.timings) {
    HostOp& op = (*ops)[index.at(t.et_id)];
    op.ts_us = Micros(t.start_ns);
    op.inclusive_dur_us = Micros(t.dur_ns);
    op.exclusive_dur_us = Micros(t.exclusive_dur_ns);
  }
}

// GPU ops get fresh ids after every ET id, in stream order; sync edges then
// name them by those ids.
void AppendGpuOps(const kineto::LinkResult& link, uint64_t max_id,
                  const absl::flat_hash_map<uint64_t, size_t>& index,
                  StringPool* pool, std::vector<HostOp>* ops) {
  const size_t first_gpu = ops->size();
  ops->reserve(first_gpu + link.gpu_ops.size());
  for (size_t k = 0; k < link.gpu_ops.size(); ++k) {
    ops->push_back(MakeGpuOp(link.gpu_ops[k], max_id + 1 + k, pool));
  }
  for (const kineto::SyncEdge& e : link.sync_edges) {
    const uint64_t from = max_id + 1 + e.from_gpu_op;
    if (e.kind == kineto::SyncEdge::Kind::kGpuToGpu) {
      (*ops)[first_gpu + e.to_gpu_op].sync_deps.push_back(from);
    } else {
      auto it = index.find(e.to_host_et_id);
      if (it != index.end()) (*ops)[it->second].sync_deps.push_back(from);
    }
  }
}

// The link's counts and measured step times, for the report and metadata.
void RecordLinkStats(const kineto::KinetoTrace& trace,
                     const kineto::LinkResult& link, KinetoMergeStats* info) {
  info->host_ops_considered = link.host_ops_considered;
  info->host_ops_matched = link.host_ops_matched;
  info->gpu_ops = static_cast<int64_t>(link.gpu_ops.size());
  info->orphan_gpu_ops = link.orphan_gpu_ops;
  info->orphans_without_launch_record = link.orphans_without_launch_record;
  info->orphans_with_unmatched_launch = link.orphans_with_unmatched_launch;
  info->gpu_ops_outside_window = link.gpu_ops_outside_window;
  info->gpu_ops_before_trace = link.gpu_ops_before_trace;
  info->sync_edges = static_cast<int64_t>(link.sync_edges.size());
  info->unresolved_syncs = link.unresolved_syncs;
  for (const kineto::StepSpan& s : link.steps) {
    info->step_times_us.push_back(Micros(s.period_ns));
    info->step_names.push_back(s.name);
    info->step_starts_us.push_back(Micros(s.start_ns));
  }
  if (link.matched_step >= 0)
    info->measured_step_us = Micros(link.steps[link.matched_step].period_ns);
  info->rank = trace.rank();
  info->world_size = trace.world_size();
  info->device_name = trace.device_name();
  info->device_compute_capability = trace.device_compute_capability();
  if (std::optional<QueuedGap> gap = MeasureQueuedGap(link.gpu_ops)) {
    info->gpu_queued_gap_us = Micros(gap->median_ns);
    info->gpu_queued_pairs = gap->pairs;
  }
  if (link.nested_op_gap_ns >= 0) {
    info->nested_op_gap_us = Micros(link.nested_op_gap_ns);
    info->nested_op_pairs = link.nested_op_pairs;
  }
  if (link.view_op_span_ns >= 0) {
    info->view_op_span_us = Micros(link.view_op_span_ns);
    info->view_ops = link.view_ops;
  }
  if (trace.unprofiled_step_ms() > 0)
    info->unprofiled_step_us = trace.unprofiled_step_ms() * 1000.0;
  if (trace.unprofiled_step_after_ms() > 0)
    info->unprofiled_step_after_us = trace.unprofiled_step_after_ms() * 1000.0;
  for (double ms : trace.unprofiled_step_blocks_ms())
    info->unprofiled_step_blocks_us.push_back(ms * 1000.0);
  info->unprofiled_peak_bytes = trace.unprofiled_peak_bytes();
  info->unprofiled_start_bytes = trace.unprofiled_start_bytes();
  info->light_profiler_ns_per_op = trace.light_profiler_ns_per_op();
  info->probe_full_over_light_ns = trace.probe_full_over_light_ns();
  info->page_faults = trace.page_faults();
}

// Per-thread match rates, and warnings where the link is weak enough to
// distort times: a thread under 99% matched, GPU ops without a launcher.
void RecordThreadsAndWarnings(const kineto::LinkResult& link,
                              KinetoMergeStats* info) {
  for (const kineto::ThreadMatchStats& t : link.per_thread) {
    info->per_thread.push_back({t.tid, t.host_ops, t.matched});
    if (t.matched_fraction() < 0.99) {
      info->warnings.push_back(absl::StrFormat(
          "Kineto: thread %d matched %d of %d host ops (%.1f%%)", t.tid,
          t.matched, t.host_ops, 100.0 * t.matched_fraction()));
    }
  }
  if (link.orphan_gpu_ops > 0) {
    info->warnings.push_back(
        absl::StrFormat("Kineto: %d GPU ops have no launching host op (%d "
                        "with no runtime call of their correlation id, %d "
                        "launched outside every matched host op); kept as "
                        "GPU nodes without a launcher",
                        link.orphan_gpu_ops, link.orphans_without_launch_record,
                        link.orphans_with_unmatched_launch));
  }
}

// Why nothing tied the Kineto trace to the ET, in the words that are true
// of these two files: which side records no pid, rank or wall clock.
std::string UncheckedRunWarning(const EtRun& et,
                                const std::string& kineto_path) {
  const bool et_says = et.pid > 0 || !et.local_time.empty();
  const std::string why =
      et_says ? std::string(
                    "it records no process id, rank or wall clock (the "
                    "legacy profiler of a PyTorch built without Kineto, as "
                    "Debian's, writes none; examples/et_record.py adds the "
                    "process id)")
              : absl::StrFormat(
                    "neither file records a process id, rank or wall clock "
                    "(%s has no `pid` or `time`: an ET from before PyTorch "
                    "wrote them)",
                    et.path);
  return absl::StrFormat(
      "%s: nothing shows it was recorded in the same run as %s: %s; a trace "
      "of another run of the same program would be accepted as well",
      kineto_path, et.path, why);
}

}  // namespace

absl::Status MergeKineto(const std::string& kineto_path,
                         const kineto::KinetoTrace* preloaded,
                         const kineto::CpuOpNesting* nesting,
                         const std::vector<int32_t>* event_of_id,
                         const EtRun& et, StringPool* pool,
                         std::vector<HostOp>* ops, KinetoMergeStats* info) {
  std::optional<kineto::KinetoTrace> loaded;
  if (preloaded == nullptr) {
    ASSIGN_OR_RETURN(loaded, kineto::KinetoTrace::Load(kineto_path));
    preloaded = &*loaded;
    for (const std::string& w : loaded->read_warnings())
      info->warnings.push_back(w);
  }
  const kineto::KinetoTrace& trace = *preloaded;
  // A preloaded trace is the one the ET was synthesized from (Kineto-only and
  // nsys imports): one run by construction, nothing to check.
  const bool same_source = loaded == std::nullopt;
  if (!same_source)
    RETURN_IF_ERROR(CheckSameRun(et, kineto_path, trace, *ops, *pool));
  if (!same_source && !CanCheckSameRun(et, trace))
    info->warnings.push_back(UncheckedRunWarning(et, kineto_path));
  uint64_t max_id = 0;
  const std::vector<kineto::HostOpView> views =
      HostOpViews(*ops, *pool, &max_id);
  kineto::LinkOptions link_options;
  // Only the nesting of the preloaded trace it was built from.
  if (!loaded.has_value()) {
    link_options.nesting = nesting;
    link_options.event_of_id = event_of_id;
  }
  auto linked = kineto::LinkKineto(trace, views, link_options);
  if (!linked.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", kineto_path, linked.status().message()));
  }
  const kineto::LinkResult& link = *linked;
  absl::flat_hash_map<uint64_t, size_t> index;
  index.reserve(ops->size());
  for (size_t i = 0; i < ops->size(); ++i) index.emplace((*ops)[i].id, i);
  ApplyHostTimings(link, index, ops);
  AppendGpuOps(link, max_id, index, pool, ops);
  RecordLinkStats(trace, link, info);
  RecordThreadsAndWarnings(link, info);
  return absl::OkStatus();
}

}  // namespace et::convert
