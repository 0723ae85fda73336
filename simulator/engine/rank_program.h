// A graph compiled for simulation: per node its kind, the resource (CPU thread,
// GPU stream or communication channel) it occupies, its compute cost, its
// communication parameters, and dependency counts with CSR user lists. Columns
// indexed by the graph's NodeIndex (ascending id), so "lowest ready index" is
// "lowest ready id". Immutable after Compile(); shared by every rank of a
// symmetry class.
#ifndef SIMULATOR_ENGINE_RANK_PROGRAM_H_
#define SIMULATOR_ENGINE_RANK_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "simulator/platform/compute_cost_model.h"
#include "simulator/platform/sim_options.h"
#include "step/step_model.h"

namespace et::sim {

enum class SimOpKind : uint8_t { kNoop, kCompute, kCollective, kSend, kRecv };

// Process groups of one program; index 0 is the implicit "all ranks" group.
struct ProgramGroups {
  std::vector<ProcessGroup> groups;  // [0] = all ranks
  int32_t Find(const std::string& name) const;
};

struct RankProgram {
  const NodeModel* graph = nullptr;  // not owned
  std::vector<SimOpKind> kind;
  std::vector<uint32_t> resource;   // dense per program
  std::vector<int64_t> compute_ns;  // compute ops (before slow-down)
  // Host ops: time their thread spends before them (Python, dispatcher).
  std::vector<int64_t> gap_ns;
  // Host ops: the part of gap_ns spent waiting for a host collective they
  // consume (recorded host time only; StepModel::HostCollectiveWaitNs).
  std::vector<int64_t> collective_wait_ns;
  // A GPU op queued behind another on its stream starts this long after it
  // ends (the front end's spacing, measured in the recording; 0 unknown).
  int64_t gpu_queued_gap_ns = 0;
  // Comm ops' recorded durations (0 = none): a GPU collective's kernel, a
  // host one's backend work record (gloo's worker thread).
  std::vector<int64_t> recorded_ns;
  std::vector<ChakraProtoMsg::CollectiveCommType> comm_type;
  std::vector<uint64_t> comm_bytes;
  std::vector<int32_t> group;          // index into groups.groups
  std::vector<int32_t> peer;           // send: dst, recv: src; -1 otherwise
  std::vector<uint32_t> dep_count;     // deps followed
  std::vector<uint32_t> user_offsets;  // CSR over users followed
  std::vector<uint32_t> users;
  // Users released when a host-side collective is issued rather than when it
  // completes: the thread's next ops in issue order (an async c10d call
  // returns at once; only waits and tensor consumers block). CSR.
  std::vector<uint32_t> issue_user_offsets;
  std::vector<uint32_t> issue_users;
  std::vector<std::string>
      resource_names;  // "cpu tid 1", "gpu stream 7", "comm pg 0"
  std::vector<bool> resource_is_compute;
  std::vector<bool> resource_is_host;  // a CPU thread (else a stream/channel)
  ProgramGroups groups;
  StepModel steps;  // steps, measured step times, host-time model
  HostTimeMode host_time = HostTimeMode::kUnprofiled;
  // --schedule astra with recorded compute: ASTRA-sim's replay costs (every
  // node its recorded duration in whole us, no gaps, nodes outside the
  // steps run), not the host-time model.
  bool astra_replay = false;
  // --schedule astra: the rank's one communication slot (collectives and
  // sends) and its receives, which ASTRA-sim (518bd51, HardwareResource::
  // is_available) issues at any time, while nothing else issues on the slot
  // while one is in flight; -1 where the program has none.
  int32_t astra_comm_resource = -1, astra_recv_resource = -1;
  // The step the prediction is compared with: the trace's for host_time, or
  // --measured-step-ms; none when GPU ops were scaled to another device.
  MeasuredStep measured;
  // The GPU that --device scaled the recorded GPU ops to; "" when none.
  std::string device_target;
  int64_t recorded_world_size = 0;  // from metadata (0 = unknown)
  bool ctrl_deps_ignored = false;   // ctrl deps were cyclic: data deps only
  // What was repaired and what the cost models did, for the report.
  std::vector<std::string> notes;
};

// Compiles `graph` (which must outlive the program) under `options`.
absl::StatusOr<RankProgram> CompileRankProgram(const NodeModel& graph,
                                               const SimOptions& options,
                                               const ComputeCostModel& compute);

}  // namespace et::sim

#endif  // SIMULATOR_ENGINE_RANK_PROGRAM_H_
