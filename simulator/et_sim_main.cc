// et-sim: predicts step time and communication cost of Chakra traces on N
// ranks. Flags only: their definitions, the ones refused empty or without what
// uses them, and their values handed to the command
// (simulator/et_sim_command.h), whose error is printed here with its exit
// status.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "base/text_escape.h"
#include "cli/cli_args.h"
#include "cli/flag_use.h"
#include "simulator/et_sim_command.h"

ABSL_FLAG(std::optional<int64_t>, world, std::nullopt,
          "ranks for a single input (every rank runs it; default 1)");
ABSL_FLAG(std::optional<int64_t>, ranks, std::nullopt,
          "ranks for a pattern input 'out.%d.et'");
ABSL_FLAG(std::string, schedule, "stream",
          "stream (a queue per CPU thread and GPU stream) or astra "
          "(ASTRA-sim's: one CPU op, one GPU op, one collective at a time per "
          "rank; with recorded compute its node costs too: recorded durations "
          "in whole us, every node, no host-time model)");
ABSL_FLAG(std::string, compute, "recorded",
          "compute model: recorded, roofline, calibrated");
ABSL_FLAG(std::string, host_time, "unprofiled",
          "host ops and gaps: unprofiled (the program without a profiler; "
          "compared with the unprofiled step) or recorded (as recorded, "
          "profiler included; compared with the profiled step)");
ABSL_FLAG(std::string, host_profile, "",
          "a light Kineto trace of the same program (torch.profiler without "
          "the ET observer and with record_shapes=False, so its host ops "
          "cost nearly what they cost unprofiled; examples/record_trace.py "
          "--kineto-light-out records one): the unprofiled host cost per op "
          "kind is learned from it");
ABSL_FLAG(double, host_speed, 1.0,
          "what-if: the host CPU runs this many times faster than the "
          "recorded one (host ops and gaps divide by it)");
ABSL_FLAG(std::string, measured_step_ms, "",
          "the true step time in ms to compare the prediction with (overrides "
          "the trace's; e.g. measured on the --device GPU)");
ABSL_FLAG(std::string, calibration, "",
          "measured op times (docs/calibration-format.md)");
ABSL_FLAG(std::string, device, "",
          "the GPU to predict for (V100, A100, H100, H200): GPU ops recorded "
          "on another one are scaled to it; the roofline preset (default: the "
          "recorded GPU, else H100)");
ABSL_FLAG(std::string, device_file, "",
          "device presets file (default: the shipped presets)");
ABSL_FLAG(double, compute_scale, 1.0,
          "compute runs this many times faster (what-if)");
ABSL_FLAG(std::vector<std::string>, slow_rank, {},
          "R:F[,R:F...]: rank R computes F times slower (stragglers)");
ABSL_FLAG(std::string, comm, "nccl",
          "communication model: nccl (NCCL's algorithms and protocols on the "
          "platform; gloo collectives: the host model fitted to the trace's "
          "own gloo runs unless --topology names a platform), alpha-beta "
          "(closed-form formulas on the topology; 'model' is an alias), "
          "calibrated (nccl fitted to the trace's recorded kernels), "
          "recorded, astra, astra-aware");
ABSL_FLAG(std::string, algorithm, "auto",
          "auto, ring, tree, direct, hierarchical");
ABSL_FLAG(bool, nccl_efficiency, false,
          "scale bandwidth by NCCL's size-dependent efficiency");
ABSL_FLAG(std::string, topology, "",
          "platform preset (DGX-A100, AWS-P4D, HGX-H100, HGX-H200, HGX-H800, "
          "DGX-V100, L40S-PCIE), a platform file, or a topology YAML/JSON "
          "(ours or ASTRA-sim's network); default: the preset of the trace's "
          "GPU (astra modes: HGX-H100)");
ABSL_FLAG(std::string, astra_system, "",
          "ASTRA-sim system JSON (with --comm astra|astra-aware)");
ABSL_FLAG(std::string, groups, "",
          "process-group table (JSON as in PyTorch's process_group:init) "
          "replacing the "
          "traces' own");
ABSL_FLAG(std::string, layout, "",
          "dp=D[,tp=T][,pp=P][,ep=E]: run one rank's trace as every rank of "
          "this job (the world is the product; Megatron's placement, tp "
          "innermost); the trace's groups keep their recorded dimensions, dp "
          "scales, tp, pp and ep are synthesized on a trace recorded "
          "without them, and a recorded tp is re-split (docs/et-sim.md)");
ABSL_FLAG(std::string, recorded_layout, "",
          "the layout the trace was recorded with, e.g. tp=8, when its process "
          "groups do not say (checked against them)");
