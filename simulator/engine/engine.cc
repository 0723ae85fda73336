// Event loop, resource scheduling, rendezvous and deadlock reporting.
#include "simulator/engine/engine.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "base/checked_math.h"
#include "model/comm_type.h"
#include "simulator/comm/collective_cost_model.h"
#include "simulator/comm/nccl_cost_model.h"
#include "simulator/engine/collective_rendezvous.h"
#include "simulator/engine/event_queue.h"

namespace et::sim {
namespace {

// Simulated times stay below 2^62 ns so that sums of two never overflow.
constexpr int64_t kMaxSimNs = int64_t{1} << 62;

// A modelled cost (double ns) as int64 ns: NaN and negatives are 0, values past
// kMaxSimNs saturate there (std::llround of 1e300 is undefined).
int64_t CostToNs(double ns) {
  if (!(ns > 0)) return 0;
  if (ns >= static_cast<double>(kMaxSimNs)) return kMaxSimNs;
  return std::llround(ns);
}

constexpr uint32_t kPrioFinish = 0;

// Which ranks a communication runs between, for models that price distance
// (ASTRA-sim's analytical network): a collective's ring of members (empty:
// the world, or its group_size ranks in order), a message's two ranks (-1:
// unknown).
struct CommPlacement {
  absl::Span<const int64_t> ring;
  int64_t src = -1, dst = -1;
};

using ReadyHeap = std::priority_queue<uint32_t, std::vector<uint32_t>,
                                      std::greater<uint32_t>>;

struct ClassState {
  std::vector<uint32_t> deps_left;
  std::vector<ReadyHeap> ready;  // by resource
  std::vector<uint8_t> busy;     // by resource
  std::vector<int32_t> last_on;  // by resource: last node finished there
  std::vector<uint32_t> dirty;   // resources to look at in this time step
  std::vector<uint8_t> is_dirty;
  absl::flat_hash_map<int64_t, int64_t>
      group_seq;  // global group -> uses so far
  absl::flat_hash_map<int64_t, int64_t>
      p2p_seq;  // peer*2+dir -> messages so far
  size_t done = 0;
  int64_t recvs_in_flight = 0;  // --schedule astra
};

class Engine {
 public:
  Engine(const std::vector<RankClass>& classes, int64_t world,
         const SimOptions& options, const CommEnvironment& comm)
      : classes_(classes), world_(world), options_(options), comm_(comm) {}

  absl::StatusOr<SimResult> Run();

 private:
  void Init();
  void MarkReady(uint32_t c, uint32_t node, int64_t t);
  void OnFinish(const SimEvent& e);
  void IssueDirty(int64_t t);
  void IssueAstraComm(uint32_t c, int64_t t);
  void Issue(uint32_t c, uint32_t node, int64_t t);
  int64_t HostOpStart(uint32_t c, uint32_t node, int64_t t) const;
  void IssueComm(uint32_t c, uint32_t node, int64_t t);
  void StartComm(const std::vector<RendezvousArrival>& members, int64_t t,
                 bool p2p, int64_t group_size, const CommPlacement& where);
  // The communication model's cost of `run` (before recorded times).
  double ModelCostNs(const CollectiveRun& run,
                     const CommPlacement& where) const;
  // Each member's finish under ASTRA-sim's ring, by `members` (empty: one
  // time for all).
  std::vector<int64_t> AstraMemberFinishNs(
      const std::vector<RendezvousArrival>& members, const CollectiveRun& run,
      const CommPlacement& where) const;
  // The group's members in its ring order when they are not the world's
  // ranks in order (empty: the world, or group_size ranks in order).
  absl::Span<const int64_t> RingMembers(const RankProgram& p,
                                        int32_t group) const;
  int64_t GroupGlobalId(const RankProgram& p, int32_t group);
  int64_t GroupSize(const RankProgram& p, int32_t group) const;
  // Members of the group that share its first member's node (0: unknown, the
  // group fills nodes in order).
  int64_t RanksPerNode(const RankProgram& p, int32_t group);
  // A send or receive under --schedule astra (ASTRA-sim's eager sends).
  void ArriveEagerMessage(const RendezvousKey& key, const RendezvousArrival& me,
                          bool send, const CommPlacement& where);
  size_t RequiredClasses(const RankProgram& p, int32_t group) const;
  int32_t ClassOfRank(int64_t rank) const;
  absl::Status DeadlockError(int64_t t) const;
  // Fails the run when the members of one rendezvous issued different
  // collectives: the ranks issue the group's collectives in different orders.
  void CheckSameCollective(const std::vector<RendezvousArrival>& members,
                           int64_t seq);

