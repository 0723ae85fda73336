// Issue order, queues and cross-queue waits; see replay_plan.h.
#include "replay/replay_plan.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "replay/op_classifier.h"
#include "step/step_report.h"

namespace et::replay {
namespace {

constexpr int64_t kCommStreamId = -1;

// The model's queue; collectives without a recorded stream get their
// group's comm stream, sends and receives share one.
QueueInfo QueueFor(const NodeModel& model, NodeIndex n, const ReplayOp& op) {
  const Queue& q = model.queue(n);
  switch (q.kind) {
    case QueueKind::kThread:
      return {ReplayQueueKind::kHostThread, q.number};
    case QueueKind::kStream:
      return {ReplayQueueKind::kDeviceStream, q.number};
    case QueueKind::kCommGroup:
      break;
  }
  return {ReplayQueueKind::kDeviceStream, kCommStreamId,
          op.kind == ReplayOpKind::kCollective ? op.comm.group : -1};
}

void FillRecordedIdentity(const NodeModel& model, ReplayPlan* plan) {
  plan->recorded_rank =
      static_cast<int>(std::clamp<int64_t>(model.info().rank, -1, kMaxRanks));
  plan->recorded_world_size = static_cast<int>(
      std::clamp<int64_t>(model.info().world_size, 0, kMaxRanks));
  plan->gpu_queued_gap_ns = model.info().gpu_queued_gap_ns;
}

// Host ops hold the host-time model's time, and its gap before them.
void FillHostTimes(const PlanOptions& options, ReplayPlan* plan) {
  for (ReplayOp& op : plan->ops) {
    if (op.kind != ReplayOpKind::kHostCompute) continue;
    op.host_ns = plan->steps.HostDurationNs(op.node, options.host_time);
    if (options.host_gaps)
      op.gap_before_ns = plan->steps.HostGapNs(op.node, options.host_time);
  }
}

// How far into host op `host` device op `op` may start: a kernel is launched
// part-way through its host op (a synchronous copy's host op even waits for
// it), so waiting for the whole host op would serialise what the recording
// overlapped. The recorded lag is scaled to the time the host op is held.
// -1 (wait for the end) unless both recorded starts are known.
int64_t LaunchLagNs(const ReplayPlan& plan, const ReplayOp& op,
                    const ReplayOp& host) {
  if (plan.queues[op.queue].kind != ReplayQueueKind::kDeviceStream ||
      plan.queues[host.queue].kind != ReplayQueueKind::kHostThread ||
      op.recorded_start_ns < 0 || host.recorded_start_ns < 0) {
    return -1;
  }
  const int64_t held_ns = host.kind == ReplayOpKind::kNone ? 0 : host.host_ns;
  const int64_t lag = std::clamp<int64_t>(
      op.recorded_start_ns - host.recorded_start_ns, 0, host.recorded_ns);
  if (host.recorded_ns <= 0) return std::min(lag, held_ns);
  return static_cast<int64_t>(static_cast<double>(lag) * held_ns /
                              static_cast<double>(host.recorded_ns));
}

// Waits of op i: the latest dependency on each other queue.
void AddWaits(const NodeModel& graph, const std::vector<uint32_t>& op_of_node,
              size_t i, ReplayPlan* plan, std::vector<int64_t>* latest_by_queue,
              std::vector<int>* touched) {
  const ReplayOp& op = plan->ops[i];
  auto consider = [&](NodeIndex dep) {
    const uint32_t d = op_of_node[dep];
    const int q = plan->ops[d].queue;
    if (q == op.queue) return;
    if ((*latest_by_queue)[q] < 0) touched->push_back(q);
    (*latest_by_queue)[q] = std::max<int64_t>((*latest_by_queue)[q], d);
  };
  for (NodeIndex dep : graph.data_deps(op.node)) consider(dep);
  if (!plan->used_data_deps_only) {
    for (NodeIndex dep : graph.ctrl_deps(op.node)) consider(dep);
  }
  std::sort(touched->begin(), touched->end());
  for (int q : *touched) {
    const uint32_t target = static_cast<uint32_t>((*latest_by_queue)[q]);
    plan->wait_targets.push_back(target);
    plan->wait_lags.push_back(LaunchLagNs(*plan, op, plan->ops[target]));
    (*latest_by_queue)[q] = -1;
  }
  touched->clear();
  plan->wait_offsets.push_back(
      static_cast<uint32_t>(plan->wait_targets.size()));
}

// Refuses values that would make the replay hang, wrap or ask MPI for
// nonsense. The replay really waits for every recorded duration, so a
// duration of INT64_MAX ns (292 years) once held et-replay forever.
// One op, or one queue's ops in one iteration, held for more than an hour is
// a damaged trace, not a measurement: the longest real kernels and host ops
// are seconds, and real steps are seconds to minutes.
constexpr int64_t kMaxHeldNs = int64_t{3600} * 1000 * 1000 * 1000;

absl::Status ValidateOp(const ReplayOp& op) {
  // 2^62 ns is 146 years after the epoch; keeps start + duration in range.
  constexpr int64_t kMaxStartNs = int64_t{1} << 62;
  // 1 TiB per rank and collective: well above any GPU's memory.
  constexpr int64_t kMaxCommBytes = int64_t{1} << 40;
  if (op.recorded_ns < 0 || op.recorded_ns > kMaxHeldNs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %d: recorded duration %d ns is outside [0, 1 h]",
                        op.node_id, op.recorded_ns));
  }
  if (op.recorded_start_ns > kMaxStartNs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %d: recorded start %d ns is out of range",
                        op.node_id, op.recorded_start_ns));
  }
  const bool comm = op.kind == ReplayOpKind::kCollective ||
                    op.kind == ReplayOpKind::kSend ||
                    op.kind == ReplayOpKind::kRecv;
  if (!comm) return absl::OkStatus();
  if (op.comm.bytes < 0 || op.comm.bytes > kMaxCommBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %d: comm_size %d is outside [0, 2^40] bytes",
                        op.node_id, op.comm.bytes));
  }
  if (op.comm.peer < -1 || op.comm.peer >= kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "node %d: comm peer %d is not a rank", op.node_id, op.comm.peer));
  }
  if (op.comm.root < 0 || op.comm.root >= kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "node %d: comm root %d is not a rank", op.node_id, op.comm.root));
  }
  if (op.kind == ReplayOpKind::kSend && op.comm.peer < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %d: send without comm_dst", op.node_id));
  }
  if (op.kind == ReplayOpKind::kRecv && op.comm.peer < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %d: recv without comm_src", op.node_id));
  }
  return absl::OkStatus();
}