ABSL_FLAG(std::string, sweep, "",
          "DIM=V1,V2,... such as dp=1,2,4,8: one prediction per value (the "
          "other dimensions as --layout gives them, else as recorded), a row "
          "each: world, step, compute, exposed communication, collective time "
          "per group (docs/et-sim.md)");
ABSL_FLAG(std::string, search, "",
          "world=N: every layout tp x pp x dp of N ranks the trace allows, "
          "predicted and ranked by step, with each one's memory peak per rank "
          "against the device (NOFIT) and the best that fits "
          "(docs/et-sim.md)");
ABSL_FLAG(std::string, chart, "",
          "with --sweep or --search: FILE.svg, the step breakdown against the "
          "swept value "
          "(self-contained SVG)");
ABSL_FLAG(std::string, dp_sync, "",
          "ddp, zero1, zero2, zero3, zero (= zero2), fsdp or none: the "
          "data-parallel gradient sync synthesized when --layout's dp exceeds "
          "the recorded one and the trace holds no dp collectives (default "
          "ddp; docs/dp-sync.md), and what each replica's memory shards "
          "(docs/memory-model.md)");
ABSL_FLAG(int64_t, micro_batches, 1,
          "--layout pp=P: micro-batches per step, each 1/M of the recorded "
          "batch (docs/et-sim.md, pipeline parallelism)");
ABSL_FLAG(bool, sequence_parallel, false,
          "--layout tp=T (T > 1): Megatron's sequence parallelism on the "
          "synthesized (or re-split) tensor parallelism: all-gathers and "
          "reduce-scatters in place of the all-reduces, the norms, dropout "
          "and residual adds split along the sequence (docs/et-sim.md)");
ABSL_FLAG(std::string, pp_schedule, "1f1b",
          "--layout pp=P: the pipeline schedule, 1f1b, gpipe or interleaved:V "
          "(V model chunks per rank, Megatron-LM's interleaved 1F1B)");
ABSL_FLAG(std::string, pp_split, "",
          "--layout pp=P: the model's repeated blocks (layers) per stage, "
          "a,b,... (P entries; P x V with interleaved:V), summing to the "
          "trace's blocks (default: stages balanced by compute time)");
ABSL_FLAG(double, bucket_mb, 25,
          "--dp-sync ddp/zero/fsdp: the bucket cap in MiB (DDP's "
          "bucket_cap_mb)");
ABSL_FLAG(double, device_memory_gib, 0,
          "the device memory (GiB) each rank's predicted peak is checked "
          "against (default: the --device preset's: H100 80, H200 141, ...)");
ABSL_FLAG(bool, no_memory, false,
          "skip the memory model (each rank's predicted peak from the trace's "
          "tensors; docs/memory-model.md)");
ABSL_FLAG(bool, no_symmetry, false, "simulate every rank separately");
ABSL_FLAG(bool, json, false, "print the report as JSON instead of text");
ABSL_FLAG(std::string, timeline, "",
          "write a Chrome/Perfetto trace of the simulated run");
ABSL_FLAG(std::string, html, "",
          "also write the report as one self-contained HTML page (tabs: "
          "overview, ops, timeline, memory, distributed; scale with --sweep; "
          "docs/html-report.md)");
ABSL_FLAG(std::string, compare, "",
          "OTHER: also simulate another trace (same form as the input) with "
          "these flags and compare: step, bound, parts, the ops that moved "
          "most, collectives (text, --json, the page's Compare tab)");
ABSL_FLAG(int64_t, top, 15, "rows per table in the text report");
ABSL_FLAG(std::string, write_ranks, "",
          "DIR: also write the simulated job as one .et per rank, "
          "DIR/<stem>.<rank>.et (ASTRA-sim's --workload-configuration=DIR/"
          "<stem>), and DIR/<stem>.comm_groups.json when a group is smaller "
          "than the world; DIR must be new or empty");

// Collective model flags (issue 18), kept together: the nccl-tests table mode.
ABSL_FLAG(std::string, nccl_tests, "",
          "no trace: print the nccl-tests table the NCCL model predicts for "
          "all_reduce, all_gather, reduce_scatter, alltoall, broadcast or "
          "sendrecv on --world ranks of --topology (default HGX-H100)");
ABSL_FLAG(std::string, min_bytes, "8",
          "--nccl-tests: smallest size (nccl-tests -b; K, M, G suffixes)");
ABSL_FLAG(std::vector<std::string>, comm_from, {},
          "LOG[,LOG...]: nccl-tests output of the target cluster; the "
          "platform's efficiencies, launch cost and pipeline ramp are fitted "
          "to it (reported) before predicting");