  const std::vector<RankClass>& classes_;
  int64_t world_;
  const SimOptions& options_;
  const CommEnvironment& comm_;
  std::vector<ClassState> state_;
  SimResult result_;
  EventQueue queue_;
  CollectiveRendezvous rendezvous_;
  absl::flat_hash_map<std::string, int64_t> group_ids_;
  absl::flat_hash_map<int64_t, int64_t> ranks_per_node_;  // by global id
  std::vector<std::string> group_names_;
  std::vector<int32_t> class_of_rank_;  // world_ entries
  std::vector<RendezvousArrival> scratch_;
  int64_t scratch_ranks_per_node_ = 0;  // of the collective StartComm runs
  absl::Status error_;                  // the first order mismatch, if any
  // --schedule astra: when a message sent before its receive was issued
  // arrives, by (src, dst, n-th message).
  absl::flat_hash_map<RendezvousKey, int64_t> eager_arrival_ns_;
};

void Engine::Init() {
  class_of_rank_.assign(world_, -1);
  for (size_t c = 0; c < classes_.size(); ++c) {
    for (int64_t r : classes_[c].ranks) {
      if (r >= 0 && r < world_) class_of_rank_[r] = static_cast<int32_t>(c);
    }
  }
  state_.resize(classes_.size());
  result_.timelines.resize(classes_.size());
  for (size_t c = 0; c < classes_.size(); ++c) {
    const RankProgram& p = *classes_[c].program;
    const size_t n = p.kind.size(), nres = p.resource_names.size();
    ClassState& s = state_[c];
    s.deps_left = p.dep_count;
    s.ready.resize(nres);
    s.busy.assign(nres, 0);
    s.last_on.assign(nres, -1);
    s.is_dirty.assign(nres, 0);
    ClassTimeline& tl = result_.timelines[c];
    tl.issue_ns.assign(n, -1);
    tl.start_ns.assign(n, -1);
    tl.finish_ns.assign(n, -1);
    tl.critical_pred.assign(n, -1);
    for (uint32_t i = 0; i < n; ++i) {
      if (s.deps_left[i] == 0) MarkReady(static_cast<uint32_t>(c), i, 0);
    }
  }
}

namespace {

// The node's critical predecessor: of `pred` (its resource's previous op, or
// -1) and its followed deps, the one that finished last.
int32_t CriticalPred(const RankProgram& p, const ClassTimeline& tl,
                     uint32_t node, int32_t pred) {
  int64_t pred_finish = pred >= 0 ? tl.finish_ns[pred] : -1;
  auto consider = [&](absl::Span<const NodeIndex> deps) {
    for (NodeIndex d : deps) {
      if (tl.finish_ns[d] >= pred_finish) {
        pred_finish = tl.finish_ns[d];
        pred = static_cast<int32_t>(d);
      }
    }
  };
  consider(p.graph->data_deps(node));
  if (!p.ctrl_deps_ignored) consider(p.graph->ctrl_deps(node));
  return pred;
}

}  // namespace

// Noops finish at once; others wait for their resource.
void Engine::MarkReady(uint32_t c, uint32_t node, int64_t t) {
  const RankProgram& p = *classes_[c].program;
  if (p.kind[node] == SimOpKind::kNoop) {
    ClassTimeline& tl = result_.timelines[c];
    tl.issue_ns[node] = tl.start_ns[node] = t;
    // The chain runs through a noop (a step marker, a container) to what it
    // waited for: it used to end there, leaving the time before it unnamed.
    tl.critical_pred[node] = CriticalPred(p, tl, node, -1);
    queue_.Push(t, kPrioFinish, c, node);
    return;
  }
  ClassState& s = state_[c];
  const uint32_t r = p.resource[node];
  s.ready[r].push(node);
  if (!s.is_dirty[r]) {
    s.is_dirty[r] = 1;
    s.dirty.push_back(r);
  }
}

void Engine::OnFinish(const SimEvent& e) {
  const uint32_t c = e.actor, node = e.node;
  const RankProgram& p = *classes_[c].program;
  ClassState& s = state_[c];
  ClassTimeline& tl = result_.timelines[c];
  tl.finish_ns[node] = e.time_ns;
  ++s.done;
  if (p.kind[node] != SimOpKind::kNoop) {
    const uint32_t r = p.resource[node];
    s.busy[r] = 0;
    s.last_on[r] = static_cast<int32_t>(node);
    if (!s.is_dirty[r]) {
      s.is_dirty[r] = 1;
      s.dirty.push_back(r);
    }
    if (static_cast<int32_t>(r) == p.astra_recv_resource &&
        --s.recvs_in_flight == 0 && p.astra_comm_resource >= 0) {
      const uint32_t comm = static_cast<uint32_t>(p.astra_comm_resource);
      if (!s.is_dirty[comm]) {  // the slot may issue again
        s.is_dirty[comm] = 1;
        s.dirty.push_back(comm);
      }
    }
  }
  for (uint32_t k = p.user_offsets[node]; k < p.user_offsets[node + 1]; ++k) {
    const uint32_t u = p.users[k];
    if (--s.deps_left[u] == 0) MarkReady(c, u, e.time_ns);
  }
}

void Engine::IssueDirty(int64_t t) {
  for (uint32_t c = 0; c < state_.size(); ++c) {
    ClassState& s = state_[c];
    if (s.dirty.empty()) continue;
    std::sort(s.dirty.begin(), s.dirty.end());
    std::vector<uint32_t> dirty;
    dirty.swap(s.dirty);
    const RankProgram& p = *classes_[c].program;
    for (uint32_t r : dirty) {
      s.is_dirty[r] = 0;
      if (static_cast<int32_t>(r) == p.astra_recv_resource ||
          (static_cast<int32_t>(r) == p.astra_comm_resource &&
           p.astra_recv_resource >= 0)) {
        IssueAstraComm(c, t);
        continue;
      }
      if (s.busy[r] || s.ready[r].empty()) continue;
      const uint32_t node = s.ready[r].top();
      s.ready[r].pop();
      Issue(c, node, t);
    }
  }
}

// ASTRA-sim's issue of a rank's ready communication (518bd51,
// Workload::issue_dep_free_nodes over HardwareResource::is_available): in id
// order, a receive always issues, a collective or send only when no
// communication op (a receive included) is in flight.
void Engine::IssueAstraComm(uint32_t c, int64_t t) {
  const RankProgram& p = *classes_[c].program;
  ClassState& s = state_[c];
  const uint32_t comm = static_cast<uint32_t>(p.astra_comm_resource);
  const uint32_t recv = static_cast<uint32_t>(p.astra_recv_resource);
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  while (true) {
    const uint32_t next_recv =
        s.ready[recv].empty() ? kNone : s.ready[recv].top();
    const bool comm_free = p.astra_comm_resource >= 0 && !s.busy[comm] &&
                           s.recvs_in_flight == 0 && !s.ready[comm].empty();
    const uint32_t next_comm = comm_free ? s.ready[comm].top() : kNone;
    if (next_recv == kNone && next_comm == kNone) return;
    if (next_comm < next_recv) {
      s.ready[comm].pop();
      Issue(c, next_comm, t);
    } else {
      s.ready[recv].pop();
      ++s.recvs_in_flight;
      Issue(c, next_recv, t);
      s.busy[recv] = 0;  // receives do not wait for each other
    }
  }
}

void Engine::Issue(uint32_t c, uint32_t node, int64_t t) {
  const RankProgram& p = *classes_[c].program;
  ClassState& s = state_[c];
  ClassTimeline& tl = result_.timelines[c];
  s.busy[p.resource[node]] = 1;
  tl.issue_ns[node] = t;
  // Critical predecessor: the dep or resource predecessor that finished last.
  tl.critical_pred[node] =
      CriticalPred(p, tl, node, s.last_on[p.resource[node]]);

  if (p.kind[node] == SimOpKind::kCompute) {
    // A host op's thread is busy for its gap first (Python, the dispatcher).
    int64_t start = HostOpStart(c, node, t);
    // A GPU op queued behind the stream's previous op starts a front-end gap
    // after it; one launched onto an idle stream starts when ready.
    const int32_t prev = s.last_on[p.resource[node]];
    if (p.gpu_queued_gap_ns > 0 && prev >= 0 &&
        !p.resource_is_host[p.resource[node]]) {
      start = std::max(start,
                       SaturatingAdd(tl.finish_ns[prev], p.gpu_queued_gap_ns));
    }
    tl.start_ns[node] = start;
    const double scaled = static_cast<double>(p.compute_ns[node]) *
                          classes_[c].slowdown / options_.compute_scale;
    queue_.Push(SaturatingAdd(start, CostToNs(scaled)), kPrioFinish, c, node);
    return;
  }
  // The thread that issued a host-side collective goes on at once.
  for (uint32_t k = p.issue_user_offsets[node];
       k < p.issue_user_offsets[node + 1]; ++k) {
    const uint32_t u = p.issue_users[k];
    if (--state_[c].deps_left[u] == 0) MarkReady(c, u, t);
  }
  IssueComm(c, node, t);
}

// Issue time plus the recorded gap; but when the recorded gap held a wait for
// a host collective (DDP's bucket, StepModel::HostCollectiveWaitNs) and that
// collective is what the op waited for here too, the wait counts once: the gap
// after the thread and the other deps were ready, or the gap less the recorded
// wait after the simulated completion, whichever is later.
int64_t Engine::HostOpStart(uint32_t c, uint32_t node, int64_t t) const {
  const RankProgram& p = *classes_[c].program;
  const int64_t gap = p.gap_ns[node];
  const int64_t wait = p.collective_wait_ns[node];
  if (wait <= 0) return SaturatingAdd(t, gap);
  const ClassTimeline& tl = result_.timelines[c];
  const ClassState& s = state_[c];
  const int32_t prev = s.last_on[p.resource[node]];
  int64_t other = prev >= 0 ? tl.finish_ns[prev] : 0;
  int64_t completed = -1;
  for (NodeIndex d : p.graph->data_deps(node)) {
    const CommSpec* comm = p.graph->comm(d);
    const bool host_comm =
        p.kind[d] == SimOpKind::kCollective && comm != nullptr && comm->on_host;
    (host_comm ? completed : other) =
        std::max(host_comm ? completed : other, tl.finish_ns[d]);
  }
  for (NodeIndex d : p.graph->ctrl_deps(node)) {
    other =
        std::max(other, p.kind[d] == SimOpKind::kCollective ? tl.issue_ns[d]
                                                            : tl.finish_ns[d]);
  }
  if (completed < 0) return SaturatingAdd(t, gap);
  return std::max(t, std::max(SaturatingAdd(other, gap),
                              SaturatingAdd(completed, gap - wait)));
}

int64_t Engine::GroupGlobalId(const RankProgram& p, int32_t group) {
  const std::string& name = p.groups.groups[group].name;
  auto [it, inserted] =
      group_ids_.emplace(name, static_cast<int64_t>(group_ids_.size()));
  if (inserted) group_names_.push_back(name);
  return it->second;
}

// Members of a group: its recorded ranks, unless they cover the recorded world
// (then the simulated world: --world N scales data parallelism).
int64_t Engine::GroupSize(const RankProgram& p, int32_t group) const {
  const ProcessGroup& g = p.groups.groups[group];
  if (g.ranks.empty()) return world_;
  const int64_t recorded = static_cast<int64_t>(g.ranks.size());
  if (p.recorded_world_size > 0 && recorded >= p.recorded_world_size)
    return world_;
  return std::min(recorded, world_);
}

int64_t Engine::RanksPerNode(const RankProgram& p, int32_t group) {
  const ProcessGroup& g = p.groups.groups[group];
  if (g.ranks.empty() || GroupSize(p, group) != g.MemberCount(world_)) return 0;
  auto [it, inserted] = ranks_per_node_.emplace(GroupGlobalId(p, group), 0);
  if (inserted) {
    const int64_t gpn = std::max<int64_t>(1, comm_.platform.gpus_per_node);
    const int64_t node = g.ranks.front() / gpn;
    for (int64_t r : g.ranks) it->second += r / gpn == node ? 1 : 0;
  }
  return it->second;
}

size_t Engine::RequiredClasses(const RankProgram& p, int32_t group) const {
  if (classes_.size() == 1) return 1;
  const ProcessGroup& g = p.groups.groups[group];
  if (g.ranks.empty() ||
      (p.recorded_world_size > 0 &&
       static_cast<int64_t>(g.ranks.size()) >= p.recorded_world_size)) {
    return classes_.size();
  }
  std::vector<uint8_t> seen(classes_.size(), 0);
  size_t count = 0;
  for (int64_t r : g.ranks) {
    const int32_t c = ClassOfRank(r);
    if (c >= 0 && !seen[c]) {
      seen[c] = 1;
      ++count;
    }
  }
  return std::max<size_t>(count, 1);
}

int32_t Engine::ClassOfRank(int64_t rank) const {
  return rank >= 0 && rank < world_ ? class_of_rank_[rank] : -1;
}

void Engine::IssueComm(uint32_t c, uint32_t node, int64_t t) {
  const RankProgram& p = *classes_[c].program;
  ClassState& s = state_[c];
  const SimOpKind kind = p.kind[node];
  const RendezvousArrival me{c, node, t};
  if (kind == SimOpKind::kCollective) {
    const int64_t gid = GroupGlobalId(p, p.group[node]);
    const RendezvousKey key{0, gid, 0, s.group_seq[gid]++};
    if (rendezvous_.Arrive(key, RequiredClasses(p, p.group[node]), me,
                           &scratch_)) {
      CheckSameCollective(scratch_, key.seq);
      scratch_ranks_per_node_ = RanksPerNode(p, p.group[node]);
      StartComm(scratch_, t, false, GroupSize(p, p.group[node]),
                CommPlacement{RingMembers(p, p.group[node])});
    }
    return;
  }
  // Point-to-point: matched only between single-rank classes; a class of
  // symmetric ranks sends to a peer that is, by symmetry, receiving at the same
  // time.
  const int64_t self = classes_[c].ranks.front();
  const int64_t peer = p.peer[node];
  const int32_t peer_class = ClassOfRank(peer);
  // Two classes of as many ranks match too when each program's peer is the
  // other class's first rank (a synthesized pipeline's stages: every rank of
  // a stage talks to its own replica's neighbour, as the first ranks do).
  const bool matched =
      peer_class >= 0 && static_cast<uint32_t>(peer_class) != c &&
      ((classes_[c].ranks.size() == 1 &&
        classes_[peer_class].ranks.size() == 1) ||
       (classes_[c].ranks.size() == classes_[peer_class].ranks.size() &&
        peer == classes_[peer_class].ranks.front()));
  const bool send = kind == SimOpKind::kSend;
  const int64_t src = send ? self : peer, dst = send ? peer : self;
  const CommPlacement where{{}, src, dst};
  if (!matched) {
    scratch_.assign(1, me);
    StartComm(scratch_, t, true, 2, where);
    return;
  }
  const RendezvousKey key{1, src, dst, s.p2p_seq[peer * 2 + (send ? 0 : 1)]++};
  if (options_.scheduling == SchedulingMode::kAstraCompat) {
    ArriveEagerMessage(key, me, send, where);
    return;
  }
  if (rendezvous_.Arrive(key, 2, me, &scratch_))
    StartComm(scratch_, t, true, 2, where);
}

// ASTRA-sim's network sends at once, whether or not the receive is posted
// (518bd51, CongestionUnawareNetworkApi::sim_send schedules the arrival when
// the send is issued): the send finishes when its message arrives; the
// receive then, or when it is issued if the message is already there
// (CommonNetworkApi::sim_recv runs its callback at once). The pair is still
// matched through the rendezvous, so a receive never sent to is a deadlock
// that names its ranks.
void Engine::ArriveEagerMessage(const RendezvousKey& key,
                                const RendezvousArrival& me, bool send,
                                const CommPlacement& where) {
  const bool complete = rendezvous_.Arrive(key, 2, me, &scratch_);
  if (send && !complete) {  // on its way before the receive is issued
    scratch_.assign(1, me);
    StartComm(scratch_, me.issue_ns, true, 2, where);
    eager_arrival_ns_[key] =
        SaturatingAdd(me.issue_ns, result_.collectives.back().cost_ns);
    return;
  }
  if (send) {  // the receive was waiting: both end when the message arrives
    StartComm(scratch_, me.issue_ns, true, 2, where);
    return;
  }
  if (!complete) return;  // waits for its send
  auto it = eager_arrival_ns_.find(key);
  const int64_t arrival_ns = it->second;
  eager_arrival_ns_.erase(it);
  result_.timelines[me.actor].start_ns[me.node] = me.issue_ns;
  queue_.Push(std::max(me.issue_ns, arrival_ns), kPrioFinish, me.actor,
              me.node);
}

absl::Span<const int64_t> Engine::RingMembers(const RankProgram& p,
                                              int32_t group) const {
  const ProcessGroup& g = p.groups.groups[group];
  if (static_cast<int64_t>(g.ranks.size()) != GroupSize(p, group)) return {};
  return g.ranks;
}

double Engine::ModelCostNs(const CollectiveRun& run,
                           const CommPlacement& where) const {
  const double bytes = static_cast<double>(run.bytes);
  const bool astra = options_.comm_model == CommModel::kAstra ||
                     options_.comm_model == CommModel::kAstraAware;
  // The NCCL model is the default; recorded times fall back to it.
  const bool nccl = options_.comm_model == CommModel::kNccl ||
                    options_.comm_model == CommModel::kCalibrated ||
                    options_.comm_model == CommModel::kRecorded;
  if (run.point_to_point) {
    // ASTRA-sim's congestion-unaware network prices a message by the ring
    // distance between its two NPUs (AstraMessageNs).
    if (options_.comm_model == CommModel::kAstra && where.src >= 0 &&
        where.dst >= 0 && where.src != where.dst) {
      return static_cast<double>(
          AstraMessageNs(comm_.topology, where.src, where.dst, run.bytes));
    }
    return nccl ? NcclPointToPointNs(comm_.platform, bytes, world_)
                : PointToPointNs(bytes, /*same_node=*/false, comm_.topology);
  }
  if (astra && comm_.astra) {
    const bool aware = options_.comm_model == CommModel::kAstraAware;
    if (!where.ring.empty()) {
      return static_cast<double>(
          AstraGroupCollectiveNs(run.type, run.bytes, where.ring,
                                 comm_.topology, *comm_.astra, aware));
    }
    return static_cast<double>(AstraCollectiveNs(run.type, run.bytes,
                                                 run.group_size, comm_.topology,
                                                 *comm_.astra, aware));
  }
  if (nccl) {
    if (std::optional<double> ns = NcclChakraCostNs(
            PlatformForGroup(comm_.platform, run.ranks_per_node), run.type,
            run.group_size, bytes)) {
      return *ns;
    }
  }
  return CollectiveCostNs(run.type, run.group_size, bytes, comm_.topology,
                          options_.algorithm, options_.nccl_efficiency);
}

void Engine::StartComm(const std::vector<RendezvousArrival>& members, int64_t t,
                       bool p2p, int64_t group_size,
                       const CommPlacement& where) {
  const RendezvousArrival& first = members.front();
  const RankProgram& p = *classes_[first.actor].program;
  const uint32_t node = first.node;
  CollectiveRun run;
  run.group = p.groups.groups[p.group[node]].name;
  run.type = p.comm_type[node];
  run.point_to_point = p2p;
  run.synthesized = p.graph->synthesized(node);
  run.bytes = p.comm_bytes[node];
  run.group_size = group_size;
  run.ranks_per_node = p2p ? 0 : scratch_ranks_per_node_;
  run.start_ns = t;
  run.max_wait_ns = t - first.issue_ns;
  double cost = ModelCostNs(run, where);
  if (options_.comm_model == CommModel::kRecorded) {
    // Recorded kernel times include waiting for the slowest peer; the
    // rendezvous models that wait, so take the fastest member's time.
    int64_t fastest = 0;
    for (const RendezvousArrival& m : members) {
      const int64_t rec = classes_[m.actor].program->recorded_ns[m.node];
      if (rec > 0 && (fastest == 0 || rec < fastest)) fastest = rec;
    }
    if (fastest > 0) cost = static_cast<double>(fastest);
  }
  run.cost_ns = CostToNs(cost);
  const std::vector<int64_t> finish =
      p2p ? std::vector<int64_t>() : AstraMemberFinishNs(members, run, where);
  if (!finish.empty()) {
    run.cost_ns = *std::max_element(finish.begin(), finish.end()) - t;
  }
  for (size_t k = 0; k < members.size(); ++k) {
    const RendezvousArrival& m = members[k];
    result_.timelines[m.actor].start_ns[m.node] = t;
    queue_.Push(
        finish.empty() ? SaturatingAdd(t, run.cost_ns) : std::max(t, finish[k]),
        kPrioFinish, m.actor, m.node);
  }
  result_.collectives.push_back(std::move(run));
}

// ASTRA-sim has no rendezvous: a member starts the collective's ring when it
// issues it. On a ring whose links differ (a comm group's members unequally
// far apart) the members then finish at different times, each on its own
// path round the ring (AstraGroupMemberFinishNs). Known when every member is
// a rank of its own (--ranks, --write-ranks' files); else empty, and the
// slowest member's time stands for all.
std::vector<int64_t> Engine::AstraMemberFinishNs(
    const std::vector<RendezvousArrival>& members, const CollectiveRun& run,
    const CommPlacement& where) const {
  if (options_.comm_model != CommModel::kAstra || !comm_.astra ||
      where.ring.empty()) {
    return {};
  }
  absl::flat_hash_map<int64_t, size_t> position;
  for (size_t k = 0; k < where.ring.size(); ++k) position[where.ring[k]] = k;
  // Every member a rank of its own: each starts when it issued. Else (a class
  // of symmetric ranks) all start together, and a class takes its first
  // rank's finish, the rank its timeline stands for.
  std::vector<int64_t> starts(where.ring.size(), -1);
  bool own_starts = members.size() == where.ring.size();
  for (const RendezvousArrival& m : members) {
    const std::vector<int64_t>& ranks = classes_[m.actor].ranks;
    auto it = position.find(ranks.front());
    if (it == position.end()) return {};
    if (ranks.size() != 1 || starts[it->second] >= 0) own_starts = false;
    starts[it->second] = m.issue_ns;
  }
  if (!own_starts) starts.assign(where.ring.size(), run.start_ns);
  const std::vector<int64_t> by_position =
      AstraGroupMemberFinishNs(run.type, run.bytes, where.ring, starts,
                               comm_.topology, *comm_.astra, false);
  if (by_position.empty()) return {};
  std::vector<int64_t> finish;
  for (const RendezvousArrival& m : members)
    finish.push_back(by_position[position[classes_[m.actor].ranks.front()]]);
  return finish;
}

void Engine::CheckSameCollective(const std::vector<RendezvousArrival>& members,
                                 int64_t seq) {
  if (!error_.ok() || members.size() < 2) return;
  const RendezvousArrival& a = members.front();
  const RankProgram& pa = *classes_[a.actor].program;
  // An all-to-all's size may differ by rank (uneven splits).
  const bool check_bytes = pa.comm_type[a.node] != ChakraProtoMsg::ALL_TO_ALL;
  for (const RendezvousArrival& b : members) {
    const RankProgram& pb = *classes_[b.actor].program;
    if (pb.comm_type[b.node] == pa.comm_type[a.node] &&
        (!check_bytes || pb.comm_bytes[b.node] == pa.comm_bytes[a.node])) {
      continue;
    }
    auto describe = [&](const RendezvousArrival& m, const RankProgram& p) {
      return absl::StrFormat("rank %d issued %s of %d bytes (node %d)",
                             classes_[m.actor].ranks.front(),
                             CommTypeName(p.comm_type[m.node]),
                             p.comm_bytes[m.node], p.graph->id(m.node));
    };
    error_ = absl::FailedPreconditionError(absl::StrFormat(
        "collective #%d on group '%s': %s, %s: the ranks issue this group's "
        "collectives in different orders (NCCL requires one order, and "
        "ASTRA-sim pairs them by issue order); et-convert chains each "
        "group's collectives in recorded order: convert the traces again",
        seq, pa.groups.groups[pa.group[a.node]].name, describe(a, pa),
        describe(b, pb)));
    return;
  }
}

absl::Status Engine::DeadlockError(int64_t t) const {
  std::vector<std::string> lines;
  for (const CollectiveRendezvous::Pending& pend :
       rendezvous_.PendingInstances()) {
    std::vector<uint8_t> arrived(classes_.size(), 0);
    std::vector<std::string> issued;
    for (const RendezvousArrival& a : pend.arrived) {
      arrived[a.actor] = 1;
      issued.push_back(
          absl::StrFormat("rank %d (node %d)", classes_[a.actor].ranks.front(),
                          classes_[a.actor].program->graph->id(a.node)));
    }
    std::vector<std::string> missing;
    for (size_t c = 0; c < classes_.size() && missing.size() < 16; ++c) {
      if (!arrived[c])
        missing.push_back(absl::StrCat(classes_[c].ranks.front()));
    }
    const std::string what =
        pend.key.kind == 0
            ? absl::StrFormat("collective #%d on group '%s'", pend.key.seq,
                              group_names_[pend.key.a])
            : absl::StrFormat("message #%d from rank %d to rank %d",
                              pend.key.seq, pend.key.a, pend.key.b);
    lines.push_back(absl::StrFormat(
        "%s issued by %s; never issued by rank(s) %s", what,
        absl::StrJoin(issued, ", "), absl::StrJoin(missing, ", ")));
  }
  size_t stuck = 0;
  for (const ClassState& s : state_) stuck += (s.deps_left.size() - s.done);
  return absl::FailedPreconditionError(
      absl::StrFormat("deadlock at t=%d ns: %d ops never ran; %s", t, stuck,
                      lines.empty() ? std::string("ops wait on each other")
                                    : absl::StrJoin(lines, "; ")));
}

absl::StatusOr<SimResult> Engine::Run() {
  Init();
  int64_t t = 0;
  IssueDirty(t);
  while (!queue_.empty()) {
    t = queue_.top().time_ns;
    while (!queue_.empty() && queue_.top().time_ns == t) {
      OnFinish(queue_.Pop());
      ++result_.events;
    }
    IssueDirty(t);
    if (!error_.ok()) return error_;
  }
  // Times saturate rather than wrap (base/checked_math.h); a clock that
  // reached the ceiling means some input duration was absurd, and every time
  // after it would be wrong.
  if (t >= kMaxSimNs) {
    return absl::OutOfRangeError(
        "simulated time passed 2^62 ns (146 years): a recorded duration or "
        "size in the input is out of range");
  }
  for (const ClassState& s : state_) {
    if (s.done != s.deps_left.size()) return DeadlockError(t);
  }
  return std::move(result_);
}

}  // namespace

absl::StatusOr<SimResult> RunSimulation(const std::vector<RankClass>& classes,
                                        int64_t world_size,
                                        const SimOptions& options,
                                        const CommEnvironment& comm) {
  if (classes.empty())
    return absl::InvalidArgumentError("no ranks to simulate");
  Engine engine(classes, world_size, options, comm);
  return engine.Run();
}

}  // namespace et::sim
