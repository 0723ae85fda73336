// ASTRA-sim analytical backend, reproduced for ring collectives.
//
// What ASTRA-sim does for one collective (native "ring" implementation):
// - the buffer is split into `preferred-dataset-splits` chunks;
//   `active-chunks-per-dimension` of them run at once, the next starting
//   when one finishes;
// - a chunk is a series of messages to the ring neighbour: all-reduce 2(n-1)
//   messages of chunk/n bytes, reduce-scatter n-1 of chunk/n, all-gather n-1
//   of chunk, all-to-all n(n-1)/2 of chunk/n;
// - every message hand-off between NPU and memory costs `endpoint-delay` ns
//   (once at the start, then after each received message); a received
//   message that is reduced (reduce-scatter, and the first n-1 of an
//   all-reduce) adds 3 truncated bytes/local-mem-bw terms (two reads, one
//   write);
// - congestion unaware: a message takes trunc(hops * latency + bytes / bw),
//   hops = 1 between ring neighbours, 2 through a switch; in a comm group
//   smaller than the world, the ring distance between the two members (the
//   shorter way round: AstraMessageNs), so a group whose members are not
//   equally far apart runs member by member (MemberRingNs);
// - congestion aware: each link (one for a ring, NPU->switch and
//   switch->NPU for a switch) is a FIFO that is busy for trunc(bytes / bw)
//   and delivers after trunc(latency + bytes / bw).
// With equal links every rank runs the same chunk schedule, and each link
// carries one rank's traffic, so one rank's view (its outgoing links) is the
// whole simulation.
#include "simulator/comm/astra_compat.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <queue>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/json_file.h"
#include "nlohmann/json.hpp"

namespace et::sim {
namespace {

struct ChunkPlan {
  int64_t messages = 0;
  uint64_t message_bytes = 0;
  int64_t reduced_messages = 0;  // the first k received messages are reduced
};

ChunkPlan PlanChunk(ChakraProtoMsg::CollectiveCommType type,
                    uint64_t chunk_bytes, int64_t n) {
  const uint64_t un = static_cast<uint64_t>(n);
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return {2 * (n - 1), chunk_bytes / un, n - 1};
    case ChakraProtoMsg::REDUCE_SCATTER:
    case ChakraProtoMsg::REDUCE_SCATTER_BLOCK:
      return {n - 1, chunk_bytes / un, n - 1};
    case ChakraProtoMsg::ALL_GATHER:
      return {n - 1, chunk_bytes, 0};
    case ChakraProtoMsg::ALL_TO_ALL:
      return {n * (n - 1) / 2, chunk_bytes / un, 0};
    default:  // broadcast/reduce/...: ASTRA-sim's ring runs them as n-1
              // messages
      return {n - 1, chunk_bytes, 0};
  }
}

// PacketBundle: three truncated size / (local-mem-bw * 1e9 B/s) terms per
// received message that is reduced.
int64_t ReduceNs(const ChunkPlan& plan, const AstraSystemConfig& system) {
  const double mem_bytes_per_ns = system.local_mem_bw_gbps;
  return 3 * static_cast<int64_t>(static_cast<double>(plan.message_bytes) /
                                  mem_bytes_per_ns);
}

// Hops between positions `a` and `b` of one dimension of `npus` (ASTRA-sim's
// Ring::compute_hops_count, bidirectional: the shorter way round).
int64_t DimHops(const TopologyDim& dim, int64_t a, int64_t b) {
  if (dim.kind == LinkKind::kSwitch) return 2;
  if (dim.kind == LinkKind::kFullyConnected) return 1;
  int64_t clockwise = b - a;
  if (dim.npus > 0) {
    clockwise %= dim.npus;
    if (clockwise < 0) clockwise += dim.npus;
    return std::min(clockwise, dim.npus - clockwise);
  }
  return clockwise < 0 ? -clockwise : clockwise;
}

// How ASTRA-sim (518bd51, Sys::determine_chunk_size and generate_collective)
// cuts a collective of `bytes` into chunks: chunk = bytes / splits (floor);
// a chunk smaller than the NPUs of the whole system (not the group) becomes
// that many bytes, and the collective `splits` such chunks (except an
// all-gather); then it makes ceil(size / chunk) chunks, every one of the full
// chunk size, so a size that splits does not divide runs one chunk more (the
// last carries the remainder's few bytes at a whole chunk's cost).
struct ChunkSplit {
  uint64_t chunk_bytes = 0;
  int64_t chunks = 0;
};

ChunkSplit SplitChunks(ChakraProtoMsg::CollectiveCommType type, uint64_t bytes,
                       const AstraSystemConfig& system, int64_t system_npus) {
  const uint64_t splits =
      static_cast<uint64_t>(system.preferred_dataset_splits);
  uint64_t size = bytes, chunk = bytes / splits;
  const uint64_t npus =
      static_cast<uint64_t>(std::max<int64_t>(1, system_npus));
  if (type != ChakraProtoMsg::ALL_GATHER && npus > chunk) {
    chunk = npus;
    size = splits * chunk;
  }
  if (chunk == 0) return {};
  return {chunk, static_cast<int64_t>((size + chunk - 1) / chunk)};
}

// NPUs of the whole system: the product of the dimensions (ASTRA-sim's
// Sys::total_nodes).
int64_t SystemNpus(const Topology& topology) {
  int64_t npus = 1;
  for (const TopologyDim& d : topology.dims)
    npus *= std::max<int64_t>(1, d.npus);
  return npus;
}

enum class EventKind : uint8_t { kLinkFree, kArrive, kHandOff };

struct Event {
  int64_t time_ns;
  uint64_t seq;  // ties: insertion order, as in ASTRA-sim's event list
  EventKind kind;
  int32_t link;
  int32_t chunk;
  bool operator>(const Event& o) const {
    return time_ns != o.time_ns ? time_ns > o.time_ns : seq > o.seq;
  }
};

class RingChunkSimulation {
 public:
  // `unaware_message_ns`: one message's time on the congestion-unaware
  // network (AstraMessageNs between two neighbours of the ring).
  RingChunkSimulation(const ChunkPlan& plan, const TopologyDim& dim,
                      double bytes_per_ns, int64_t unaware_message_ns,
                      const AstraSystemConfig& system, bool aware)
      : plan_(plan), system_(system), aware_(aware) {
    const double serialization =
        static_cast<double>(plan.message_bytes) / bytes_per_ns;
    unaware_message_ns_ = unaware_message_ns;
    link_busy_ns_ = static_cast<int64_t>(serialization);
    link_deliver_ns_ = static_cast<int64_t>(dim.latency_ns + serialization);
    links_ = aware && dim.kind == LinkKind::kSwitch ? 2 : 1;
    reduce_ns_ = ReduceNs(plan, system);
  }

