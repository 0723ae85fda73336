// ASTRA-sim analytical backend, reproduced for ring collectives.
//
// What ASTRA-sim does for one collective (native "ring" implementation):
// - the buffer is split into `preferred-dataset-splits` chunks;
// `active-chunks-per-
//   dimension` of them run at once, the next starting when one finishes;
// - a chunk is a series of messages to the ring neighbour: all-reduce 2(n-1)
// messages of
//   chunk/n bytes, reduce-scatter n-1 of chunk/n, all-gather n-1 of chunk,
//   all-to-all n(n-1)/2 of chunk/n;
// - every message hand-off between NPU and memory costs `endpoint-delay` ns
// (once at the
//   start, then after each received message); a received message that is
//   reduced (reduce-scatter, and the first n-1 of an all-reduce) adds 3
//   truncated bytes/local-mem-bw terms (two reads, one write);
// - congestion unaware: a message takes trunc(hops * latency + bytes / bw),
// hops = 1 on
//   a ring, 2 through a switch; congestion aware: each link (one for a ring,
//   NPU->switch and switch->NPU for a switch) is a FIFO that is busy for
//   trunc(bytes / bw) and delivers after trunc(latency + bytes / bw).
// Every rank runs the same chunk schedule, and each link carries one rank's
// traffic, so one rank's view (its outgoing links) is the whole simulation.
#include "simulator/comm/astra_compat.h"

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
  RingChunkSimulation(const ChunkPlan& plan, const TopologyDim& dim,
                      double bytes_per_ns, const AstraSystemConfig& system,
                      bool aware)
      : plan_(plan), system_(system), aware_(aware) {
    const double serialization =
        static_cast<double>(plan.message_bytes) / bytes_per_ns;
    const int hops = dim.kind == LinkKind::kSwitch ? 2 : 1;
    unaware_message_ns_ =
        static_cast<int64_t>(hops * dim.latency_ns + serialization);
    link_busy_ns_ = static_cast<int64_t>(serialization);
    link_deliver_ns_ = static_cast<int64_t>(dim.latency_ns + serialization);
    links_ = aware && dim.kind == LinkKind::kSwitch ? 2 : 1;
    // PacketBundle: three truncated size / (local-mem-bw * 1e9 B/s) terms.
    const double mem_bytes_per_ns = system.local_mem_bw_gbps;
    reduce_ns_ =
        3 * static_cast<int64_t>(static_cast<double>(plan.message_bytes) /
                                 mem_bytes_per_ns);
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
  const uint64_t chunk_bytes =
      bytes / static_cast<uint64_t>(system.preferred_dataset_splits);
  const ChunkPlan plan = PlanChunk(type, chunk_bytes, ranks);
  if (plan.messages <= 0 || plan.message_bytes == 0) return 0;
  RingChunkSimulation sim(plan, topology.dims[0], topology.BytesPerNs(0),
                          system, congestion_aware);
  return sim.Run(system.preferred_dataset_splits);
}

}  // namespace et::sim