// When each node was issued in the recording: the replay issues in this order
// (Kahn's algorithm, ties by it), so that a real-time backend launches a kernel
// when the recording did rather than after every host op that could go first.
// A host op: its recorded start. A device op: when its launcher reached it, its
// recorded start but no later than the end of its latest host dependency (a
// queued kernel was launched long before it ran). No recorded start: right
// after its latest dependency.
std::vector<int64_t> IssueKeys(const NodeModel& graph) {
  std::vector<int64_t> key(graph.size(), 0);
  for (NodeIndex n : graph.order()) {
    int64_t after_deps = 0, host_end = -1;
    auto consider = [&](NodeIndex d) {
      after_deps = std::max(after_deps, key[d]);
      if (graph.on_host(d) && graph.start_ns(d) >= 0)
        host_end = std::max(host_end, graph.start_ns(d) + graph.duration_ns(d));
    };
    for (NodeIndex d : graph.data_deps(n)) consider(d);
    if (graph.followed_deps() != DepSelection::kDataOnly) {
      for (NodeIndex d : graph.ctrl_deps(n)) consider(d);
    }
    int64_t k = graph.start_ns(n);
    if (k < 0) {
      k = after_deps;
    } else if (!graph.on_host(n) && host_end >= 0) {
      k = std::min(k, host_end);
    }
    key[n] = k;
  }
  return key;
}

}  // namespace

std::string TruthWithheldForDevice(const std::string& recorded_gpu,
                                   const std::string& replay_gpu) {
  if (recorded_gpu.empty() || replay_gpu.empty() || recorded_gpu == replay_gpu)
    return "";
  return absl::StrFormat(
      "no error reported: the trace's measured step ran on %s, not the %s "
      "this replay ran on, so it is no truth for this replay",
      recorded_gpu, replay_gpu);
}

