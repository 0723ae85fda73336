// nsys tables -> Kineto traces per GPU and process; see nsys_graph_builder.h.
#include "converter/nsys/nsys_graph_builder.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace et::nsys {
namespace {

using kineto::EventKind;
using kineto::KinetoEvent;
using kineto::KinetoTrace;

bool IsNcclKernel(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name.substr(0, 4));
  return lower == "nccl" || lower == "rccl";
}

// Whether a thread's NVTX ranges cover an interval: ranges by start with the
// running maximum of their ends.
class RangeCover {
 public:
  void Add(int64_t start, int64_t end) { ranges_.emplace_back(start, end); }
  void Finish() {
    std::sort(ranges_.begin(), ranges_.end());
    int64_t best = INT64_MIN;
    for (auto& [start, end] : ranges_) {
      best = std::max(best, end);
      end = best;
    }
  }
  bool Covers(int64_t start, int64_t end) const {
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(),
                               std::make_pair(start, INT64_MAX));
    return it != ranges_.begin() && std::prev(it)->second >= end;
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> ranges_;
};

class GraphBuilder {
 public:
  GraphBuilder(const NsysTables& tables, int64_t pid, int64_t device)
      : tables_(tables), pid_(pid), device_(device) {}

  NsysGraph Build(int rank) {
    auto trace = std::make_shared<KinetoTrace>();
    trace_ = trace.get();
    trace_->set_rank(rank);
    trace_->set_process_id(pid_);
    for (const auto& [id, name] : tables_.gpu_names) {
      if (id == device_) trace_->set_device_name(name);
    }
    trace_->ReserveEvents(CountEvents());
    AddHostRanges();
    AddRuntimeCalls();
    AddGpuActivity();
    AddStreamWaits();
    NsysGraph graph;
    graph.pid = pid_;
    graph.device = device_;
    graph.rank = rank;
    graph.trace = std::move(trace);
    graph.stats = stats_;
    return graph;
  }

 private:
  // At most the events Build adds: each range, each runtime call twice (a
  // lone call is also a host op), each GPU activity and stream wait.
  size_t CountEvents() const {
    size_t n = 0;
    for (const NvtxRange& r : tables_.nvtx) n += r.pid == pid_;
    for (const RuntimeCallRow& c : tables_.runtime) n += 2 * (c.pid == pid_);
    for (const GpuActivity& a : tables_.gpu)
      n += a.pid == pid_ && a.device == device_;
    for (const StreamWait& w : tables_.waits)
      n += w.pid == pid_ && w.device == device_;
    return n;
  }

  uint32_t Name(uint32_t id) { return trace_->Intern(tables_.strings.Get(id)); }

  KinetoEvent HostEvent(int64_t tid, int64_t start_ns, int64_t end_ns,
                        uint32_t name, EventKind kind) {
    KinetoEvent e;
    e.pid = pid_;
    e.tid = tid;
    e.ts_ns = start_ns;
    e.dur_ns = std::max<int64_t>(end_ns - start_ns, 0);
    e.name = Name(name);
    e.kind = kind;
    return e;
  }

  void AddHostRanges() {
    for (const NvtxRange& n : tables_.nvtx) {
      if (n.pid != pid_) continue;
      const bool step =
          absl::StartsWith(tables_.strings.Get(n.name), "ProfilerStep#");
      trace_->AddEvent(
          HostEvent(n.tid, n.start_ns, n.end_ns, n.name,
                    step ? EventKind::kUserAnnotation : EventKind::kCpuOp));
      covers_[n.tid].Add(n.start_ns, n.end_ns);
      ++stats_.nvtx_ranges;
    }
    for (auto& [tid, cover] : covers_) cover.Finish();
  }

