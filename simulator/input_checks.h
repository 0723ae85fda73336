// Checks et-sim runs on its inputs before simulating, for mistakes that would
// otherwise give a plausible number without a word: a --ranks smaller than the
// recorded job, a --groups table whose names no collective uses, a graph with
// no recorded durations. One streaming pass over the first rank's file (no
// graph is built); stateless functions, safe from any thread.
#ifndef SIMULATOR_INPUT_CHECKS_H_
#define SIMULATOR_INPUT_CHECKS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "simulator/platform/sim_options.h"

namespace et::sim {

// What the checks need to know about one rank's .et.
struct InputFacts {
  std::string path;
  int64_t recorded_world_size = 0;  // world_size in the metadata; 0: unknown
  std::set<std::string> pg_names;   // named by its communication nodes
  int64_t comm_nodes = 0;
  int64_t comm_nodes_without_group = 0;  // no pg_name: they span all ranks
  int64_t compute_nodes = 0;
  int64_t compute_nodes_timed = 0;  // with duration_ns or duration_micros > 0
  int64_t device_nodes = 0;  // compute nodes on a GPU stream, not a thread
  bool gpu_job = false;      // TraceInfo::gpu_job
};

InputFacts FactsOf(const NodeModel& model, const std::string& path);
// FactsOf a file loaded on its own.
absl::StatusOr<InputFacts> ScanRankFile(const std::string& path);

// A pattern input simulated on fewer ranks than the traces hold leaves the
// other ranks' collectives unmatched: an error naming both counts, unless a
// --groups table describes the smaller job (`groups_given`).
absl::Status CheckRankCount(const std::string& pattern, int64_t ranks,
                            const InputFacts& rank0, bool groups_given);

// --groups applies by the pg_name of each collective; a table sharing no name
// with the trace would change nothing, so that is an error saying why.
absl::Status CheckGroupsApply(const std::vector<ProcessGroup>& groups,
                              const std::string& groups_path,
                              const InputFacts& rank0);

// A note for stderr when --groups applies to some collectives but others name
// no group (e.g. NCCL kernels linked without their c10d call): those still
// span every rank. Empty when there is nothing to say.
std::string GroupsNote(const std::vector<ProcessGroup>& groups,
                       const InputFacts& rank0);

// A note for stderr when compute nodes have no recorded duration under the
// recorded compute model: which model stands in. Empty when all are timed.
// `device`: the GPU preset the roofline model used (Simulation::
// compute_device).
std::string DurationsNote(const InputFacts& rank0, const SimOptions& options,
                          const std::string& device);

}  // namespace et::sim

#endif  // SIMULATOR_INPUT_CHECKS_H_
