// GPU work -> launching host op, through correlation ids and CPU-op nesting.
#include "converter/kineto/gpu_op_linker.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace et::kineto {
namespace {

bool IsGpuWork(EventKind kind) {
  return kind == EventKind::kKernel || kind == EventKind::kMemcpy ||
         kind == EventKind::kMemset;
}

const char* CategoryName(EventKind kind) {
  switch (kind) {
    case EventKind::kKernel:
      return "kernel";
    case EventKind::kMemcpy:
      return "gpu_memcpy";
    default:
      return "gpu_memset";
  }
}

// The nearest op at or above `op` (following Kineto nesting) that has an ET
// twin.
uint64_t NearestMatchedAncestor(const CpuOpNesting& nesting,
                                const std::vector<uint64_t>& event_et_id,
                                int32_t op) {
  for (int32_t p = op; p >= 0; p = nesting.parent(p)) {
    if (event_et_id[p] != 0) return event_et_id[p];
  }
  return 0;
}

// Finds the launcher of GPU event `gpu` launched by runtime call `launch` (-1
// unknown).
class LauncherFinder {
 public:
  LauncherFinder(const KinetoTrace& trace, const CpuOpNesting& nesting,
                 const std::vector<uint64_t>& event_et_id)
      : trace_(trace), nesting_(nesting), event_et_id_(event_et_id) {
    const auto& events = trace.events();
    for (size_t i = 0; i < events.size(); ++i) {
      if ((events[i].kind == EventKind::kCpuOp ||
           events[i].kind == EventKind::kUserAnnotation) &&
          events[i].external_id >= 0) {
        by_external_id_.emplace(events[i].external_id, static_cast<int32_t>(i));
      }
    }
  }

  uint64_t Find(int32_t gpu, int32_t launch, int64_t* mismatches) const {
    const auto& events = trace_.events();
    if (launch >= 0) {
      const int32_t enclosing = nesting_.parent(launch);
      // Old Kineto wrote the correlation id as the runtime call's External id:
      // no information then.
      const int64_t ext =
          events[launch].external_id != events[launch].correlation
              ? events[launch].external_id
              : -1;
      if (enclosing >= 0 && ext >= 0 && events[enclosing].external_id >= 0 &&
          events[enclosing].external_id != ext) {
        ++*mismatches;
      }
      if (const uint64_t id =
              NearestMatchedAncestor(nesting_, event_et_id_, enclosing)) {
        return id;
      }
      if (ext >= 0) return ByExternalId(ext);
      return 0;
    }
    return events[gpu].external_id >= 0 ? ByExternalId(events[gpu].external_id)
                                        : 0;
  }

 private:
  uint64_t ByExternalId(int64_t ext) const {
    auto it = by_external_id_.find(ext);
    if (it == by_external_id_.end()) return 0;
    return NearestMatchedAncestor(nesting_, event_et_id_, it->second);
  }

  const KinetoTrace& trace_;
  const CpuOpNesting& nesting_;
  const std::vector<uint64_t>& event_et_id_;
  absl::flat_hash_map<int64_t, int32_t> by_external_id_;
};

// For NCCL kernels: the innermost collective-issuing host op at or above the
// launcher.
uint64_t FindCollective(absl::Span<const HostOpView> host_ops,
                        const absl::flat_hash_map<uint64_t, size_t>& by_et_id,
                        uint64_t launcher) {
  for (int depth = 0; launcher != 0 && depth < 64; ++depth) {
    auto it = by_et_id.find(launcher);
    if (it == by_et_id.end()) return 0;
    const HostOpView& op = host_ops[it->second];
    if (IsCollectiveOpName(op.name)) return op.et_id;
    launcher = op.parent_et_id;
  }
  return 0;
}

GpuOp MakeGpuOp(const KinetoTrace& trace, const KinetoEvent& e,
                int32_t launch) {
  GpuOp op;
  op.name = std::string(trace.name(e.name));
  op.category = CategoryName(e.kind);
  op.device = e.device;
  op.stream =
      e.stream >= 0 ? e.stream : e.tid;  // Kineto puts the stream in tid too
  op.start_ns = e.ts_ns;
  op.dur_ns = e.dur_ns;
  op.launch_ns = launch >= 0 ? trace.events()[launch].ts_ns : -1;
  op.correlation = e.correlation;
  if (e.dims >= 0) {
    const LaunchDims& dims = trace.dims()[e.dims];
    op.grid.assign(dims.grid.begin(), dims.grid.end());
    op.block.assign(dims.block.begin(), dims.block.end());
  }
  op.bytes = e.bytes;
  const std::string lower = absl::AsciiStrToLower(op.name);
  op.is_nccl =
      absl::StartsWith(lower, "nccl") || absl::StartsWith(lower, "rccl");
  op.pg_name = std::string(trace.name(e.pg_name));
  return op;
}

}  // namespace

