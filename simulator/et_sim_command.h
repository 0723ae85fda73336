// The et-sim command: its flags as the user gave them (EtSimFlags, filled by
// et_sim_main.cc from Abseil's flags), checked and turned into SimOptions, and
// the run they ask for: the nccl-tests table, a layout sweep, or one
// simulation with its report, timeline and per-rank job. Prints the report
// to stdout and its notes to stderr, or hands them and the results to a
// caller that reads them (EtSimOutput: the Python module); an error is
// returned, never printed. The flags that mean something only with another
// are listed here once (EtSimFlagUses), for et_sim_main.cc and Python alike.
#ifndef SIMULATOR_ET_SIM_COMMAND_H_
#define SIMULATOR_ET_SIM_COMMAND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "simulator/calibration/nccl_tests_table.h"
#include "simulator/report/report.h"
#include "simulator/report/sweep_report.h"
#include "simulator/simulation.h"

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
  std::string search;  // --search world=N
  double bucket_mb = 25;
  int64_t micro_batches = 1;       // --layout pp=P
  bool sequence_parallel = false;  // --layout tp=T
  std::string pp_schedule = "1f1b";
  std::string pp_split;  // --pp-split a,b,...: blocks per stage
  double device_memory_gib = 0;
  bool no_memory = false;
  bool no_symmetry = false;
  bool json = false;
  std::string timeline;
  std::string html;     // --html FILE: the report as one HTML page
  std::string compare;  // --compare OTHER: another input, the same flags
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

// The flags refused when given an empty value (`--sweep ''`): the run they
// asked for would silently not happen. Spelled as users type them.
inline constexpr const char* kEtSimNonEmptyFlags[] = {
    "sweep",    "layout", "recorded-layout", "chart", "timeline", "write-ranks",
    "topology", "html",   "compare",         "search"};

// A flag that means something only with another (cli/flag_use.h's FlagUse).
struct EtSimFlagUse {
  const char* flag;   // as declared: "bucket_mb"
  bool used;          // whether the run `flags` asks for uses it
  const char* needs;  // what makes it used
};
// et-sim's conditional flags, in the order they are checked.
std::vector<EtSimFlagUse> EtSimFlagUses(const EtSimFlags& flags);

// Where a run's output goes. Unset functions print as et-sim does: the text
// to stdout, each note line ("et-sim: note: ...\n") to stderr. A caller that
// reads results rather than text (Python) finds them here after the run.
struct EtSimOutput {
  std::function<void(const std::string& text)> print_out;
  std::function<void(const std::string& line)> print_err;
  // Keep the simulation (its graphs, rank classes and timelines) in
  // `simulation` after a trace run; it is dropped otherwise.
  bool keep_simulation = false;
  // A trace run's report is printed (as --json or text chooses); a caller
  // that formats it on demand from `report` turns this off.
  bool print_report = true;
  std::optional<Report> report;            // a trace run's report
  std::unique_ptr<Simulation> simulation;  // with keep_simulation
  std::optional<SweepResult> sweep;        // --sweep, or --search's rows
  std::vector<NcclTestsRow> nccl_tests;    // --nccl-tests
};

// Runs the command `flags` asks for. An error's message is the one line to
// print; its code says the exit status: kInvalidArgument for a mistake in the
// command line (the usage exit status), any other for one in the inputs or
// the run (exit 1). Text printed before an error stays printed.
absl::Status RunEtSim(const EtSimFlags& flags);
absl::Status RunEtSim(const EtSimFlags& flags, EtSimOutput* output);

}  // namespace et::sim

#endif  // SIMULATOR_ET_SIM_COMMAND_H_
