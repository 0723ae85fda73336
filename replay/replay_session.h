// One et-replay run on this rank, from options to outputs: load this rank's
// trace, build the plan, check that the launch can run it (ranks, process
// groups, device), prepare the backend, run warm-up and timed iterations, and
// write the report, the Chrome trace and the calibration file. Every check that
// can fail on one rank only is agreed across ranks (MpiWorld::Agree), so that
// all ranks stop with the same clear error.
#ifndef REPLAY_REPLAY_SESSION_H_
#define REPLAY_REPLAY_SESSION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "replay/host_timer.h"
#include "replay/mpi_world.h"
#include "replay/replay_report.h"

namespace et::replay {

struct ReplayOptions {
  std::string trace;           // a .et path, a per-rank pattern with %d, or a
                               // directory of per-rank .et (base/rank_files.h)
  std::string device = "cpu";  // "cpu", "cuda" (local rank's GPU) or "cuda:N"
  int world = 0;               // > 0: run the one trace on every rank, N ranks
  int warmup_iterations = 1;
  int timed_iterations = 3;
  HostTimeMode host_time = HostTimeMode::kUnprofiled;  // PlanOptions
  bool host_ops = true;   // replay CPU ops' recorded time
  bool host_gaps = true;  // and the recorded time between them (PlanOptions)
  HostWaitMode host_wait = HostWaitMode::kHybrid;
  // Time the step without per-op timing where that timing stretches the run
  // (a GPU), and the ops in one iteration more (RunOptions).
  bool separate_op_timing = true;
  double memory_cap_gib =
      0;  // 0: the device's free memory (cuda) / 16 GiB (cpu)
  // Outputs; a path with %d is expanded per rank, one without is written by
  // rank 0 only.
  std::string json_path;
  std::string trace_path;
  std::string calibration_path;
  int top_ops = 10;
};

// Whether this build has the CUDA backend.
bool HaveCudaBackend();

// The trace this rank replays, or an error when the options and the launch
// disagree.
absl::StatusOr<std::string> TracePathForRank(const ReplayOptions& options,
                                             int rank, int ranks);

// Runs the replay on this rank. Errors are already agreed across ranks when
// they come from the set-up; an error during the iterations is this rank's own.
absl::StatusOr<ReplayReport> RunReplaySession(const ReplayOptions& options,
                                              MpiWorld* world,
                                              std::string* text_report);

}  // namespace et::replay

#endif  // REPLAY_REPLAY_SESSION_H_