ABSL_FLAG(std::string, max_bytes, "16G",
          "--nccl-tests: largest size (nccl-tests -e), doubling from the "
          "smallest");

// The cluster and NCCL's knobs (issue 33), in nccl-tests' and NCCL's terms;
// they apply to --nccl-tests and to trace simulation alike.
ABSL_FLAG(std::optional<int64_t>, nodes, std::nullopt,
          "nodes (hosts) the ranks run on; the world is "
          "nodes x --gpus-per-node unless --world says");
ABSL_FLAG(std::optional<int64_t>, gpus_per_node, std::nullopt,
          "ranks (GPUs) per node, mpirun -N: e.g. 1 for nccl-tests run with -N "
          "1; fewer "
          "than the platform's node use their share of its NICs");
ABSL_FLAG(std::string, nccl_algo, "",
          "NCCL_ALGO as NCCL reads it: a list (ring; Tree,Ring) or '^' and a "
          "list to exclude (^NVLS,NVLSTree), case-insensitive");
ABSL_FLAG(std::string, nccl_proto, "",
          "NCCL_PROTO as NCCL reads it: LL, LL128, Simple, lists, ^ to "
          "exclude");
ABSL_FLAG(std::optional<int64_t>, nccl_min_channels, std::nullopt,
          "NCCL_MIN_NCHANNELS (NCCL_MIN_CTAS): at least this many channels");
ABSL_FLAG(std::optional<int64_t>, nccl_max_channels, std::nullopt,
          "NCCL_MAX_NCHANNELS (NCCL_MAX_CTAS): at most this many channels "
          "(fewer carry their share of the bus)");
ABSL_FLAG(std::optional<int64_t>, gpus_per_process, std::nullopt,
          "GPUs one process drives (nccl-tests -g; default 1): it launches "
          "their kernels in turn");

namespace {

[[noreturn]] void Fail(const std::string& message, int exit_code) {
  std::fprintf(stderr, "et-sim: error: %s\n",
               et::EscapeForPrint(message).c_str());
  std::exit(exit_code);
}

// A flag given with an empty value (`--sweep ''`) is a mistake, not the flag
// left out: the run it asked for would silently not happen. Read from argv:
// absl tells a flag left at its default from one set to it only privately.
void RefuseEmptyFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::ConsumePrefix(&arg, "--")) continue;
    const size_t eq = arg.find('=');
    const std::string name =
        absl::StrReplaceAll(arg.substr(0, eq), {{"_", "-"}});
    const bool empty = eq != absl::string_view::npos
                           ? eq + 1 == arg.size()
                           : i + 1 < argc && argv[i + 1][0] == '\0';
    for (const char* flag : et::sim::kEtSimNonEmptyFlags) {
      if (empty && name == flag)
        Fail(absl::StrCat("--", flag, " was given an empty value"),
             et::kUsageExitCode);
    }
  }
  // A list flag's items are paths: an empty one (`a.txt,,b.txt`) is a typo.
  for (const std::string& log : absl::GetFlag(FLAGS_comm_from)) {
    if (log.empty()) {
      Fail(
          "--comm-from: an empty path in the list (two commas in a row, or "
          "one at an end)",
          et::kUsageExitCode);
    }
  }
}

// Flags that mean something only with another: given without it, they are
// refused rather than ignored (cli/flag_use.h; the table is the command's).
void RefuseUnusedFlags(const et::sim::EtSimFlags& flags) {
  std::vector<et::FlagUse> uses;
  for (const et::sim::EtSimFlagUse& use : et::sim::EtSimFlagUses(flags))
    uses.push_back({use.flag, use.used, use.needs});
  et::RefuseUnusedFlags("et-sim", uses);
}