  int64_t Run(int64_t chunks) {
    link_busy_.assign(links_, false);
    link_queue_.assign(links_, {});
    sent_.assign(chunks, 0);
    received_.assign(chunks, 0);
    next_chunk_ = 0;
    chunks_ = chunks;
    const int64_t active =
        std::max<int64_t>(1, system_.active_chunks_per_dimension);
    for (int64_t i = 0; i < active && next_chunk_ < chunks_; ++i) StartChunk(0);
    int64_t finish_ns = 0;
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      switch (e.kind) {
        case EventKind::kLinkFree:
          link_busy_[e.link] = false;
          if (!link_queue_[e.link].empty()) {
            const int32_t c = link_queue_[e.link].front();
            link_queue_[e.link].pop_front();
            Transmit(e.link, e.time_ns, c);
          }
          break;
        case EventKind::kArrive:
          if (e.link + 1 < links_) {
            SendOnLink(e.link + 1, e.time_ns, e.chunk);
          } else {
            const int64_t k = ++received_[e.chunk];
            const int64_t reduce = k <= plan_.reduced_messages ? reduce_ns_ : 0;
            Push(e.time_ns + system_.endpoint_delay_ns + reduce,
                 EventKind::kHandOff, 0, e.chunk);
          }
          break;
        case EventKind::kHandOff:
          if (sent_[e.chunk] < plan_.messages) {
            ++sent_[e.chunk];
            if (aware_) {
              SendOnLink(0, e.time_ns, e.chunk);
            } else {
              Push(e.time_ns + unaware_message_ns_, EventKind::kArrive,
                   links_ - 1, e.chunk);
            }
          } else {
            finish_ns = e.time_ns;
            if (next_chunk_ < chunks_) StartChunk(e.time_ns);
          }
          break;
      }
    }
    return finish_ns;
  }

 private:
  void Push(int64_t t, EventKind kind, int32_t link, int32_t chunk) {
    events_.push(Event{t, seq_++, kind, link, chunk});
  }
  void StartChunk(int64_t t) {
    Push(t + system_.endpoint_delay_ns, EventKind::kHandOff, 0,
         static_cast<int32_t>(next_chunk_++));
  }
  void SendOnLink(int32_t link, int64_t t, int32_t chunk) {
    if (link_busy_[link]) {
      link_queue_[link].push_back(chunk);
    } else {
      Transmit(link, t, chunk);
    }
  }
  void Transmit(int32_t link, int64_t t, int32_t chunk) {
    link_busy_[link] = true;
    Push(t + link_deliver_ns_, EventKind::kArrive, link, chunk);
    Push(t + link_busy_ns_, EventKind::kLinkFree, link, chunk);
  }

