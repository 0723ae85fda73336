// Sync calls -> SyncEdge list; see sync_edges.h for the rules.
#include "converter/kineto/sync_edges.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace et::kineto {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

// GPU ops of one stream by the time they were enqueued (launch, else start).
struct StreamOps {
  int64_t device = -1;
  int64_t stream = -1;
  std::vector<std::pair<int64_t, size_t>> by_time;
};

class SyncEdgeBuilder {
 public:
  SyncEdgeBuilder(const KinetoTrace& trace, const CpuOpNesting& nesting,
                  const GpuLink& link, const std::vector<uint64_t>& event_et_id)
      : trace_(trace),
        nesting_(nesting),
        link_(link),
        event_et_id_(event_et_id) {
    for (size_t g = 0; g < link.gpu_ops.size(); ++g) {
      const GpuOp& op = link.gpu_ops[g];
      if (streams_.empty() || streams_.back().device != op.device ||
          streams_.back().stream != op.stream) {
        streams_.push_back(StreamOps{op.device, op.stream, {}});
      }
      streams_.back().by_time.emplace_back(
          op.launch_ns >= 0 ? op.launch_ns : op.start_ns, g);
      if (link.launch_event[g] >= 0)
        gpu_by_launch_.emplace(link.launch_event[g], g);
    }
    for (StreamOps& s : streams_)
      std::stable_sort(s.by_time.begin(), s.by_time.end());
    const auto& events = trace.events();
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i].correlation < 0) continue;
      if (events[i].kind == EventKind::kSync) {
        sync_by_corr_.emplace(events[i].correlation, static_cast<int32_t>(i));
      } else if (events[i].kind == EventKind::kRuntime) {
        runtime_by_corr_.emplace(events[i].correlation,
                                 static_cast<int32_t>(i));
      }
    }
  }

  void Run(int64_t window_start_ns, int64_t window_end_ns,
           std::vector<SyncEdge>* edges, int64_t* unresolved);

 private:
  size_t LastOnStreamBefore(int64_t device, int64_t stream, int64_t t) const;
  size_t FirstOnStreamAtOrAfter(int64_t device, int64_t stream,
                                int64_t t) const;
  void ThreadEdges(const KinetoThread& thread, int64_t window_start_ns,
                   int64_t window_end_ns, std::vector<SyncEdge>* edges,
                   int64_t* unresolved);
  void Add(SyncEdge edge, std::vector<SyncEdge>* edges);
  const KinetoEvent* SyncRecord(const KinetoEvent& call) const;
  int64_t RecordTime(const KinetoEvent* sync, int64_t fallback) const;

  const KinetoTrace& trace_;
  const CpuOpNesting& nesting_;
  const GpuLink& link_;
  const std::vector<uint64_t>& event_et_id_;
  std::vector<StreamOps> streams_;
  absl::flat_hash_map<int32_t, size_t> gpu_by_launch_;
  absl::flat_hash_map<int64_t, int32_t> sync_by_corr_;
  absl::flat_hash_map<int64_t, int32_t> runtime_by_corr_;
  absl::flat_hash_set<std::tuple<int, size_t, size_t, uint64_t>> seen_;
};

size_t SyncEdgeBuilder::LastOnStreamBefore(int64_t device, int64_t stream,
                                           int64_t t) const {
  for (const StreamOps& s : streams_) {
    if (s.stream != stream ||
        (device >= 0 && s.device >= 0 && s.device != device))
      continue;
    auto it = std::upper_bound(s.by_time.begin(), s.by_time.end(),
                               std::make_pair(t, static_cast<size_t>(-1)));
    if (it != s.by_time.begin()) return std::prev(it)->second;
  }
  return kNone;
}

size_t SyncEdgeBuilder::FirstOnStreamAtOrAfter(int64_t device, int64_t stream,
                                               int64_t t) const {
  for (const StreamOps& s : streams_) {
    if (s.stream != stream ||
        (device >= 0 && s.device >= 0 && s.device != device))
      continue;
    auto it = std::lower_bound(s.by_time.begin(), s.by_time.end(),
                               std::make_pair(t, size_t{0}));
    if (it != s.by_time.end()) return it->second;
  }
  return kNone;
}

const KinetoEvent* SyncEdgeBuilder::SyncRecord(const KinetoEvent& call) const {
  auto it = sync_by_corr_.find(call.correlation);
  return it == sync_by_corr_.end() ? nullptr : &trace_.events()[it->second];
}

// When the event waited on was recorded: its cudaEventRecord call, else
// `fallback`.
int64_t SyncEdgeBuilder::RecordTime(const KinetoEvent* sync,
                                    int64_t fallback) const {
  if (sync == nullptr || sync->wait_on_record_correlation < 0) return fallback;
  auto it = runtime_by_corr_.find(sync->wait_on_record_correlation);
  return it == runtime_by_corr_.end() ? fallback
                                      : trace_.events()[it->second].ts_ns;
}

void SyncEdgeBuilder::Add(SyncEdge edge, std::vector<SyncEdge>* edges) {
  const auto key =
      std::make_tuple(static_cast<int>(edge.kind), edge.from_gpu_op,
                      edge.to_gpu_op, edge.to_host_et_id);
  if (seen_.insert(key).second) edges->push_back(std::move(edge));
}