  void AddRuntimeCalls() {
    for (const RuntimeCallRow& c : tables_.runtime) {
      if (c.pid != pid_) continue;
      auto cover = covers_.find(c.tid);
      if (cover == covers_.end() ||
          !cover->second.Covers(c.start_ns, c.end_ns)) {
        trace_->AddEvent(
            HostEvent(c.tid, c.start_ns, c.end_ns, c.name, EventKind::kCpuOp));
        ++stats_.lone_runtime_ops;
      }
      KinetoEvent e =
          HostEvent(c.tid, c.start_ns, c.end_ns, c.name, EventKind::kRuntime);
      e.correlation = c.correlation;
      e.call = kineto::ClassifyRuntimeCall(trace_->name(e.name));
      trace_->AddEvent(e);
      ++stats_.runtime_calls;
    }
  }

  void AddGpuActivity() {
    for (const GpuActivity& a : tables_.gpu) {
      if (a.pid != pid_ || a.device != device_) continue;
      KinetoEvent e;
      e.pid = a.device;  // as Kineto writes GPU events: pid device, tid stream
      e.tid = a.stream;
      e.device = a.device;
      e.stream = a.stream;
      e.ts_ns = a.start_ns;
      e.dur_ns = a.end_ns - a.start_ns;
      e.correlation = a.correlation;
      e.name = Name(a.name);
      switch (a.kind) {
        case GpuKind::kKernel:
          e.kind = EventKind::kKernel;
          e.dims = trace_->AddDims({a.grid, a.block});
          ++stats_.kernels;
          if (IsNcclKernel(trace_->name(e.name))) {
            ++stats_.nccl_kernels;
            // nsys stores NCCL's message size only in its NVTX payload
            // (binaryData + NVTX_PAYLOAD_SCHEMAS), which no export read here
            // carries for the ranges of a kernel.
            ++stats_.nccl_size_unknown;
          }
          break;
        case GpuKind::kMemcpy:
          e.kind = EventKind::kMemcpy;
          e.bytes = a.bytes;
          ++stats_.memcpys;
          break;
        case GpuKind::kMemset:
          e.kind = EventKind::kMemset;
          e.bytes = a.bytes;
          ++stats_.memsets;
          break;
      }
      trace_->AddEvent(e);
    }
  }

  void AddStreamWaits() {
    const uint32_t name = trace_->Intern("Stream Wait Event");
    for (const StreamWait& w : tables_.waits) {
      if (w.pid != pid_ || w.device != device_) continue;
      KinetoEvent e;
      e.pid = w.device;
      e.tid = w.stream;
      e.device = w.device;
      e.stream = w.stream;
      e.ts_ns = w.start_ns;
      e.dur_ns = std::max<int64_t>(w.end_ns - w.start_ns, 0);
      e.correlation = w.correlation;
      e.wait_on_stream = w.record_stream;
      e.wait_on_record_correlation = w.record_correlation;
      e.name = name;
      e.kind = EventKind::kSync;
      trace_->AddEvent(e);
      ++stats_.stream_waits;
    }
  }

  const NsysTables& tables_;
  const int64_t pid_;
  const int64_t device_;
  KinetoTrace* trace_ = nullptr;
  absl::flat_hash_map<int64_t, RangeCover> covers_;  // by tid
  NsysGraphStats stats_;
};

}  // namespace

std::vector<NsysGraphKey> ListNsysGraphs(const NsysTables& tables) {
  absl::btree_set<std::pair<int64_t, int64_t>> keys;  // (device, pid)
  for (const GpuActivity& a : tables.gpu) keys.insert({a.device, a.pid});
  std::vector<NsysGraphKey> graphs;
  graphs.reserve(keys.size());
  for (const auto& [device, pid] : keys) {
    graphs.push_back({device, pid, static_cast<int>(graphs.size())});
  }
  return graphs;
}

NsysGraph BuildNsysGraph(const NsysTables& tables, const NsysGraphKey& key) {
  return GraphBuilder(tables, key.pid, key.device).Build(key.rank);
}

}  // namespace et::nsys