et::sim::EtSimFlags ReadFlags(std::vector<std::string> positional) {
  et::sim::EtSimFlags f;
  f.positional = std::move(positional);
  f.world = absl::GetFlag(FLAGS_world);
  f.ranks = absl::GetFlag(FLAGS_ranks);
  f.schedule = absl::GetFlag(FLAGS_schedule);
  f.compute = absl::GetFlag(FLAGS_compute);
  f.host_time = absl::GetFlag(FLAGS_host_time);
  f.host_profile = absl::GetFlag(FLAGS_host_profile);
  f.host_speed = absl::GetFlag(FLAGS_host_speed);
  f.measured_step_ms = absl::GetFlag(FLAGS_measured_step_ms);
  f.calibration = absl::GetFlag(FLAGS_calibration);
  f.device = absl::GetFlag(FLAGS_device);
  f.device_file = absl::GetFlag(FLAGS_device_file);
  f.compute_scale = absl::GetFlag(FLAGS_compute_scale);
  f.slow_rank = absl::GetFlag(FLAGS_slow_rank);
  f.comm = absl::GetFlag(FLAGS_comm);
  f.algorithm = absl::GetFlag(FLAGS_algorithm);
  f.nccl_efficiency = absl::GetFlag(FLAGS_nccl_efficiency);
  f.topology = absl::GetFlag(FLAGS_topology);
  f.astra_system = absl::GetFlag(FLAGS_astra_system);
  f.groups = absl::GetFlag(FLAGS_groups);
  f.layout = absl::GetFlag(FLAGS_layout);
  f.recorded_layout = absl::GetFlag(FLAGS_recorded_layout);
  f.sweep = absl::GetFlag(FLAGS_sweep);
  f.search = absl::GetFlag(FLAGS_search);
  f.chart = absl::GetFlag(FLAGS_chart);
  f.dp_sync = absl::GetFlag(FLAGS_dp_sync);
  f.bucket_mb = absl::GetFlag(FLAGS_bucket_mb);
  f.micro_batches = absl::GetFlag(FLAGS_micro_batches);
  f.sequence_parallel = absl::GetFlag(FLAGS_sequence_parallel);
  f.pp_schedule = absl::GetFlag(FLAGS_pp_schedule);
  f.pp_split = absl::GetFlag(FLAGS_pp_split);
  f.device_memory_gib = absl::GetFlag(FLAGS_device_memory_gib);
  f.no_memory = absl::GetFlag(FLAGS_no_memory);
  f.no_symmetry = absl::GetFlag(FLAGS_no_symmetry);
  f.json = absl::GetFlag(FLAGS_json);
  f.timeline = absl::GetFlag(FLAGS_timeline);
  f.html = absl::GetFlag(FLAGS_html);
  f.compare = absl::GetFlag(FLAGS_compare);
  f.top = absl::GetFlag(FLAGS_top);
  f.write_ranks = absl::GetFlag(FLAGS_write_ranks);
  f.nccl_tests = absl::GetFlag(FLAGS_nccl_tests);
  f.min_bytes = absl::GetFlag(FLAGS_min_bytes);
  f.comm_from = absl::GetFlag(FLAGS_comm_from);
  f.max_bytes = absl::GetFlag(FLAGS_max_bytes);
  f.nodes = absl::GetFlag(FLAGS_nodes);
  f.gpus_per_node = absl::GetFlag(FLAGS_gpus_per_node);
  f.nccl_algo = absl::GetFlag(FLAGS_nccl_algo);
  f.nccl_proto = absl::GetFlag(FLAGS_nccl_proto);
  f.nccl_min_channels = absl::GetFlag(FLAGS_nccl_min_channels);
  f.nccl_max_channels = absl::GetFlag(FLAGS_nccl_max_channels);
  f.gpus_per_process = absl::GetFlag(FLAGS_gpus_per_process);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> positional = et::ParseToolCommandLine(
      argc, argv,
      "predicts step time and communication cost of Chakra traces\n"
      "  et-sim out.et --world 8\n"
      "  et-sim 'out.%d.et' --ranks 8 [--topology DGX-A100] [--json] "
      "[--timeline t.json] [--html report.html] [--compare other.et]\n"
      "  et-sim traces_dir/\n"
      "  et-sim out.et --world 8 --write-ranks job/   (one .et per rank, "
      "for ASTRA-sim)\n"
      "  et-sim out.et --sweep dp=1,2,4,8 [--chart step.svg]\n"
      "  et-sim out.et --search world=1024 [--device H100] [--micro-batches "
      "8]\n"
      "  et-sim out.et --layout tp=8,dp=64 [--dp-sync ddp] [--bucket-mb 25] "
      "[--write-ranks job/]\n"
      "  et-sim out.et --layout pp=4,dp=8 --micro-batches 8 "
      "[--pp-schedule gpipe]\n"
      "  et-sim --nccl-tests all_reduce --world 16 [--topology HGX-H100] "
      "[--min-bytes 8] [--max-bytes 16G]");
  RefuseEmptyFlags(argc, argv);
  const et::sim::EtSimFlags flags = ReadFlags(positional);
  RefuseUnusedFlags(flags);
  const absl::Status s = et::sim::RunEtSim(flags);
  if (s.ok()) return 0;
  Fail(std::string(s.message()),
       absl::IsInvalidArgument(s) ? et::kUsageExitCode : 1);
}