void SyncEdgeBuilder::ThreadEdges(const KinetoThread& thread,
                                  int64_t window_start_ns,
                                  int64_t window_end_ns,
                                  std::vector<SyncEdge>* edges,
                                  int64_t* unresolved) {
  const auto& events = trace_.events();
  // GPU ops this thread launched, in launch order; its matched host ops, by
  // start.
  std::vector<std::pair<int64_t, size_t>> launched;
  for (int32_t r : thread.runtime) {
    auto it = gpu_by_launch_.find(r);
    if (it != gpu_by_launch_.end())
      launched.emplace_back(events[r].ts_ns, it->second);
  }
  // next_other[i]: the first launch at or after i on another stream than
  // launch i's (launched.size() when none), so that finding the first launch
  // after a wait on another stream than the recorded one is O(1), not a scan
  // (a long run of launches on one stream made it quadratic).
  std::vector<size_t> next_other(launched.size(), launched.size());
  for (size_t i = launched.size(); i-- > 1;) {
    next_other[i - 1] = link_.gpu_ops[launched[i - 1].second].stream !=
                                link_.gpu_ops[launched[i].second].stream
                            ? i
                            : next_other[i];
  }
  std::vector<std::pair<int64_t, uint64_t>> host;
  for (int32_t e : thread.ops) {
    if (event_et_id_[e] != 0)
      host.emplace_back(events[e].ts_ns, event_et_id_[e]);
  }
  size_t last_launched = kNone;
  size_t last_recorded = kNone;  // last_launched at the latest cudaEventRecord
  for (int32_t r : thread.runtime) {
    const KinetoEvent& call = events[r];
    auto launched_it = gpu_by_launch_.find(r);
    if (launched_it != gpu_by_launch_.end())
      last_launched = launched_it->second;
    if (call.call == RuntimeCall::kEventRecord) last_recorded = last_launched;
    if (call.call == RuntimeCall::kNone || call.call == RuntimeCall::kLaunch ||
        call.call == RuntimeCall::kEventRecord) {
      continue;
    }
    if (call.ts_ns < window_start_ns || call.ts_ns > window_end_ns) continue;
    const KinetoEvent* sync = SyncRecord(call);
    const std::string reason(trace_.name(call.name));
    const int64_t device = sync != nullptr ? sync->device : -1;
    if (call.call == RuntimeCall::kStreamWaitEvent) {
      size_t from = kNone, to = kNone;
      if (sync != nullptr && sync->wait_on_stream >= 0 && sync->stream >= 0) {
        from = LastOnStreamBefore(device, sync->wait_on_stream,
                                  RecordTime(sync, call.ts_ns));
        to = FirstOnStreamAtOrAfter(device, sync->stream, call.ts_ns);
      } else if (last_recorded != kNone) {
        from = last_recorded;
        size_t i = std::lower_bound(launched.begin(), launched.end(),
                                    std::make_pair(call.ts_ns, size_t{0})) -
                   launched.begin();
        if (i < launched.size() && link_.gpu_ops[launched[i].second].stream ==
                                       link_.gpu_ops[from].stream) {
          i = next_other[i];
        }
        if (i < launched.size()) to = launched[i].second;
      }
      if (from == kNone || to == kNone || from == to) {
        ++*unresolved;
        continue;
      }
      Add(SyncEdge{SyncEdge::Kind::kGpuToGpu, from, to, 0, reason}, edges);
      continue;
    }
    // A blocking wait: the host op that starts after it depends on the GPU
    // work.
    const int64_t end_ns = call.ts_ns + call.dur_ns;
    auto host_it = std::lower_bound(host.begin(), host.end(),
                                    std::make_pair(end_ns, uint64_t{0}));
    std::vector<size_t> froms;
    if (call.call == RuntimeCall::kDeviceSynchronize) {
      for (const StreamOps& s : streams_) {
        if (device >= 0 && s.device >= 0 && s.device != device) continue;
        froms.push_back(LastOnStreamBefore(s.device, s.stream, call.ts_ns));
      }
    } else if (call.call == RuntimeCall::kStreamSynchronize) {
      if (sync != nullptr && sync->stream >= 0) {
        froms.push_back(LastOnStreamBefore(device, sync->stream, call.ts_ns));
      } else if (last_launched != kNone) {
        const GpuOp& op = link_.gpu_ops[last_launched];
        froms.push_back(LastOnStreamBefore(op.device, op.stream, call.ts_ns));
      }
    } else {  // kEventSynchronize
      if (sync != nullptr && sync->wait_on_stream >= 0) {
        froms.push_back(LastOnStreamBefore(device, sync->wait_on_stream,
                                           RecordTime(sync, call.ts_ns)));
      } else {
        froms.push_back(last_recorded);
      }
    }
    froms.erase(std::remove(froms.begin(), froms.end(), kNone), froms.end());
    if (froms.empty() || host_it == host.end()) {
      ++*unresolved;
      continue;
    }
    for (size_t from : froms) {
      Add(SyncEdge{SyncEdge::Kind::kGpuToHost, from, 0, host_it->second,
                   reason},
          edges);
    }
  }
}

void SyncEdgeBuilder::Run(int64_t window_start_ns, int64_t window_end_ns,
                          std::vector<SyncEdge>* edges, int64_t* unresolved) {
  for (const KinetoThread& thread : nesting_.threads()) {
    ThreadEdges(thread, window_start_ns, window_end_ns, edges, unresolved);
  }
}

}  // namespace

std::vector<SyncEdge> BuildSyncEdges(
    const KinetoTrace& trace, const CpuOpNesting& nesting, const GpuLink& link,
    const std::vector<uint64_t>& event_et_id, int64_t window_start_ns,
    int64_t window_end_ns, int64_t* unresolved) {
  std::vector<SyncEdge> edges;
  SyncEdgeBuilder builder(trace, nesting, link, event_et_id);
  builder.Run(window_start_ns, window_end_ns, &edges, unresolved);
  return edges;
}

}  // namespace et::kineto
