// Graph -> RankProgram: classification of nodes, resource assignment,
// dependency CSR.
#include "simulator/engine/rank_program.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "scaleout/peer_remap.h"
#include "simulator/platform/device_what_if.h"
#include "simulator/platform/platform.h"
#include "step/light_profile_check.h"
#include "step/step_report.h"

namespace et::sim {
namespace {

// How far the trace-alone estimate misses the CPU corpus
// (tests/fidelity/cpu_corpus_test.cc asserts it).
constexpr char kSpansRuleCorpusMisses[] = "0.5-47%, median 10.8%";

// How far the light profiler's cost per op, which the model takes out of
// every op of a light profile, moves the step: 1 us per op is its spread
// between runs on a shared host (docs/benchmarks.md, "GPU models kept aside").
std::string LightProfilerSensitivityNote(const HostTimeModel& h,
                                         std::optional<double> truth_us) {
  const double ms = h.light_ops_per_step * 1e-3;
  std::string share;
  if (truth_us && *truth_us > 0)
    share = absl::StrFormat(" (%.0f%% of the measured step)",
                            100 * ms * 1e3 / *truth_us);
  return absl::StrFormat(
      "the light profile's step (its lower median) took %.3f ms for %.0f ops; "
      "each 1 us of the "
      "light profiler's cost per op taken out (%.2f us now, %s) moves the "
      "host's time by %.3f ms a step%s, the step as much where the host "
      "bounds it: on a shared host that cost moves by 1-3 us between runs "
      "(docs/benchmarks.md, \"GPU models kept aside\")",
      h.light_step_ns / 1e6, h.light_ops_per_step,
      h.light_profiler_ns_per_op / 1e3, h.light_profiler_source, ms, share);
}

// The trace-alone estimate of a CPU-only trace's profiler cost, what it rests
// on, and how much an error in it moves the prediction: the profiler's share
// of the recorded step multiplies it (docs/step-model.md).
std::string ProfilerCostFromSpansNote(const StepModel& steps) {
  const double per_op_ns = static_cast<double>(steps.profiler_ns_per_op());
  const double profiler_ms = steps.host_ops_per_step() * per_op_ns / 1e6;
  std::vector<double> profiled = steps.profiled_step_us();
  std::string sensitivity;
  if (!profiled.empty()) {
    std::sort(profiled.begin(), profiled.end());
    const double recorded_ms = profiled[(profiled.size() - 1) / 2] / 1e3;
    const double left_ms = recorded_ms - profiler_ms;
    if (recorded_ms > 0 && left_ms > 0) {
      sensitivity = absl::StrFormat(
          "; that is %.0f%% of the recorded step (%.0f ops a step), so each "
          "1%% off in the cost per op moves the prediction by %.3f ms a step "
          "(%.1f%% of it)",
          100 * profiler_ms / recorded_ms, steps.host_ops_per_step(),
          profiler_ms / 100, profiler_ms / left_ms);
    }
  }
  // A light profile whose step is not below the profiled one teaches no
  // cost (StepModel::LearnFullProfilerCost): say why it was not used.
  std::string light;
  if (steps.model().light_step_ns > 0) {
    light = absl::StrFormat(
        "; its light profile's step, %.3f ms, is not below the profiled "
        "one, so it teaches no cost",
        steps.model().light_step_ns / 1e6);
  }
  return absl::StrFormat(
      "host cost (estimated from the trace%s): a CPU-only trace; each op and "
      "the gap before it less the profiler's %.2f us: %.2f us inside the "
      "span of an op that computes nothing (median of the views and empty "
      "ops that nest none) and %.2f us between two ops nested in one%s; "
      "uncertain (%s on the CPU corpus): a light profile (record_trace.py "
      "--kineto-light-out, et-convert --host-profile) learns the cost from "
      "the recording",
      light, per_op_ns / 1e3, steps.view_op_span_ns() / 1e3,
      steps.nested_op_gap_ns() / 1e3, sensitivity, kSpansRuleCorpusMisses);
}

// Where a light profile sets the full profiler's cost, the trace's own spans
// measure it too: print both, and say what a wide gap between them means
// (docs/step-model.md, "Without a light profile"). Empty without the spans.
std::string SpansCheckNote(const StepModel& steps) {
  const int64_t spans_ns = steps.spans_ns_per_op();
  const int64_t light_ns = steps.full_profiler_ns_per_op();
  if (spans_ns <= 0 || light_ns <= 0) return "";
  const double ratio =
      static_cast<double>(light_ns) / static_cast<double>(spans_ns);
  std::string note = absl::StrFormat(
      "the trace's own spans put the full profiler's cost at %.2f us an op "
      "(%.2f inside a view's span, %.2f between two nested ops), the light "
      "profile's two steps at %.2f us (%.2fx)",
      spans_ns / 1e3, steps.view_op_span_ns() / 1e3,
      steps.nested_op_gap_ns() / 1e3, light_ns / 1e3, ratio);
  if (ratio > 1.25 || ratio < 0.8) {
    absl::StrAppend(
        &note,
        ": the program's own work ran at another speed in the profiled run "
        "than in the light one (the full profiler's cache pressure, or a "
        "busier machine during one of them); the prediction follows the "
        "light step's");
  }
  return note;
}

// The simulator's view of the model's kinds: every kind that takes time on
// its queue computes (memory nodes move their bytes, node-model.md).
SimOpKind Classify(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCollective:
      return SimOpKind::kCollective;
    case NodeKind::kSend:
      return SimOpKind::kSend;
    case NodeKind::kRecv:
      return SimOpKind::kRecv;
    case NodeKind::kHostOp:
    case NodeKind::kKernel:
    case NodeKind::kGemm:
    case NodeKind::kMemory:
      return SimOpKind::kCompute;
    case NodeKind::kMetadata:
      return SimOpKind::kNoop;
  }
  return SimOpKind::kNoop;
}

// Resource key: (class, id). Class 0 = CPU thread, 1 = GPU stream, 2 = comm
// channel (group index in the program's groups).
std::pair<int, int64_t> ResourceKey(const NodeModel& model, NodeIndex i,
                                    int32_t group, SchedulingMode mode) {
  const Queue& q = model.queue(i);
  if (mode == SchedulingMode::kAstraCompat) {
    // ASTRA-sim (518bd51, HardwareResource::is_available) issues a receive
    // while another communication op is in flight: receives have a slot of
    // their own here.
    if (model.kind(i) == NodeKind::kRecv) return {3, 0};
    if (IsCommunication(model.kind(i))) return {2, 0};
    return {q.kind == QueueKind::kThread ? 0 : 1, 0};
  }
  switch (q.kind) {
    case QueueKind::kThread:
      return {0, q.number};
    case QueueKind::kStream:
      return {1, q.number};
    case QueueKind::kCommGroup:
      break;
  }
  // A point-to-point op runs on its own channel, one per group, peer and
  // direction: a pipeline stage posts a send and a receive together
  // (Megatron's batched isend/irecv; gloo's send returns only once the peer
  // has received), so one queue per group would hold the receive behind a send
  // that waits for the peer's own receive, a deadlock the real run does not
  // have. Encoded below zero: -1 - ((group * 2^20 + peer) * 2 + is_recv).
  const CommSpec* comm = model.comm(i);
  if ((model.kind(i) == NodeKind::kSend || model.kind(i) == NodeKind::kRecv) &&
      comm != nullptr && comm->peer >= 0) {
    const int64_t channel =
        (static_cast<int64_t>(group) * (int64_t{1} << 20) + comm->peer) * 2 +
        (model.kind(i) == NodeKind::kRecv ? 1 : 0);
    return {2, -1 - channel};
  }
  return {2, group};
}

std::string ResourceName(std::pair<int, int64_t> key,
                         const ProgramGroups& groups) {
  switch (key.first) {
    case 0:
      return absl::StrCat("cpu tid ", key.second);
    case 1:
      return absl::StrCat("gpu stream ", key.second);
    case 3:
      return "comm receives";
    default:
      if (key.second < 0) {  // a point-to-point channel (ResourceKey)
        const int64_t channel = -1 - key.second;
        const int64_t group = channel / 2 / (int64_t{1} << 20);
        return absl::StrCat("comm ",
                            group < static_cast<int64_t>(groups.groups.size())
                                ? groups.groups[group].name
                                : std::to_string(group),
                            channel % 2 ? " recv from " : " send to ",
                            (channel / 2) % (int64_t{1} << 20));
      }
      return absl::StrCat(
          "comm ", key.second < static_cast<int64_t>(groups.groups.size())
                       ? groups.groups[key.second].name
                       : std::to_string(key.second));
  }
}

// The what-if for a trace recorded on one GPU and predicted for another
// (--device), or nullopt (with a note when the recording GPU is unknown).
std::optional<DeviceWhatIf> WhatIfFor(const NodeModel& graph,
                                      const SimOptions& options,
                                      std::vector<std::string>* notes) {
  if (options.device.empty()) return std::nullopt;
  bool any_gpu_op = false;
  for (NodeIndex i = 0; i < graph.size() && !any_gpu_op; ++i)
    any_gpu_op =
        graph.type(i) == ChakraProtoMsg::COMP_NODE && !graph.on_host(i);
  if (!any_gpu_op) {
    // Converting with --kineto would not help: there is no GPU work to scale.
    notes->push_back(absl::StrFormat(
        "--device %s: %s: nothing to scale; only ops timed by the roofline "
        "model use the preset",
        options.device,
        graph.info().gpu_job
            ? "the trace records no GPU ops (a GPU job's ET converted "
              "without its Kineto trace)"
            : "the trace ran on a CPU only (no GPU ops)"));
    return std::nullopt;
  }
  const std::string presets = options.device_file.empty()
                                  ? DefaultDevicePresetsPath()
                                  : options.device_file;
  const std::string& recorded_name = graph.info().device_name;
  absl::StatusOr<DeviceProfile> recorded =
      DeviceProfileForName(presets, recorded_name);
  absl::StatusOr<DeviceProfile> target =
      LoadDeviceProfile(presets, options.device);
  if (!recorded.ok() || !target.ok()) {
    notes->push_back(absl::StrFormat(
        "--device %s: the recording GPU is %s; GPU ops keep their recorded "
        "times",
        options.device,
        recorded_name.empty()
            ? "unknown (convert with --kineto)"
            : absl::StrCat("'", recorded_name, "', which has no preset")));
    return std::nullopt;
  }
  if (recorded->name == target->name) return std::nullopt;
  return DeviceWhatIf(*recorded, *target);
}

// An edge from a host-side collective (no GPU stream) to a host op that
// follows it in issue order (a ctrl dep) and neither waits for it nor is
// otherwise ordered after its completion. Never under --schedule astra:
// ASTRA-sim releases a node's children when it finishes (Workload::call ->
// finish_node), whatever the edge.
bool ReleasedOnIssue(const NodeModel& graph, const RankProgram& p,
                     SchedulingMode mode, NodeIndex dep, NodeIndex user) {
  if (mode == SchedulingMode::kAstraCompat) return false;
  const SimOpKind k = p.kind[dep];
  if (k != SimOpKind::kCollective && k != SimOpKind::kSend &&
      k != SimOpKind::kRecv)
    return false;
  if (p.resource_names[p.resource[dep]].rfind("gpu", 0) == 0) return false;
  if (!p.steps.is_host(user) || p.steps.is_wait(user)) return false;
  const auto ctrl = graph.ctrl_deps(user);
  return std::find(ctrl.begin(), ctrl.end(), dep) != ctrl.end();
}

// Users CSR over the followed deps, split by when they are released.
void BuildUsers(const NodeModel& graph, DepSelection deps, SchedulingMode mode,
                RankProgram* p) {
  const size_t n = graph.size();
  auto for_each_dep = [&](NodeIndex i, auto&& fn) {
    for (NodeIndex d : graph.data_deps(i)) fn(d);
    if (deps == DepSelection::kAll) {
      for (NodeIndex d : graph.ctrl_deps(i)) fn(d);
    }
  };
  p->user_offsets.assign(n + 1, 0);
  p->issue_user_offsets.assign(n + 1, 0);
  for (NodeIndex i = 0; i < n; ++i) {
    for_each_dep(i, [&](NodeIndex d) {
      ++p->dep_count[i];
      ++(ReleasedOnIssue(graph, *p, mode, d, i) ? p->issue_user_offsets
                                                : p->user_offsets)[d + 1];
    });
  }
  for (size_t i = 0; i < n; ++i) {
    p->user_offsets[i + 1] += p->user_offsets[i];
    p->issue_user_offsets[i + 1] += p->issue_user_offsets[i];
  }
  p->users.resize(p->user_offsets[n]);
  p->issue_users.resize(p->issue_user_offsets[n]);
  std::vector<uint32_t> fill(p->user_offsets.begin(),
                             p->user_offsets.end() - 1);
  std::vector<uint32_t> issue_fill(p->issue_user_offsets.begin(),
                                   p->issue_user_offsets.end() - 1);
  for (NodeIndex i = 0; i < n; ++i) {
    for_each_dep(i, [&](NodeIndex d) {
      if (ReleasedOnIssue(graph, *p, mode, d, i)) {
        p->issue_users[issue_fill[d]++] = i;
      } else {
        p->users[fill[d]++] = i;
      }
    });
  }
}

}  // namespace