  ChunkPlan plan_;
  AstraSystemConfig system_;
  bool aware_;
  int64_t unaware_message_ns_ = 0, link_busy_ns_ = 0, link_deliver_ns_ = 0;
  int64_t reduce_ns_ = 0;
  int32_t links_ = 1;
  std::vector<bool> link_busy_;
  std::vector<std::deque<int32_t>> link_queue_;
  std::vector<int64_t> sent_, received_;
  int64_t next_chunk_ = 0, chunks_ = 0;
  uint64_t seq_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
};

// The congestion-unaware ring member by member, for links that differ
// (message_ns[k]: member k to member k + 1, the last to the first). Member
// k's message i leaves at send[k]; it arrives at the next member, which
// takes it once it has itself sent message i (ASTRA-sim's Ring posts the
// receive with its send), then hands off (endpoint delay, plus the reduction
// for the first `reduced_messages`) and sends message i + 1; after the last
// it finishes the chunk. A member starts chunk c when its chunk c - active
// finished (chunks that run together do not meet on this network), its
// first ones when it issued the collective (starts_ns[k]). With equal links
// and starts this is RingChunkSimulation's unaware run, for every member.
// Returns each member's finish.
std::vector<int64_t> MemberRingFinishNs(const ChunkPlan& plan,
                                        const std::vector<int64_t>& message_ns,
                                        absl::Span<const int64_t> starts_ns,
                                        const AstraSystemConfig& system,
                                        int64_t chunks) {
  const size_t n = message_ns.size();
  const int64_t active =
      std::max<int64_t>(1, system.active_chunks_per_dimension);
  const int64_t reduce_ns = ReduceNs(plan, system);
  std::vector<std::vector<int64_t>> finish(chunks, std::vector<int64_t>(n, 0));
  std::vector<int64_t> send(n), arrive(n),
      last(starts_ns.begin(), starts_ns.end());
  for (int64_t c = 0; c < chunks; ++c) {
    for (size_t k = 0; k < n; ++k) {
      send[k] = (c < active ? starts_ns[k] : finish[c - active][k]) +
                system.endpoint_delay_ns;
    }
    for (int64_t i = 1; i <= plan.messages; ++i) {
      for (size_t k = 0; k < n; ++k) {
        arrive[(k + 1) % n] = send[k] + message_ns[k];
      }
      const int64_t reduce = i <= plan.reduced_messages ? reduce_ns : 0;
      for (size_t k = 0; k < n; ++k) {
        send[k] =
            std::max(arrive[k], send[k]) + system.endpoint_delay_ns + reduce;
      }
    }
    for (size_t k = 0; k < n; ++k) {
      finish[c][k] = send[k];
      last[k] = std::max(last[k], send[k]);
    }
  }
  return last;
}

template <typename T>
T JsonOr(const nlohmann::json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || !(it->is_number() || it->is_string())) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    if (it->is_string()) return it->get<std::string>();
    return fallback;
  } else {
    if (it->is_number()) return it->get<T>();
    return fallback;
  }
}

}  // namespace

absl::StatusOr<AstraSystemConfig> ParseAstraSystemJson(
    absl::string_view text, absl::string_view origin) {
  absl::StatusOr<nlohmann::json> parsed = ParseConfigJson(text, origin);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": not a JSON object"));
  }
  AstraSystemConfig c;
  c.preferred_dataset_splits =
      JsonOr<int64_t>(j, "preferred-dataset-splits", 1);
  c.active_chunks_per_dimension =
      JsonOr<int64_t>(j, "active-chunks-per-dimension", 1);
  c.endpoint_delay_ns = JsonOr<int64_t>(j, "endpoint-delay", 10);
  c.local_mem_bw_gbps = JsonOr<double>(j, "local-mem-bw", 50);
  auto impl = j.find("all-reduce-implementation");
  if (impl != j.end() && impl->is_array() && !impl->empty() &&
      (*impl)[0].is_string()) {
    c.all_reduce_impl = (*impl)[0].get<std::string>();
  }
  if (c.preferred_dataset_splits < 1 || c.active_chunks_per_dimension < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin,
                     ": preferred-dataset-splits and "
                     "active-chunks-per-dimension must be >= 1"));
  }
  if (!(c.local_mem_bw_gbps > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": local-mem-bw must be > 0"));
  }
  if (c.all_reduce_impl != "ring") {
    return absl::UnimplementedError(absl::StrCat(
        origin, ": only the 'ring' implementation is modelled, got '",
        c.all_reduce_impl, "'"));
  }
  return c;
}

absl::StatusOr<AstraSystemConfig> LoadAstraSystemConfig(
    const std::string& path) {
  absl::StatusOr<std::string> text = ReadConfigFile(path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open system config"));
  }
  if (!text.ok()) return text.status();
  return ParseAstraSystemJson(*text, path);
}

