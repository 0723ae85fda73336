// et-replay: re-executes a Chakra .et graph on this machine (CPU + MPI, or CUDA
// GPUs) and reports the measured times against the recorded ones. Flags are
// parsed here only (Abseil flags into ReplayOptions); the work is in
// replay_session.cc.
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "base/text_escape.h"
#include "cli/cli_args.h"
#include "cli/flag_use.h"
#include "replay/replay_session.h"

ABSL_FLAG(std::string, device, "cpu",
          "cpu (host timers + MPI), cuda (the rank's local GPU) or cuda:N");
ABSL_FLAG(std::optional<int>, world, std::nullopt,
          "run the one TRACE on every one of N ranks");
ABSL_FLAG(int, warmup, 1, "warm-up iterations");
ABSL_FLAG(int, iters, 3, "timed iterations");
ABSL_FLAG(std::string, host_time, "unprofiled",
          "host ops and gaps: unprofiled (the program without a profiler; "
          "compared with the unprofiled step) or recorded (as recorded, "
          "profiler included; compared with the profiled step)");
ABSL_FLAG(std::string, host_ops, "on", "on|off: replay CPU ops' time");
ABSL_FLAG(std::string, host_gaps, "on",
          "on|off: hold the recorded time between a host thread's ops");
ABSL_FLAG(std::string, host_wait, "hybrid",
          "hybrid|spin|sleep: how host time is held");
ABSL_FLAG(std::string, op_timing, "separate",
          "separate|in-step: on a GPU, time each op in one iteration of its "
          "own (separate: the step is timed without the events around each "
          "kernel, which add their own time) or in every timed iteration");
ABSL_FLAG(double, memory_cap_gib, 0,
          "device memory the replay may use (0: free memory)");
ABSL_FLAG(std::string, json, "",
          "the report as JSON (%d: one per rank; else rank 0)");
ABSL_FLAG(std::string, trace, "",
          "Chrome/Perfetto trace of the replay (%d as above)");
ABSL_FLAG(std::string, calibration, "",
          "measured times by op and shapes for et-sim (%d as above)");
ABSL_FLAG(int, top, 10, "ops listed in the text report");
ABSL_FLAG(bool, all_ranks, false,
          "print the text report of every rank, not only rank 0");

namespace {

struct Flags {
  et::replay::ReplayOptions options;
  bool all_ranks = false;
};

absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& positional) {
  Flags flags;
  et::replay::ReplayOptions& o = flags.options;
  if (positional.size() != 2) {
    return absl::InvalidArgumentError(
        positional.size() < 2
            ? "no trace given (try --help)"
            : absl::StrCat("unexpected argument '", positional[2], "'",
                           et::RanksAsOneInputHint(std::vector<std::string>(
                               positional.begin() + 1, positional.end()))));
  }
  o.trace = positional[1];
  o.device = absl::GetFlag(FLAGS_device);
  o.world = absl::GetFlag(FLAGS_world).value_or(0);
  o.warmup_iterations = absl::GetFlag(FLAGS_warmup);
  o.timed_iterations = absl::GetFlag(FLAGS_iters);
  // Unset means "one trace per rank"; an explicit 0 or less is a mistake.
  if (o.world < 0 || o.world > et::kMaxRanks ||
      (o.world == 0 && absl::GetFlag(FLAGS_world).has_value())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--world %d: needs an integer in [1, %d]", o.world, et::kMaxRanks));
  }
  if (o.warmup_iterations < 0)
    return absl::InvalidArgumentError("--warmup needs an integer >= 0");
  if (o.timed_iterations < 1)
    return absl::InvalidArgumentError("--iters needs an integer >= 1");
  ASSIGN_OR_RETURN(o.host_time,
                   et::ParseHostTimeMode(absl::GetFlag(FLAGS_host_time)));
  const std::string host_ops = absl::GetFlag(FLAGS_host_ops);
  if (host_ops != "on" && host_ops != "off") {
    return absl::InvalidArgumentError("--host-ops is on or off");
  }
  o.host_ops = host_ops == "on";
  const std::string host_gaps = absl::GetFlag(FLAGS_host_gaps);
  if (host_gaps != "on" && host_gaps != "off") {
    return absl::InvalidArgumentError("--host-gaps is on or off");
  }
  o.host_gaps = host_gaps == "on";
  if (!et::replay::ParseHostWaitMode(absl::GetFlag(FLAGS_host_wait),
                                     &o.host_wait)) {
    return absl::InvalidArgumentError("--host-wait is hybrid, spin or sleep");
  }
  const std::string op_timing = absl::GetFlag(FLAGS_op_timing);
  if (op_timing != "separate" && op_timing != "in-step") {
    return absl::InvalidArgumentError("--op-timing is separate or in-step");
  }
  o.separate_op_timing = op_timing == "separate";
  o.memory_cap_gib = absl::GetFlag(FLAGS_memory_cap_gib);
  if (o.memory_cap_gib < 0) {
    return absl::InvalidArgumentError(
        "--memory-cap-gib needs a positive number");
  }
  o.json_path = absl::GetFlag(FLAGS_json);
  o.trace_path = absl::GetFlag(FLAGS_trace);
  o.calibration_path = absl::GetFlag(FLAGS_calibration);
  o.top_ops = absl::GetFlag(FLAGS_top);
  if (o.top_ops < 0)
    return absl::InvalidArgumentError("--top needs an integer >= 0");
  flags.all_ranks = absl::GetFlag(FLAGS_all_ranks);
  // The GPU backend's op timing: refused on the CPU, not ignored
  // (cli/flag_use.h).
  const et::FlagUse uses[] = {
      {"op_timing", o.device != "cpu", "--device cuda (the GPU ops it times)"},
  };
  et::RefuseUnusedFlags("et-replay", uses);
  return flags;
}

}  // namespace

