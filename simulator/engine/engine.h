// The discrete-event engine: runs rank classes (ranks with identical programs,
// simulated once) over their resources, rendezvousing collectives across
// classes and pairing sends with receives. Deterministic: events ordered by
// (time, priority, sequence), ready ops issued lowest id first per resource. A
// run that stops with ops left (a collective some member never issues) returns
// a deadlock error naming the ranks and nodes. Not thread-safe; one Engine per
// run.
#ifndef SIMULATOR_ENGINE_ENGINE_H_
#define SIMULATOR_ENGINE_ENGINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "simulator/comm/astra_compat.h"
#include "simulator/engine/rank_program.h"
#include "simulator/platform/platform.h"
#include "simulator/platform/sim_options.h"
#include "simulator/platform/topology.h"

namespace et::sim {

// Ranks that run the same program at the same speed.
struct RankClass {
  const RankProgram* program = nullptr;  // not owned
  std::vector<int64_t> ranks;            // ascending
  double slowdown = 1.0;                 // compute time multiplier
};

// What happened to every node of one class's representative rank.
struct ClassTimeline {
  std::vector<int64_t> issue_ns;   // became the head of its resource
  std::vector<int64_t> start_ns;   // collectives: all members issued
  std::vector<int64_t> finish_ns;  // -1 = never ran
  std::vector<int32_t>
      critical_pred;  // the node whose finish let this one start, or -1
};

// One executed collective instance (per-collective table).
struct CollectiveRun {
  std::string group;  // pg name, "<all>" when none
  ChakraProtoMsg::CollectiveCommType type = ChakraProtoMsg::ALL_REDUCE;
  bool point_to_point = false;
  bool synthesized = false;  // added by et-sim (--dp-sync), not recorded
  uint64_t bytes = 0;
  int64_t group_size = 0;
  // Members on one node as placed (0: the group fills nodes in order); the
  // NCCL model costs the group on those links (PlatformForGroup).
  int64_t ranks_per_node = 0;
  int64_t start_ns = 0;
  int64_t cost_ns = 0;
  int64_t max_wait_ns =
      0;  // first arrival to start: time lost to the slowest member
};

struct SimResult {
  std::vector<ClassTimeline> timelines;  // by class
  std::vector<CollectiveRun> collectives;
  int64_t events = 0;
};

struct CommEnvironment {
  Topology topology;                       // fitted to the world size
  Platform platform;                       // for the NCCL model
  std::optional<AstraSystemConfig> astra;  // for the astra comm models
};

absl::StatusOr<SimResult> RunSimulation(const std::vector<RankClass>& classes,
                                        int64_t world_size,
                                        const SimOptions& options,
                                        const CommEnvironment& comm);

}  // namespace et::sim

#endif  // SIMULATOR_ENGINE_ENGINE_H_
