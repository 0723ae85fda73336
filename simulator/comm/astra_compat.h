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

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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

}  // namespace et::sim

#endif  // SIMULATOR_COMM_ASTRA_COMPAT_H_