int main(int argc, char** argv) {
  auto flags = ParseFlags(et::ParseToolCommandLine(
      argc, argv,
      "re-executes a Chakra graph on this machine\n"
      "  et-replay out.et --device cuda:0\n"
      "  mpirun -np 8 et-replay 'out.%d.et' --device cuda\n"
      "  mpirun -np 4 et-replay 'ddp.%d.et' --device cpu"));
  if (!flags.ok()) {
    fprintf(stderr, "et-replay: error: %s\n",
            et::EscapeForPrint(flags.status().message()).c_str());
    return 2;
  }
  auto world = et::replay::MpiWorld::Init(&argc, &argv);
  if (!world.ok()) {
    fprintf(stderr, "et-replay: error: %s\n",
            et::EscapeForPrint(world.status().message()).c_str());
    return 1;
  }
  const int rank = (*world)->rank();
  // Outputs are checked before the work (base/path.h); every rank sees the
  // same paths, so rank 0 alone says what is wrong.
  for (auto [flag, path] :
       {std::make_pair("--json", flags->options.json_path),
        std::make_pair("--trace", flags->options.trace_path),
        std::make_pair("--calibration", flags->options.calibration_path)}) {
    if (absl::Status s = et::CheckOutputPath(flag, path); !s.ok()) {
      if (rank == 0)
        fprintf(stderr, "et-replay: error: %s\n",
                std::string(s.message()).c_str());
      return 1;
    }
  }
  std::string text;
  auto report =
      et::replay::RunReplaySession(flags->options, world->get(), &text);
  if (!report.ok()) {
    // Every error but a failed iteration (Aborted: this rank's own) is agreed
    // by all ranks (MpiWorld::Agree): the same line, printed once.
    const bool own = absl::IsAborted(report.status());
    if (own || rank == 0) {
      fprintf(stderr, "et-replay: error: %s\n",
              et::EscapeForPrint(report.status().message()).c_str());
    }
    fflush(stderr);
    // An error in the middle of the iterations is this rank's alone: the others
    // may be waiting in a collective for it, so end the whole job rather than
    // hang.
    if ((*world)->size() > 1 && absl::IsAborted(report.status())) {
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 1;
  }
  if (rank == 0 || flags->all_ranks) fputs(text.c_str(), stdout);
  return 0;
}
