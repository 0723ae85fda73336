// Load, check, run and write one replay; see replay_session.h.
#include "replay/replay_session.h"

#include <sys/stat.h>

#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/atomic_output_file.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "model/node_model.h"
#include "replay/calibration_writer.h"
#include "replay/cpu_backend.h"
#include "replay/replay_runner.h"
#include "replay/replay_trace_writer.h"
#include "replay/storage_plan.h"
#if ET_REPLAY_WITH_CUDA
#include "replay/cuda_backend.h"
#endif

namespace et::replay {
namespace {

constexpr double kGiB = 1073741824.0;

struct Loaded {
  NodeModel graph;
  ReplayPlan plan;
};

absl::StatusOr<Loaded> LoadAndPlan(const ReplayOptions& options, int rank,
                                   int ranks) {
  ASSIGN_OR_RETURN(std::string path, TracePathForRank(options, rank, ranks));
  ASSIGN_OR_RETURN(NodeModel graph, NodeModel::Load(path));
  PlanOptions plan_options;
  plan_options.host_time = options.host_time;
  plan_options.host_ops = options.host_ops;
  plan_options.host_gaps = options.host_gaps;
  auto plan = BuildReplayPlan(graph, plan_options);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        PrefixPath(path, plan.status().message()));
  }
  const int needed =
      options.world > 0 ? std::max(options.world, 1) : plan->RequiredRanks();
  if (needed > ranks) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: the trace needs %d ranks but the launch has %d "
                        "(run it with mpirun -np %d)",
                        path, needed, ranks, needed));
  }
  if (options.world > 0 && options.world != ranks) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "--world %d but the launch has %d ranks (mpirun -np %d)", options.world,
        ranks, options.world));
  }
  // One trace on --world N ranks is another job than the recorded one
  // unless the recording had N ranks: its step is no truth for the replay.
  const int64_t recorded_world =
      graph.info().measured_world_size > 0
          ? graph.info().measured_world_size
          : std::max<int64_t>(plan->recorded_world_size, 1);
  if (options.world > 0 && options.world != recorded_world) {
    plan->truth_withheld = absl::StrFormat(
        "no error reported: the trace's measured step is of %d %s, not the %d "
        "replayed (--world %d), so it is no truth for this replay",
        recorded_world, recorded_world == 1 ? "rank" : "ranks", options.world,
        options.world);
  }
  return Loaded{std::move(graph), *std::move(plan)};
}

absl::StatusOr<std::unique_ptr<DeviceBackend>> MakeBackend(
    const ReplayOptions& options, MpiWorld* world) {
  const HostTimer timer = HostTimer::Calibrate(options.host_wait);
  const uint64_t cap = static_cast<uint64_t>(options.memory_cap_gib * kGiB);
  if (options.device == "cpu") {
    return std::unique_ptr<DeviceBackend>(new CpuBackend(
        world, timer, cap > 0 ? cap : static_cast<uint64_t>(16 * kGiB)));
  }
  absl::string_view device = options.device;
  if (!absl::ConsumePrefix(&device, "cuda")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unknown device '%s' (cpu, cuda or cuda:N)", options.device));
  }
  int index = -1;
  if (absl::ConsumePrefix(&device, ":") && !absl::SimpleAtoi(device, &index)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unknown device '%s' (cpu, cuda or cuda:N)", options.device));
  }
#if ET_REPLAY_WITH_CUDA
  CudaBackendOptions cuda;
  cuda.device = index;
  cuda.memory_cap_bytes = cap;
  return CreateCudaBackend(world, timer, cuda);
#else
  return absl::UnimplementedError(
      "no CUDA device: this et-replay was built without the CUDA toolkit (use "
      "--device cpu)");
#endif
}

// "out.%d.json" -> this rank's file; "out.json" -> rank 0 only; "" -> none.
std::string OutputFor(const std::string& path, int rank) {
  if (path.empty()) return "";
  if (IsRankPattern(path)) return ExpandRankPattern(path, rank);
  return rank == 0 ? path : "";
}

absl::Status WriteOutputs(const ReplayOptions& options, const NodeModel& graph,
                          const ReplayPlan& plan, const ReplayTimings& timings,
                          const ReplayReport& report, int rank) {
  const std::vector<IterationTiming>& timed = timings.op_iterations();
  if (auto p = OutputFor(options.json_path, rank); !p.empty()) {
    RETURN_IF_ERROR(WriteFileAtomically(p, ReportJson(plan, report)));
  }
  if (auto p = OutputFor(options.trace_path, rank); !p.empty()) {
    RETURN_IF_ERROR(WriteReplayTrace(p, graph, plan, timed, rank));
  }
  if (auto p = OutputFor(options.calibration_path, rank); !p.empty()) {
    RETURN_IF_ERROR(WriteCalibration(p, graph, plan, timed, report.device));
  }
  return absl::OkStatus();
}

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