MeasuredStep ReplayPlan::Truth() const {
  if (truth_withheld.empty()) return steps.Measured(host_time);
  MeasuredStep none;
  none.withheld = truth_withheld;
  return none;
}

int ReplayPlan::RequiredRanks() const {
  int needed = std::max(recorded_world_size, 1);
  for (const ProcessGroup& g : groups) {
    for (int64_t r : g.ranks)
      needed = std::max<int>(needed, static_cast<int>(r) + 1);
  }
  for (const ReplayOp& op : ops) {
    if (op.kind == ReplayOpKind::kSend || op.kind == ReplayOpKind::kRecv) {
      needed = std::max(needed, op.comm.peer + 1);
    } else if (op.kind == ReplayOpKind::kCollective) {
      needed = std::max(needed, op.comm.root + 1);
    }
  }
  return needed;
}

absl::StatusOr<ReplayPlan> BuildReplayPlan(const NodeModel& graph,
                                           const PlanOptions& options) {
  ReplayPlan plan;
  // The host costs stored in the .et (et-convert --host-profile), as et-sim.
  plan.steps = StepModel::Build(graph, StoredHostCostsOr(graph, {}));
  plan.host_time = options.host_time;
  plan.groups = graph.groups();
  RETURN_IF_ERROR(graph.executable());
  // Traces of the 2023 converter have cyclic ctrl deps whose consumers
  // followed data deps only; the model says so and orders by data deps.
  plan.used_data_deps_only = graph.followed_deps() != DepSelection::kAll;

  ASSIGN_OR_RETURN(
      const std::vector<NodeIndex> order,
      graph.deps().TopologicalOrder(graph.followed_deps(), IssueKeys(graph)));
  absl::flat_hash_map<std::tuple<int, int64_t, int>, int> queue_index;
  std::vector<uint32_t> op_of_node(graph.size(), 0);
  std::vector<int64_t> held_by_queue;
  plan.ops.reserve(order.size());
  for (NodeIndex n : order) {
    ReplayOp op = ClassifyNode(graph, n);
    RETURN_IF_ERROR(ValidateOp(op));
    if ((op.kind == ReplayOpKind::kHostCompute && !options.host_ops) ||
        !plan.steps.Runs(n, options.host_time)) {
      op.kind = ReplayOpKind::kNone;
    }
    const QueueInfo q = QueueFor(graph, n, op);
    auto [it, inserted] = queue_index.emplace(
        std::make_tuple(static_cast<int>(q.kind), q.recorded_id, q.comm_group),
        static_cast<int>(plan.queues.size()));
    if (inserted) plan.queues.push_back(q);
    op.queue = it->second;
    if (op.kind == ReplayOpKind::kKernel || op.kind == ReplayOpKind::kGemm) {
      // The cap is per run too: the kernels of one queue are held for their
      // recorded times one after another, so those add up (60 kernels of 58
      // minutes each passed the per-op cap and held et-replay for hours).
      if (held_by_queue.size() <= static_cast<size_t>(op.queue))
        held_by_queue.resize(op.queue + 1, 0);
      held_by_queue[op.queue] += op.recorded_ns;  // each <= 1 h: no overflow
      if (held_by_queue[op.queue] > kMaxHeldNs) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "node %d: its queue's recorded durations add up to over 1 h in "
            "one iteration (the limit on a replay)",
            op.node_id));
      }
    }
    op.name_id = plan.names.Intern(graph.name(n));
    op_of_node[n] = static_cast<uint32_t>(plan.ops.size());
    plan.ops.push_back(op);
  }
  plan.unknown_group_ops = graph.counts().unknown_groups;
  plan.notes = graph.notes();
  if (options.host_time == HostTimeMode::kUnprofiled) {
    for (std::string& note : UnprofiledRecordingNotes(
             plan.steps, plan.steps.Measured(options.host_time).us))
      plan.notes.push_back(std::move(note));
  }
  FillHostTimes(options, &plan);

  plan.wait_offsets.reserve(plan.ops.size() + 1);
  plan.wait_offsets.push_back(0);
  std::vector<int64_t> latest_by_queue(plan.queues.size(), -1);
  std::vector<int> touched;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    AddWaits(graph, op_of_node, i, &plan, &latest_by_queue, &touched);
  }
  FillRecordedIdentity(graph, &plan);
  return plan;
}

}  // namespace et::replay
