// ASTRA-sim compatibility: reads ASTRA-sim's system JSON and reproduces its
// analytical network backend (congestion unaware and aware) for native ring
// collectives, so that et-sim's finish times match ASTRA-sim's on its own
// microbenchmarks (the oracle in tests/data/astra-sim/expected_results.csv).
// The model, reverse-engineered from the published numbers and ASTRA-sim's
// sources (not copied), is in docs/et-sim.md. Pure functions; thread-safe.
#ifndef SIMULATOR_COMM_ASTRA_COMPAT_H_
#define SIMULATOR_COMM_ASTRA_COMPAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/et_def.pb.h"
#include "simulator/platform/topology.h"

namespace et::sim {

// The fields of an ASTRA-sim system JSON that change collective times.
struct AstraSystemConfig {
  int64_t preferred_dataset_splits = 1;     // chunks per collective
  int64_t active_chunks_per_dimension = 1;  // chunks in flight at once
  int64_t endpoint_delay_ns = 10;  // NPU <-> memory hand-off per message
  double local_mem_bw_gbps = 50;   // GB/s (GB = 1e9 here, as ASTRA uses it)
  std::string all_reduce_impl = "ring";  // first dimension's implementation
};

absl::StatusOr<AstraSystemConfig> ParseAstraSystemJson(
    absl::string_view text, absl::string_view origin);
absl::StatusOr<AstraSystemConfig> LoadAstraSystemConfig(
    const std::string& path);

// Finish time in ns of one collective of `bytes` (the trace's comm_size) over
// `ranks` ranks on `topology` (dimension 0 is used; ASTRA-sim units), simulated
// chunk by chunk. Cost is O(steps x chunks), independent of how many ranks
// share the ring.
int64_t AstraCollectiveNs(ChakraProtoMsg::CollectiveCommType type,
                          uint64_t bytes, int64_t ranks,
                          const Topology& topology,
                          const AstraSystemConfig& system,
                          bool congestion_aware);

// What ASTRA-sim's congestion-unaware network charges one message of `bytes`
// from NPU `src` to NPU `dst` (astra-network-analytical 599a047,
// BasicTopology::send, through MultiDimTopology::send on several
// dimensions): in the first dimension where the two NPUs' addresses differ
// (dimension 0 varies fastest), trunc(hops x latency + bytes / bandwidth).
// Hops on a ring are the shorter way round (its rings are bidirectional), so
// a message between NPUs k apart pays k latencies; 2 through a switch, 1 on
// a fully connected dimension. 0 when src == dst or the topology is empty.
int64_t AstraMessageNs(const Topology& topology, int64_t src, int64_t dst,
                       uint64_t bytes);

// AstraCollectiveNs on the ring ASTRA-sim (518bd51) builds for a comm group
// smaller than the world: `members` (NPU ids in the comm-group file's order,
// which RingTopology links in that order, the last to the first) each send
// to the next, every message priced by AstraMessageNs between the two NPUs.
// A group whose neighbours are not all equally far apart (a stride-s group's
// last member wraps to its first: (n - 1) s hops, or a 1-D ring's far side)
// runs member by member (MemberRingNs): each member's step waits for its
// predecessor's message, so the slow link delays everyone. Returns the
// slowest member's finish. The congestion-aware backend and multi-dimension
// topologies keep AstraCollectiveNs (dimension 0, one hop per message).
// The same ring when member k issues the collective at starts_ns[k] (ASTRA-sim
// has no rendezvous: a member starts when it issues, its first message waits
// for the next member's receive): each member's finish, on the same clock.
// Empty when the model is AstraCollectiveNs's (equal links, the congestion-
// aware backend, several dimensions): one time then stands for every member.
std::vector<int64_t> AstraGroupMemberFinishNs(
    ChakraProtoMsg::CollectiveCommType type, uint64_t bytes,
    absl::Span<const int64_t> members, absl::Span<const int64_t> starts_ns,
    const Topology& topology, const AstraSystemConfig& system,
    bool congestion_aware);

int64_t AstraGroupCollectiveNs(ChakraProtoMsg::CollectiveCommType type,
                               uint64_t bytes,
                               absl::Span<const int64_t> members,
                               const Topology& topology,
                               const AstraSystemConfig& system,
                               bool congestion_aware);

}  // namespace et::sim

#endif  // SIMULATOR_COMM_ASTRA_COMPAT_H_