bool HaveCudaBackend() { return ET_REPLAY_WITH_CUDA != 0; }

absl::StatusOr<std::string> TracePathForRank(const ReplayOptions& options,
                                             int rank, int ranks) {
  if (IsRankPattern(options.trace)) {
    if (options.world > 0) {
      return absl::InvalidArgumentError(
          "--world runs one trace on every rank; pass a file, not a %d "
          "pattern");
    }
    // As for a directory: a rank file beyond the launch would be left out,
    // and its peers' collectives would run without it (a 2-rank trace
    // replayed as one rank without mpirun).
    if (PathExists(ExpandRankPattern(options.trace, ranks))) {
      int files = ranks + 1;
      while (files < kMaxRanks &&
             PathExists(ExpandRankPattern(options.trace, files))) {
        ++files;
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d per-rank traces for a launch of %d ranks (mpirun -np %d)",
          options.trace, files, ranks, files));
    }
    return ExpandRankPattern(options.trace, rank);
  }
  if (IsDirectory(options.trace)) {
    if (options.world > 0) {
      return absl::InvalidArgumentError(
          "--world runs one trace on every rank; pass a file, not a "
          "directory");
    }
    ASSIGN_OR_RETURN(std::vector<std::string> files,
                     ListRankFiles(options.trace, ".et"));
    // Every file, once: a rank left out would leave its peers' collectives
    // waiting for it.
    if (static_cast<int>(files.size()) != ranks) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d per-rank traces for a launch of %d ranks (mpirun -np %d)",
          options.trace, files.size(), ranks, files.size()));
    }
    return files[rank];
  }
  if (ranks > 1 && options.world == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: one trace for %d ranks: pass --world %d to run it "
                        "on every rank, or a "
                        "per-rank pattern such as 'trace.%%d.et'",
                        options.trace, ranks, ranks));
  }
  return options.trace;
}

absl::StatusOr<ReplayReport> RunReplaySession(const ReplayOptions& options,
                                              MpiWorld* world,
                                              std::string* text_report) {
  auto loaded = LoadAndPlan(options, world->rank(), world->size());
  RETURN_IF_ERROR(world->Agree(loaded.status()));
  ReplayPlan& plan = loaded->plan;
  RETURN_IF_ERROR(world->FormGroups(plan.groups));
  const StoragePlan storage = StoragePlan::Build(loaded->graph, plan);

  auto backend = MakeBackend(options, world);
  RETURN_IF_ERROR(world->Agree(backend.status()));
  RETURN_IF_ERROR(world->Agree((*backend)->Prepare(plan, storage)));
  if (plan.truth_withheld.empty()) {
    plan.truth_withheld = TruthWithheldForDevice(
        loaded->graph.info().device_name, (*backend)->DeviceName());
  }

  RunOptions run;
  run.warmup_iterations = options.warmup_iterations;
  run.timed_iterations = options.timed_iterations;
  run.separate_op_timing = options.separate_op_timing;
  auto timed_or = RunReplay(plan, backend->get(), *world, run);
  if (!timed_or.ok()) {
    // Not agreed: the other ranks may be blocked in a collective. Aborted tells
    // the caller to end the job. The message names the trace file: the
    // backend names only the node.
    const std::string path =
        TracePathForRank(options, world->rank(), world->size()).value_or("");
    if (world->size() == 1) {
      return absl::AbortedError(PrefixPath(path, timed_or.status().message()));
    }
    return absl::AbortedError(absl::StrFormat(
        "rank %d: %s: %s", world->rank(), path, timed_or.status().message()));
  }
  const ReplayTimings& timed = *timed_or;

  ReplayReport report = BuildReport(plan, timed, world->size());
  report.local_steps.ranks = {world->rank()};
  report.step =
      StepReportOfRanks(plan, world->AllGather(StepValues(report.local_steps)));
  report.input =
      TracePathForRank(options, world->rank(), world->size()).value_or("");
  report.device = (*backend)->Describe();
  report.rank = world->rank();
  report.warmup_iterations = options.warmup_iterations;
  // Agreed, like every error but a failed iteration: each rank's error is
  // then the same, and rank 0 alone prints it.
  RETURN_IF_ERROR(world->Agree(WriteOutputs(options, loaded->graph, plan, timed,
                                            report, world->rank())));
  if (text_report != nullptr)
    *text_report = ReportText(plan, report, options.top_ops);
  return report;
}

}  // namespace et::replay