int64_t AstraCollectiveNs(ChakraProtoMsg::CollectiveCommType type,
                          uint64_t bytes, int64_t ranks,
                          const Topology& topology,
                          const AstraSystemConfig& system,
                          bool congestion_aware) {
  if (ranks <= 1 || bytes == 0 || topology.dims.empty()) return 0;
  const ChunkSplit split =
      SplitChunks(type, bytes, system, SystemNpus(topology));
  const ChunkPlan plan = PlanChunk(type, split.chunk_bytes, ranks);
  if (plan.messages <= 0 || plan.message_bytes == 0) return 0;
  const TopologyDim& dim = topology.dims[0];
  const int hops = dim.kind == LinkKind::kSwitch ? 2 : 1;
  const int64_t message_ns = static_cast<int64_t>(
      hops * dim.latency_ns +
      static_cast<double>(plan.message_bytes) / topology.BytesPerNs(0));
  RingChunkSimulation sim(plan, dim, topology.BytesPerNs(0), message_ns, system,
                          congestion_aware);
  return sim.Run(split.chunks);
}

int64_t AstraMessageNs(const Topology& topology, int64_t src, int64_t dst,
                       uint64_t bytes) {
  if (src == dst || topology.dims.empty()) return 0;
  // MultiDimTopology::translate_address: dimension 0 varies fastest; the
  // message travels in the first dimension whose coordinates differ.
  int64_t a = src, b = dst;
  for (size_t d = 0; d < topology.dims.size(); ++d) {
    const TopologyDim& dim = topology.dims[d];
    const bool last = d + 1 == topology.dims.size() || dim.npus <= 0;
    const int64_t ca = last ? a : a % dim.npus, cb = last ? b : b % dim.npus;
    if (ca != cb) {
      return static_cast<int64_t>(
          static_cast<double>(DimHops(dim, ca, cb)) * dim.latency_ns +
          static_cast<double>(bytes) / topology.BytesPerNs(d));
    }
    if (last) break;
    a /= dim.npus;
    b /= dim.npus;
  }
  return 0;
}

std::vector<int64_t> AstraGroupMemberFinishNs(
    ChakraProtoMsg::CollectiveCommType type, uint64_t bytes,
    absl::Span<const int64_t> members, absl::Span<const int64_t> starts_ns,
    const Topology& topology, const AstraSystemConfig& system,
    bool congestion_aware) {
  const int64_t ranks = static_cast<int64_t>(members.size());
  if (congestion_aware || topology.dims.size() != 1 || ranks <= 1 ||
      bytes == 0 || starts_ns.size() != members.size()) {
    return {};
  }
  const ChunkSplit split =
      SplitChunks(type, bytes, system, SystemNpus(topology));
  const ChunkPlan plan = PlanChunk(type, split.chunk_bytes, ranks);
  if (plan.messages <= 0 || plan.message_bytes == 0) return {};
  std::vector<int64_t> message_ns(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    message_ns[k] =
        AstraMessageNs(topology, members[k], members[(k + 1) % members.size()],
                       plan.message_bytes);
  }
  if (std::all_of(message_ns.begin(), message_ns.end(),
                  [&](int64_t ns) { return ns == message_ns[0]; })) {
    return {};
  }
  return MemberRingFinishNs(plan, message_ns, starts_ns, system, split.chunks);
}

int64_t AstraGroupCollectiveNs(ChakraProtoMsg::CollectiveCommType type,
                               uint64_t bytes,
                               absl::Span<const int64_t> members,
                               const Topology& topology,
                               const AstraSystemConfig& system,
                               bool congestion_aware) {
  const std::vector<int64_t> starts(members.size(), 0);
  const std::vector<int64_t> finish = AstraGroupMemberFinishNs(
      type, bytes, members, starts, topology, system, congestion_aware);
  if (!finish.empty()) return *std::max_element(finish.begin(), finish.end());
  const int64_t ranks = static_cast<int64_t>(members.size());
  if (congestion_aware || topology.dims.size() != 1 || ranks <= 1 ||
      bytes == 0) {
    return AstraCollectiveNs(type, bytes, ranks, topology, system,
                             congestion_aware);
  }
  // Equal links: every member's view is the same (RingChunkSimulation).
  const ChunkSplit split =
      SplitChunks(type, bytes, system, SystemNpus(topology));
  const ChunkPlan plan = PlanChunk(type, split.chunk_bytes, ranks);
  if (plan.messages <= 0 || plan.message_bytes == 0) return 0;
  const int64_t message_ns =
      AstraMessageNs(topology, members[0], members[1], plan.message_bytes);
  RingChunkSimulation sim(plan, topology.dims[0], topology.BytesPerNs(0),
                          message_ns, system, false);
  return sim.Run(split.chunks);
}

}  // namespace et::sim