int32_t ProgramGroups::Find(const std::string& name) const {
  for (size_t i = 1; i < groups.size(); ++i) {
    if (groups[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

namespace {

// Groups: [0] all ranks, then the trace's (or the --groups table's).
void FillGroups(const NodeModel& graph, const SimOptions& options,
                RankProgram* p) {
  p->groups.groups.push_back(ProcessGroup{});
  p->groups.groups[0].name = kAllRanksGroupName;
  if (options.scaled_groups) {
    // --layout: rank 0's instance of every group on the job, sizes and
    // members as placed (scaleout/group_remap.h).
    p->groups.groups[0] = options.scaled_groups->all_ranks;
    for (const ProcessGroup& g : options.scaled_groups->groups)
      p->groups.groups.push_back(g);
    p->recorded_world_size = 0;
    return;
  }
  std::vector<ProcessGroup> groups = options.groups_override.empty()
                                         ? graph.groups()
                                         : options.groups_override;
  for (ProcessGroup& g : groups) p->groups.groups.push_back(std::move(g));
  // A group file describes the simulated world: its ranks are taken as they
  // are, not scaled from the recorded world (0 turns that off).
  p->recorded_world_size =
      options.groups_override.empty() ? graph.info().world_size : 0;
}

// How compute nodes get their time, decided once per program.
struct ComputeTiming {
  const ComputeCostModel* compute = nullptr;
  // Host ops take the step model's time when the host dispatches GPU work or
  // durations are the recorded ones; a CPU-only trace under roofline or
  // calibration keeps the compute model's.
  bool host_time_model = false;
  std::optional<DeviceWhatIf> what_if;
  WhatIfStats what_if_counts;
};

// What ASTRA-sim (518bd51, Workload::issue_replay) gives a compute node when
// its roofline is off: the node's `duration_micros` field times 1000, 1 ns
// when it is 0; no host model, no gap. The field, not duration_ns rounded:
// et-convert rounds it from the recorded time, but a writer that truncates
// (the pipeline's stage programs) or scales it on its own (tp, ep) can leave
// it a microsecond off duration_ns, and ASTRA-sim reads only the field.
int64_t AstraReplayNs(int64_t duration_micros) {
  return duration_micros > 0 ? duration_micros * 1000 : 1;
}

// ASTRA-sim (518bd51, Workload::issue_coll_comm) replays a broadcast for its
// recorded duration on the rank's collective slot ("TODO: implement
// broadcast"), without its peers: the astra schedule does the same.
bool AstraReplaysCollective(const NodeModel& graph, NodeIndex i,
                            const RankProgram& p) {
  return p.astra_replay && p.kind[i] == SimOpKind::kCollective &&
         graph.comm(i) != nullptr &&
         graph.comm(i)->type == ChakraProtoMsg::BROADCAST;
}

void CompileCompute(const NodeModel& graph, NodeIndex i, ComputeTiming* timing,
                    RankProgram* p) {
  const int64_t recorded = p->steps.recorded_duration_ns(i);
  if (p->astra_replay) {  // ASTRA-sim's replay, no gap
    p->compute_ns[i] = AstraReplayNs(graph.duration_micros(i));
  } else if (p->steps.is_host(i) && timing->host_time_model && recorded > 0) {
    p->compute_ns[i] = p->steps.HostDurationNs(i, p->host_time);
    p->gap_ns[i] = p->steps.HostGapNs(i, p->host_time);
    p->collective_wait_ns[i] = p->steps.HostCollectiveWaitNs(i, p->host_time);
  } else if (timing->what_if && recorded > 0) {
    p->compute_ns[i] =
        timing->what_if->ScaleNs(recorded, p->steps.flops(i), p->steps.bytes(i),
                                 &timing->what_if_counts);
  } else {
    p->compute_ns[i] = timing->compute->DurationNs(graph, i);
  }
}

void CompileComm(const NodeModel& graph, NodeIndex i, const CommSpec& c,
                 const SimOptions& options, RankProgram* p) {
  p->comm_type[i] = c.type;
  p->comm_bytes[i] = static_cast<uint64_t>(c.bytes);
  if (c.pg_name != 0) {
    const int32_t g = p->groups.Find(std::string(graph.string(c.pg_name)));
    p->group[i] = g < 0 ? 0 : g;
  }
  if (p->kind[i] == SimOpKind::kSend || p->kind[i] == SimOpKind::kRecv) {
    p->peer[i] = c.peer;
    // --layout: the program is rank 0's of the job; its peer is the recorded
    // one moved to rank 0's replica (checked by Simulation::ApplyLayout).
    if (const auto& scaled = options.scaled_groups; scaled && c.peer >= 0) {
      absl::StatusOr<int64_t> moved = scaleout::MovePeer(
          scaled->recorded, graph.info().rank, c.peer, scaled->layout, 0);
      if (moved.ok()) p->peer[i] = static_cast<int32_t>(*moved);
    }
  }
  // A host collective's node times the call that queued it; its run is the
  // backend's work record, when one was recorded.
  p->recorded_ns[i] = c.on_host ? c.work_ns : graph.duration_ns(i);
}

// Kind, time or communication, and resource of every node.
void CompileNodes(const NodeModel& graph, const SimOptions& options,
                  ComputeTiming* timing, RankProgram* p) {
  const size_t n = graph.size();
  p->kind.resize(n);
  p->resource.resize(n);
  p->compute_ns.assign(n, 0);
  p->gap_ns.assign(n, 0);
  p->collective_wait_ns.assign(n, 0);
  p->recorded_ns.assign(n, 0);
  p->comm_type.assign(n, ChakraProtoMsg::ALL_REDUCE);
  p->comm_bytes.assign(n, 0);
  p->group.assign(n, 0);
  p->peer.assign(n, -1);
  p->dep_count.assign(n, 0);
  std::map<std::pair<int, int64_t>, uint32_t> resources;
  for (NodeIndex i = 0; i < n; ++i) {
    // ASTRA-sim issues every node, the recorded steps or not.
    p->kind[i] = p->astra_replay || p->steps.Runs(i, p->host_time)
                     ? Classify(graph.kind(i))
                     : SimOpKind::kNoop;
    if (AstraReplaysCollective(graph, i, *p)) p->kind[i] = SimOpKind::kCompute;
    if (p->kind[i] == SimOpKind::kCompute) {
      CompileCompute(graph, i, timing, p);
    } else if (p->kind[i] != SimOpKind::kNoop && graph.comm(i) != nullptr) {
      CompileComm(graph, i, *graph.comm(i), options, p);
    }
    const auto key = ResourceKey(graph, i, p->group[i], options.scheduling);
    auto [it, inserted] =
        resources.emplace(key, static_cast<uint32_t>(resources.size()));
    if (inserted) {
      p->resource_names.push_back(ResourceName(key, p->groups));
      p->resource_is_compute.push_back(key.first < 2);
      p->resource_is_host.push_back(key.first == 0);
    }
    p->resource[i] = it->second;
    if (options.scheduling == SchedulingMode::kAstraCompat) {
      if (key.first == 2) p->astra_comm_resource = it->second;
      if (key.first == 3) p->astra_recv_resource = it->second;
    }
  }
}

// What the recorded run was when the prediction is for another job ("the
// recorded tp=8 (8 ranks), not tp=8,dp=64"), else "".
std::string OtherJob(const NodeModel& graph, const SimOptions& options) {
  if (const auto& scaled = options.scaled_groups) {
    if (scaled->layout == scaled->recorded) return "";
    return absl::StrFormat(
        "the recorded %s (%s), not %s (%d ranks)", scaled->recorded.ToString(),
        scaled->recorded.world() == 1
            ? "1 rank"
            : absl::StrCat(scaled->recorded.world(), " ranks"),
        scaled->layout.ToString(), scaled->layout.world());
  }
  // Per-rank files (world_size 0 here) simulate the world they record; a
  // graph written for another job says which world its truth is of.
  const int64_t recorded = graph.info().measured_world_size;
  const int64_t simulated =
      options.world_size > 0 ? options.world_size : graph.info().world_size;
  if (simulated <= 1 && recorded <= 1) return "";
  if (simulated == 0 || simulated == recorded) return "";
  return recorded > 0
             ? absl::StrFormat("%d %s, not the %d simulated", recorded,
                               recorded == 1 ? "rank" : "ranks", simulated)
             : absl::StrFormat(
                   "a run whose world the trace does not record, not the %d "
                   "ranks simulated",
                   simulated);
}

// True when the graph has compute nodes and none carries a recorded duration.
bool NoComputeTimed(const NodeModel& graph) {
  bool compute = false;
  for (NodeIndex i = 0; i < graph.size(); ++i) {
    if (graph.type(i) != ChakraProtoMsg::COMP_NODE) continue;
    if (graph.duration_ns(i) > 0) return false;
    compute = true;
  }
  return compute;
}

// What machine the prediction is for when it is not the one the trace's
// measured step ran on ("an H100 (the roofline model), not the CPU the trace
// ran on"), else "". The recorded times kept as they are, or a roofline of the
// recorded GPU, predict the recorded machine.
std::string OtherMachine(const NodeModel& graph, const SimOptions& options,
                         const ComputeTiming& timing, const RankProgram& p) {
  if (timing.what_if) {
    return absl::StrFormat("%s (--device), not the %s the trace ran on",
                           timing.what_if->target().name,
                           timing.what_if->recorded().name);
  }
  // Recorded compute with no compute node timed (an ET converted without its
  // Kineto trace) is the roofline for every node.
  if (options.compute_model != ComputeModel::kRoofline &&
      !(options.compute_model == ComputeModel::kRecorded &&
        NoComputeTimed(graph)))
    return "";
  const std::string& target = timing.compute->device().name;
  if (!p.steps.has_gpu_ops()) {
    return absl::StrFormat(
        "%s (the roofline model), not the CPU the trace ran on", target);
  }
  const std::string presets = options.device_file.empty()
                                  ? DefaultDevicePresetsPath()
                                  : options.device_file;
  absl::StatusOr<DeviceProfile> recorded =
      DeviceProfileForName(presets, graph.info().device_name);
  if (recorded.ok() && recorded->name == target) return "";
  return absl::StrFormat(
      "%s (the roofline model), not the %s the trace ran on", target,
      recorded.ok()                      ? recorded->name
      : graph.info().device_name.empty() ? std::string("GPU")
                                         : graph.info().device_name);
}

// The network of --topology when it is not the one the recorded run's machine
// resolves to (its GPU's preset, HOST-GLOO for a CPU trace): a file, or
// another preset. A trace without communication costs the same on any.
std::string OtherNetwork(const NodeModel& graph, const SimOptions& options,
                         const RankProgram& p) {
  if (options.topology.empty()) return "";
  bool communicates = false;
  for (NodeIndex i = 0; i < graph.size() && !communicates; ++i)
    communicates = IsCommunication(graph.kind(i));
  if (!communicates) return "";
  std::string recorded;
  if (!p.steps.has_gpu_ops()) {
    recorded = kHostPlatformName;
  } else if (std::optional<Platform> own =
                 PlatformForDevice(graph.info().device_name)) {
    recorded = own->name;
  }
  const std::optional<Platform> given = FindPlatformPreset(options.topology);
  if (given && absl::EqualsIgnoreCase(given->name, recorded)) return "";
  return absl::StrFormat(
      "--topology %s, not %s", options.topology,
      recorded.empty() ? std::string("the network the trace ran on")
                       : absl::StrCat(recorded, ", the recorded machine's"));
}

// The what-ifs a prediction makes of the recorded run (faster compute or
// host, stragglers, another network), joined; "" for none.
std::string WhatIfs(const NodeModel& graph, const SimOptions& options,
                    const RankProgram& p) {
  std::vector<std::string> what_ifs;
  if (options.compute_scale != 1.0) {
    what_ifs.push_back(absl::StrFormat("compute %gx as fast (--compute-scale)",
                                       options.compute_scale));
  }
  if (options.host_model.host_speed != 1.0) {
    what_ifs.push_back(absl::StrFormat("a host %gx as fast (--host-speed)",
                                       options.host_model.host_speed));
  }
  for (const auto& [rank, factor] : options.rank_slowdown) {
    if (factor == 1.0) continue;
    what_ifs.push_back(absl::StrFormat(
        "rank %d computing %gx as slow (--slow-rank)", rank, factor));
  }
  if (std::string network = OtherNetwork(graph, options, p); !network.empty())
    what_ifs.push_back(network);
  return absl::StrJoin(what_ifs, "; ");
}

// The step the prediction is compared with: the trace's only when it is a
// truth of the same job, machine and scale as the prediction. One rule for
// every way a prediction leaves the recorded run (docs/step-model.md).
void FillMeasured(const NodeModel& graph, const SimOptions& options,
                  const ComputeTiming& timing, RankProgram* p) {
  p->measured = p->steps.Measured(p->host_time);
  const std::optional<DeviceWhatIf>& what_if = timing.what_if;
  const std::string other_job = OtherJob(graph, options);
  const std::string other_machine =
      other_job.empty() ? OtherMachine(graph, options, timing, *p) : "";
  if (options.measured_step_us > 0) {
    // The user's truth replaces the trace's, both of them.
    p->measured = {};
    p->measured.us = options.measured_step_us;
    p->measured.source = p->host_time == HostTimeMode::kUnprofiled
                             ? "unprofiled-run"
                             : "profiled-run";
  } else if (p->measured.us) {
    // The first way the prediction leaves the recorded run, if any.
    std::string withheld;
    if (!other_job.empty()) {
      withheld = absl::StrFormat(
          "the trace's measured step is of %s, so it is no truth for this "
          "prediction (pass --measured-step-ms with a step measured on this "
          "job)",
          other_job);
    } else if (!other_machine.empty()) {
      withheld = absl::StrFormat(
          "the prediction is for %s, so the trace's measured step is no truth "
          "for it (pass --measured-step-ms with a step measured on that "
          "machine)",
          other_machine);
    } else if (const std::string what_ifs = WhatIfs(graph, options, *p);
               !what_ifs.empty()) {
      withheld = absl::StrFormat(
          "the prediction is a what-if (%s), not the run that was measured, "
          "so the trace's measured step is no truth for it (pass "
          "--measured-step-ms with a step measured on such a run)",
          what_ifs);
    }
    if (!withheld.empty()) {
      p->measured = {};
      p->measured.withheld = "no error reported: " + withheld;
    }
  }
  if (p->astra_replay) {
    // Neither run is what ASTRA-sim's replay models: no host-time model,
    // every node, gaps left out.
    if (p->measured.us && options.measured_step_us <= 0) {
      p->measured = {};
      p->measured.withheld =
          "no error reported: --schedule astra gives every node its recorded "
          "duration in whole microseconds, with no gaps and no host-time "
          "model, as ASTRA-sim does: a check of the graph ASTRA-sim runs, not "
          "a prediction of the recorded step";
    }
    return;
  }
  if (p->host_time == HostTimeMode::kUnprofiled &&
      p->steps.full_profiler_ns_per_op() > 0) {
    const HostTimeModel& h = p->steps.model();
    const int64_t light_ns = p->steps.light_profiler_in_model_ns();
    const std::string light =
        light_ns != h.light_profiler_ns_per_op
            ? absl::StrFormat(
                  "%.2f us per op (%s: %.2f us a probe, scaled by the "
                  "full profiler's cost over the light one, %.2fx a probe's)",
                  light_ns / 1e3, h.light_profiler_source,
                  h.light_profiler_ns_per_op / 1e3,
                  static_cast<double>(light_ns) /
                      static_cast<double>(
                          std::max<int64_t>(1, h.light_profiler_ns_per_op)))
            : absl::StrFormat("%.2f us per op (%s)", light_ns / 1e3,
                              h.light_profiler_source);
    p->notes.push_back(absl::StrFormat(
        "host cost (%s): a CPU-only trace; each op less the full profiler's "
        "%.2f us, learned from the profiled step and the light profile's "
        "(%.3f ms, %.0f ops a step) with the light profiler's %s; %s",
        h.source, p->steps.full_profiler_ns_per_op() / 1e3,
        h.light_step_ns / 1e6, h.light_ops_per_step, light,
        h.host_speed != 1.0
            ? absl::StrFormat("host %.2fx the recorded one (--host-speed)",
                              h.host_speed)
            : std::string("the recorded host CPU kept (no target host "
                          "known; --host-speed scales it)")));
    if (std::string check = SpansCheckNote(p->steps); !check.empty())
      p->notes.push_back(std::move(check));
  } else if (p->host_time == HostTimeMode::kUnprofiled &&
             p->steps.profiler_cost_from_spans()) {
    p->notes.push_back(ProfilerCostFromSpansNote(p->steps));
  } else if (p->host_time == HostTimeMode::kUnprofiled &&
             !p->steps.has_gpu_ops()) {
    // A trace too small for the spans' measures: the older estimate, which
    // missed the CPU corpus by 3-72% (median 30%, docs/step-model.md).
    p->notes.push_back(absl::StrFormat(
        "host cost (estimated from the trace): a CPU-only trace; each op less "
        "the profiler's %.2f us, the median of its %d one-op nodes that "
        "compute nothing less a %.2f us dispatch; each gap less the nested-op "
        "gap %.2f us, then capped at %.2f us; uncertain (3-72%% on the CPU "
        "corpus): a light profile (record_trace.py --kineto-light-out, "
        "et-convert --host-profile) learns the cost from the recording",
        p->steps.profiler_ns_per_op() / 1e3, p->steps.profiler_samples(),
        p->steps.model().OpNs(HostOpKind::kDispatch) / 1e3,
        p->steps.nested_op_gap_ns() / 1e3,
        p->steps.model().GapNs(HostThreadRole::kPython) / 1e3));
  } else if (p->host_time == HostTimeMode::kUnprofiled) {
    const HostTimeModel& h = p->steps.model();
    p->notes.push_back(absl::StrFormat(
        "host cost (%s): per op dispatch %.2f, launch %.2f, autograd %.2f, "
        "optimizer %.2f us; per launch %.2f us; gaps python %.2f, autograd "
        "%.2f us; %s",
        h.source, h.OpNs(HostOpKind::kDispatch) / 1e3,
        h.OpNs(HostOpKind::kLaunch) / 1e3, h.OpNs(HostOpKind::kAutograd) / 1e3,
        h.OpNs(HostOpKind::kOptimizer) / 1e3, h.launch_ns / 1e3,
        h.GapNs(HostThreadRole::kPython) / 1e3,
        h.GapNs(HostThreadRole::kAutograd) / 1e3,
        h.host_speed != 1.0
            ? absl::StrFormat("host %.2fx the recorded one (--host-speed)",
                              h.host_speed)
            : std::string("the recorded host CPU kept (no target host "
                          "known; --host-speed scales it)")));
    if (p->steps.has_gpu_ops() && h.light_step_ns > 0)
      p->notes.push_back(LightProfilerSensitivityNote(h, p->measured.us));
  }
  if (p->host_time == HostTimeMode::kUnprofiled) {
    for (std::string& note : UnprofiledRecordingNotes(p->steps, p->measured.us))
      p->notes.push_back(std::move(note));
  }
  if (what_if) {
    p->device_target = what_if->target().name;
    p->notes.push_back(absl::StrFormat(
        "GPU ops recorded on %s scaled to %s: %d compute-bound (by peak "
        "FLOP/s), %d memory-bound (by bandwidth), %d kept (no FLOPs or bytes)",
        what_if->recorded().name, what_if->target().name,
        timing.what_if_counts.compute_bound, timing.what_if_counts.memory_bound,
        timing.what_if_counts.unknown));
  }
}

// A GPU trace's host costs learned from a light profile that cannot be the
// program's (step/light_profile_check.h) give way to the defaults, said.
void KeepLightProfileWhereItHelps(const NodeModel& graph, RankProgram* p) {
  if (!p->steps.has_gpu_ops() || p->steps.model().light_step_ns <= 0 ||
      p->host_time != HostTimeMode::kUnprofiled) {
    return;
  }
  const LightProfileVerdict verdict =
      CheckLightProfile(graph, p->steps.model());
  if (verdict.usable) return;
  const std::string learned_from = p->steps.model().source;
  HostTimeModel defaults;
  defaults.host_speed = p->steps.model().host_speed;
  p->steps = StepModel::Build(graph, defaults);
  p->notes.push_back(absl::StrFormat(
      "the light profile's host costs (%s) are not used: %s; the documented "
      "defaults are (docs/step-model.md, \"A light profile that does not "
      "help\")",
      learned_from, verdict.why));
}

}  // namespace

absl::StatusOr<RankProgram> CompileRankProgram(
    const NodeModel& graph, const SimOptions& options,
    const ComputeCostModel& compute) {
  // Which deps to follow and what was repaired: the model's structure check.
  RETURN_IF_ERROR(graph.executable());
  RankProgram p;
  p.graph = &graph;
  p.ctrl_deps_ignored = graph.followed_deps() != DepSelection::kAll;
  p.notes = graph.notes();
  FillGroups(graph, options, &p);
  // --host-profile's costs, else those stored in the .et, else the defaults.
  p.steps = StepModel::Build(
      graph, options.host_model_given
                 ? options.host_model
                 : StoredHostCostsOr(graph, options.host_model));
  p.host_time = options.host_time;
  KeepLightProfileWhereItHelps(graph, &p);
  ComputeTiming timing;
  timing.compute = &compute;
  timing.host_time_model =
      p.steps.has_gpu_ops() || options.compute_model == ComputeModel::kRecorded;
  if (options.compute_model == ComputeModel::kRecorded)
    timing.what_if = WhatIfFor(graph, options, &p.notes);
  p.astra_replay = AstraReplay(options);
  p.gpu_queued_gap_ns = p.astra_replay ? 0 : graph.info().gpu_queued_gap_ns;
  if (p.gpu_queued_gap_ns > 0) {
    p.notes.push_back(absl::StrFormat(
        "GPU ops queued on a stream start %.2f us after the previous one ends "
        "(median measured in the recording)",
        p.gpu_queued_gap_ns / 1e3));
  }
  CompileNodes(graph, options, &timing, &p);
  FillMeasured(graph, options, timing, &p);
  BuildUsers(graph, graph.followed_deps(), options.scheduling, &p);
  return p;
}

}  // namespace et::sim
