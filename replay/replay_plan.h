// The dependency engine shared by every backend: turns a Graph into a
// ReplayPlan, the ops in one deterministic issue order (Kahn's algorithm over
// data + ctrl deps, ties by when the recording issued each op, then id) with
// each op's queue and the cross-queue waits it needs.
//
// Queues: the model's (docs/node-model.md): device ops go to their recorded
// stream, host ops to their thread; communication without a stream gets its
// process group's own stream, as NCCL runs on a side stream per communicator.
// Within a queue, issue order is execution order, so a dependency on the same
// queue needs nothing; a dependency on another queue becomes a wait on that
// op's completion (a CUDA event on the GPU). Only the latest dependency per
// other queue is kept: the queue is in order, so it implies the earlier ones.
//
// Immutable once built; safe to read from several threads.
#ifndef REPLAY_REPLAY_PLAN_H_
#define REPLAY_REPLAY_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/string_pool.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "replay/replay_op.h"
#include "step/step_model.h"

namespace et::replay {

enum class ReplayQueueKind : uint8_t { kHostThread, kDeviceStream };

struct QueueInfo {
  ReplayQueueKind kind = ReplayQueueKind::kDeviceStream;
  int64_t recorded_id = 0;  // the recorded stream or tid; -1 = a comm stream
  // A comm stream's process group (ReplayPlan::groups; -1: every rank). As in
  // PyTorch, each group's collectives have their own stream, so those of
  // different groups can overlap.
  int comm_group = -1;
};

struct ReplayPlan {
  std::vector<ReplayOp> ops;  // issue order
  std::vector<QueueInfo> queues;
  std::vector<ProcessGroup>
      groups;        // from the graph metadata; CommSpec::group indexes it
  StringPool names;  // interned op names and shape keys

  int recorded_rank = -1;       // metadata `rank`, -1 if absent
  int recorded_world_size = 0;  // metadata `world_size`, else the largest group
  // A device op queued behind another on its stream starts this long after it
  // (the recording's front-end spacing, step-model.md); 0 unknown.
  int64_t gpu_queued_gap_ns = 0;
  StepModel steps;  // steps, measured steps, host-time model
  // Why the trace's measured step is no truth for this replay (one trace run
  // on --world N ranks it was not recorded on); empty: it is.
  std::string truth_withheld;
  HostTimeMode host_time = HostTimeMode::kUnprofiled;
  bool used_data_deps_only = false;  // ctrl deps were cyclic and were ignored
  std::vector<std::string> notes;    // what loading repaired or counted
  int64_t unknown_group_ops =
      0;  // collectives naming a pg absent from the metadata

  // Ops (indices into `ops`) that op i waits for on other queues.
  absl::Span<const uint32_t> waits(size_t i) const {
    return absl::MakeConstSpan(wait_targets.data() + wait_offsets[i],
                               wait_offsets[i + 1] - wait_offsets[i]);
  }
  // For each of waits(i): -1 to wait for the target's end, or a lag in ns to
  // wait only for the target's start + lag (a kernel waiting for the host op
  // that launched it, as far into it as the recording shows).
  absl::Span<const int64_t> wait_lags_ns(size_t i) const {
    return absl::MakeConstSpan(wait_lags.data() + wait_offsets[i],
                               wait_offsets[i + 1] - wait_offsets[i]);
  }
  std::vector<uint32_t> wait_offsets;  // ops.size() + 1
  std::vector<uint32_t> wait_targets;
  std::vector<int64_t> wait_lags;  // parallel to wait_targets

  absl::string_view name(const ReplayOp& op) const {
    return names.Get(op.name_id);
  }

  // Ranks a launch needs: recorded_world_size, or 1 + the largest rank named by
  // a group or a send/recv peer.
  int RequiredRanks() const;
  // The truth the replay's steps are compared with, for its host-time mode:
  // the trace's measured step, or none with the reason (truth_withheld).
  MeasuredStep Truth() const;
};

struct PlanOptions {
  // How long host ops and the gaps between them last (step/step_model.h).
  HostTimeMode host_time = HostTimeMode::kUnprofiled;
  bool host_ops = true;  // replay CPU ops' time (false: they only order)
  // Hold the time between consecutive ops of a host thread (time outside any
  // op: Python, the dispatcher); false: ops run back to back.
  bool host_gaps = true;
};

absl::StatusOr<ReplayPlan> BuildReplayPlan(const NodeModel& graph,
                                           const PlanOptions& options);

// Why a trace's measured step is no truth for a replay on another GPU than
// the one it was recorded on (names as CUDA gives them); "" when it is the
// same GPU, or either name is unknown.
std::string TruthWithheldForDevice(const std::string& recorded_gpu,
                                   const std::string& replay_gpu);

}  // namespace et::replay

#endif  // REPLAY_REPLAY_PLAN_H_
