// et-replay: re-executes a Chakra .et graph on this machine (CPU + MPI, or CUDA
// GPUs) and reports the measured times against the recorded ones. Flags are
// parsed here only, into ReplayOptions; the work is in replay_session.cc.
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "replay/replay_session.h"

namespace {

constexpr char kUsage[] =
    "usage: et-replay TRACE [flags]\n"
    "  TRACE                 a .et file, or a per-rank pattern 'out.%d.et'\n"
    "                        (mpirun -np N et-replay 'out.%d.et' ...)\n"
    "  --device D            cpu (host timers + MPI), cuda (the rank's GPU), "
    "cuda:N\n"
    "                        [cpu]\n"
    "  --world N             run the one TRACE on every one of N ranks\n"
    "  --warmup N            warm-up iterations [1]\n"
    "  --iters N             timed iterations [3]\n"
    "  --host-ops on|off     replay CPU ops' recorded time [on]\n"
    "  --host-wait MODE      hybrid|spin|sleep: how host time is held "
    "[hybrid]\n"
    "  --memory-cap-gib X    device memory the replay may use [free memory]\n"
    "  --json PATH           the report as JSON (%d: one per rank; else rank "
    "0)\n"
    "  --trace PATH          Chrome/Perfetto trace of the replay (%d as "
    "above)\n"
    "  --calibration PATH    measured times by op and shapes for et-sim (%d as "
    "above)\n"
    "  --top N               ops listed in the text report [10]\n"
    "  --all-ranks           print the text report of every rank, not only "
    "rank 0\n";

struct Flags {
  et::replay::ReplayOptions options;
  bool all_ranks = false;
  bool help = false;
};

bool ParseInt(const char* text, int min, int* out) {
  return absl::SimpleAtoi(text, out) && *out >= min;
}

// Returns an error message, or "" on success.
std::string ParseFlags(int argc, char** argv, Flags* flags) {
  et::replay::ReplayOptions& o = flags->options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char** out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    const char* v = nullptr;
    if (arg == "-h" || arg == "--help") {
      flags->help = true;
    } else if (arg == "--all-ranks") {
      flags->all_ranks = true;
    } else if (!absl::StartsWith(arg, "--")) {
      if (!o.trace.empty())
        return absl::StrFormat("unexpected argument '%s'", arg);
      o.trace = arg;
    } else if (!value(&v)) {
      return absl::StrFormat("%s needs a value", arg);
    } else if (arg == "--device") {
      o.device = v;
    } else if (arg == "--world") {
      if (!ParseInt(v, 1, &o.world)) return "--world needs a positive integer";
    } else if (arg == "--warmup") {
      if (!ParseInt(v, 0, &o.warmup_iterations))
        return "--warmup needs an integer >= 0";
    } else if (arg == "--iters") {
      if (!ParseInt(v, 1, &o.timed_iterations))
        return "--iters needs an integer >= 1";
    } else if (arg == "--host-ops") {
      if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
        return "--host-ops is on or off";
      o.host_ops = strcmp(v, "on") == 0;
    } else if (arg == "--host-wait") {
      if (!et::replay::ParseHostWaitMode(v, &o.host_wait)) {
        return "--host-wait is hybrid, spin or sleep";
      }
    } else if (arg == "--memory-cap-gib") {
      if (!absl::SimpleAtod(v, &o.memory_cap_gib) || o.memory_cap_gib <= 0) {
        return "--memory-cap-gib needs a positive number";
      }
    } else if (arg == "--json") {
      o.json_path = v;
    } else if (arg == "--trace") {
      o.trace_path = v;
    } else if (arg == "--calibration") {
      o.calibration_path = v;
    } else if (arg == "--top") {
      if (!ParseInt(v, 0, &o.top_ops)) return "--top needs an integer >= 0";
    } else {
      return absl::StrFormat("unknown flag '%s'", arg);
    }
  }
  if (!flags->help && o.trace.empty()) return "no trace given";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  const std::string flag_error = ParseFlags(argc, argv, &flags);
  if (flags.help) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (!flag_error.empty()) {
    fprintf(stderr, "et-replay: error: %s\n%s", flag_error.c_str(), kUsage);
    return 2;
  }
  auto world = et::replay::MpiWorld::Init(&argc, &argv);
  if (!world.ok()) {
    fprintf(stderr, "et-replay: error: %s\n",
            std::string(world.status().message()).c_str());
    return 1;
  }
  const int rank = (*world)->rank();
  std::string text;
  auto report =
      et::replay::RunReplaySession(flags.options, world->get(), &text);
  if (!report.ok()) {
    fprintf(stderr, "et-replay: error: %s\n",
            std::string(report.status().message()).c_str());
    fflush(stderr);
    // An error in the middle of the iterations is this rank's alone: the others
    // may be waiting in a collective for it, so end the whole job rather than
    // hang.
    if ((*world)->size() > 1 && absl::IsAborted(report.status())) {
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 1;
  }
  if (rank == 0 || flags.all_ranks) fputs(text.c_str(), stdout);
  return 0;
}
