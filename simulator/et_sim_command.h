// The et-sim command: its flags as the user gave them (EtSimFlags, filled by
// et_sim_main.cc from Abseil's flags), checked and turned into SimOptions, and
// the run they ask for: the nccl-tests table, a layout sweep, or one
// simulation with its report, timeline and per-rank job. Prints the report
// to stdout and its notes to stderr; an error is returned, never printed.
#ifndef SIMULATOR_ET_SIM_COMMAND_H_
#define SIMULATOR_ET_SIM_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace et::sim {

// Every et-sim flag, as given (unparsed strings where the flag is text), with
// et_sim_main.cc's defaults.
struct EtSimFlags {
  std::vector<std::string> positional;  // the program name, then the inputs
  std::optional<int64_t> world, ranks;
  std::string schedule = "stream";
  std::string compute = "recorded";
  std::string host_time = "unprofiled";
  std::string host_profile;
  double host_speed = 1.0;
  std::string measured_step_ms;
  std::string calibration;
  std::string device, device_file;
  double compute_scale = 1.0;
  std::vector<std::string> slow_rank;
  std::string comm = "nccl";
  std::string algorithm = "auto";
  bool nccl_efficiency = false;
  std::string topology, astra_system, groups;
  std::string layout, recorded_layout, sweep, chart, dp_sync;
  double bucket_mb = 25;
  double device_memory_gib = 0;
  bool no_memory = false;
  bool no_symmetry = false;
  bool json = false;
  std::string timeline;
  std::string html;  // --html FILE: the report as one HTML page
  int64_t top = 15;
  std::string write_ranks;
  // --nccl-tests OP: the NCCL model's table, no trace.
  std::string nccl_tests;
  std::string min_bytes = "8", max_bytes = "16G";
  std::vector<std::string> comm_from;
  // The cluster and NCCL's knobs.
  std::optional<int64_t> nodes, gpus_per_node;
  std::string nccl_algo, nccl_proto;
  std::optional<int64_t> nccl_min_channels, nccl_max_channels, gpus_per_process;
};

// Runs the command `flags` asks for. An error's message is the one line to
// print; its code says the exit status: kInvalidArgument for a mistake in the
// command line (the usage exit status), any other for one in the inputs or
// the run (exit 1).
absl::Status RunEtSim(const EtSimFlags& flags);

}  // namespace et::sim

#endif  // SIMULATOR_ET_SIM_COMMAND_H_