bool IsCollectiveOpName(absl::string_view name) {
  return name == "record_param_comms" || absl::StartsWith(name, "c10d::") ||
         absl::StartsWith(name, "nccl:") || absl::StartsWith(name, "gloo:");
}

GpuLink LinkGpuOps(const KinetoTrace& trace, const CpuOpNesting& nesting,
                   const std::vector<uint64_t>& event_et_id,
                   absl::Span<const HostOpView> host_ops,
                   int64_t window_start_ns, int64_t window_end_ns) {
  const auto& events = trace.events();
  absl::flat_hash_map<int64_t, int32_t> launch_by_correlation;
  // CUPTI numbers runtime calls from one counter, so a GPU op whose
  // correlation id is below every recorded call's was launched before host
  // events were recorded.
  int64_t first_correlation = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind == EventKind::kRuntime && events[i].correlation >= 0) {
      launch_by_correlation.emplace(events[i].correlation,
                                    static_cast<int32_t>(i));
      first_correlation = std::min(first_correlation, events[i].correlation);
    }
  }
  absl::flat_hash_map<uint64_t, size_t> by_et_id;
  for (size_t h = 0; h < host_ops.size(); ++h)
    by_et_id.emplace(host_ops[h].et_id, h);

  LauncherFinder finder(trace, nesting, event_et_id);
  GpuLink link;
  std::vector<GpuOp> ops;
  std::vector<int32_t> launches;
  for (size_t i = 0; i < events.size(); ++i) {
    const KinetoEvent& e = events[i];
    if (!IsGpuWork(e.kind)) continue;
    int32_t launch = -1;
    if (e.correlation >= 0) {
      auto it = launch_by_correlation.find(e.correlation);
      if (it != launch_by_correlation.end()) launch = it->second;
    }
    // Kept (they occupy the GPU in the recorded run) but launched by no op
    // of the ET, so in no step: the unprofiled step model leaves them out.
    const bool before_trace =
        launch < 0 && e.correlation >= 0 && e.correlation < first_correlation;
    const int64_t t = launch >= 0 ? events[launch].ts_ns : e.ts_ns;
    if (!before_trace && (t < window_start_ns || t > window_end_ns)) {
      ++link.outside_window;
      continue;
    }
    GpuOp op = MakeGpuOp(trace, e, launch);
    if (before_trace) {
      ++link.before_trace;
      ops.push_back(std::move(op));
      launches.push_back(launch);
      continue;
    }
    op.launcher_et_id = finder.Find(static_cast<int32_t>(i), launch,
                                    &link.external_id_mismatches);
    if (op.launcher_et_id == 0) {
      ++link.orphans;
      ++(launch < 0 ? link.orphans_without_launch_record
                    : link.orphans_with_unmatched_launch);
    }
    if (op.is_nccl)
      op.collective_et_id =
          FindCollective(host_ops, by_et_id, op.launcher_et_id);
    ops.push_back(std::move(op));
    launches.push_back(launch);
  }
  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_tuple(ops[a].device, ops[a].stream, ops[a].start_ns,
                           ops[a].correlation, a) <
           std::make_tuple(ops[b].device, ops[b].stream, ops[b].start_ns,
                           ops[b].correlation, b);
  });
  link.gpu_ops.reserve(ops.size());
  link.launch_event.reserve(ops.size());
  for (size_t i : order) {
    link.gpu_ops.push_back(std::move(ops[i]));
    link.launch_event.push_back(launches[i]);
  }
  return link;
}

}  // namespace et::kineto
