// et-sim: predicts step time and communication cost of Chakra traces on N
// ranks. Flag parsing only (Abseil flags into SimOptions); the work lives in
// the et_simulator library.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/gzip_input.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/text_escape.h"
#include "cli/cli_args.h"
#include "cli/flag_use.h"
#include "model/graph.h"
#include "model/process_group.h"
#include "scaleout/dp_sync.h"
#include "scaleout/layout_job.h"
#include "scaleout/parallel_layout.h"
#include "scaleout/rank_job_writer.h"
#include "scaleout/replicated_job.h"
#include "scaleout/staged_folder.h"
#include "simulator/comm_fit.h"
#include "simulator/input_checks.h"
#include "simulator/layout_sweep.h"
#include "simulator/nccl_cost_model.h"
#include "simulator/nccl_tests_log.h"
#include "simulator/nccl_tests_table.h"
#include "simulator/network.h"
#include "simulator/simulation.h"
#include "simulator/step_chart.h"
#include "step/host_profile.h"

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
          "innermost); the trace's groups keep their recorded dimensions and "
          "dp scales (docs/et-sim.md)");
ABSL_FLAG(std::string, recorded_layout, "",
          "the layout the trace was recorded with, e.g. tp=8, when its process "
          "groups do not say (checked against them)");
ABSL_FLAG(std::string, sweep, "",
          "DIM=V1,V2,... such as dp=1,2,4,8: one prediction per value (the "
          "other dimensions as --layout gives them, else as recorded), a row "
          "each: world, step, compute, exposed communication, collective time "
          "per group (docs/et-sim.md)");
ABSL_FLAG(std::string, chart, "",
          "with --sweep: FILE.svg, the step breakdown against the swept value "
          "(self-contained SVG)");
ABSL_FLAG(std::string, dp_sync, "",
          "ddp, zero1, zero2, zero3, zero (= zero2), fsdp or none: the "
          "data-parallel gradient sync synthesized when --layout's dp exceeds "
          "the recorded one and the trace holds no dp collectives (default "
          "ddp; docs/dp-sync.md), and what each replica's memory shards "
          "(docs/memory-model.md)");
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

using et::sim::CollectiveAlgorithm;
using et::sim::CommModel;
using et::sim::ComputeModel;
using et::sim::SchedulingMode;

struct Flags {
  et::sim::SimInput input;
  et::sim::SimOptions options;
  bool json = false;
  std::string timeline;
  std::optional<et::scaleout::LayoutSweep> sweep;
  std::string chart;
  size_t top = 15;
};

// A mistake in the flags or arguments is a usage error until they are parsed.
int fail_exit_code = et::kUsageExitCode;

[[noreturn]] void Fail(const std::string& message);

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
    for (const char* flag : {"sweep", "layout", "recorded-layout", "chart",
                             "timeline", "write-ranks", "topology"}) {
      if (empty && name == flag)
        Fail(absl::StrCat("--", flag, " was given an empty value"));
    }
  }
}

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "et-sim: error: %s\n",
               et::EscapeForPrint(message).c_str());
  std::exit(fail_exit_code);
}

// Looks `value` up in `choices`; fails naming the flag and the accepted values.
template <typename T>
T Choose(const char* flag, const std::string& value,
         std::initializer_list<std::pair<const char*, T>> choices) {
  std::string names;
  for (const auto& [name, v] : choices) {
    if (value == name) return v;
    names += names.empty() ? name : std::string(", ") + name;
  }
  Fail(std::string("--") + flag + ": expected " + names + ", got '" + value +
       "'");
}

// --sweep and --chart, after the other flags (the sweep's points take them).
void ParseSweepFlags(Flags* f) {
  const std::string text = absl::GetFlag(FLAGS_sweep);
  f->chart = absl::GetFlag(FLAGS_chart);
  if (text.empty()) return;
  auto sweep = et::scaleout::ParseSweep(text);
  if (!sweep.ok()) Fail("--sweep " + std::string(sweep.status().message()));
  // --layout dp=1 parses like no dp at all: the text says whether it was set.
  const std::string dim(et::scaleout::DimName(sweep->dim));
  for (absl::string_view item :
       absl::StrSplit(absl::GetFlag(FLAGS_layout), ',')) {
    if (absl::StartsWith(item, dim + "=")) {
      Fail("--sweep " + text + " with --layout " + absl::GetFlag(FLAGS_layout) +
           ": both set " + dim + "; give --layout the other dimensions only");
    }
  }
  const et::sim::SimOptions& o = f->options;
  for (auto [flag, given] :
       {std::make_pair("--world", o.world_size > 0),
        std::make_pair("--ranks", f->input.pattern_ranks > 0),
        std::make_pair("--measured-step-ms", o.measured_step_us > 0),
        std::make_pair("--timeline", !f->timeline.empty()),
        std::make_pair("--write-ranks",
                       !absl::GetFlag(FLAGS_write_ranks).empty())}) {
    if (given) Fail(std::string("--sweep does not take ") + flag);
  }
  if (absl::Status s = et::sim::CheckLayoutSweep(o, *sweep); !s.ok())
    Fail(std::string(s.message()));
  f->sweep = std::move(*sweep);
}

// --nodes, --gpus-per-node and NCCL's knobs, checked as usage errors.
std::pair<et::sim::ClusterShape, et::sim::NcclFlags> ClusterFlags() {
  et::sim::ClusterShape shape;
  for (auto [flag, value, target] :
       {std::make_tuple("--nodes", absl::GetFlag(FLAGS_nodes), &shape.nodes),
        std::make_tuple("--gpus-per-node", absl::GetFlag(FLAGS_gpus_per_node),
                        &shape.gpus_per_node)}) {
    if (!value) continue;
    if (*value < 1 || *value > et::kMaxRanks)
      Fail(absl::StrFormat("%s %d: must be in [1, %d]", flag, *value,
                           et::kMaxRanks));
    *target = *value;
  }
  if (shape.nodes > 0 && shape.gpus_per_node > 0 &&
      shape.nodes * shape.gpus_per_node > et::kMaxRanks) {
    Fail(absl::StrFormat("--nodes x --gpus-per-node: more than %d ranks",
                         et::kMaxRanks));
  }
  if (const std::optional<int64_t> world = absl::GetFlag(FLAGS_world);
      world && shape.nodes > 0 && shape.gpus_per_node > 0 &&
      shape.nodes * shape.gpus_per_node != *world) {
    Fail(absl::StrFormat(
        "--nodes %d x --gpus-per-node %d is %d ranks, not --world %d",
        shape.nodes, shape.gpus_per_node, shape.nodes * shape.gpus_per_node,
        *world));
  }
  et::sim::NcclFlags nccl{absl::GetFlag(FLAGS_nccl_algo),
                          absl::GetFlag(FLAGS_nccl_proto)};
  // Unset: the platform's; given, at least 1 (0 is a mistake, not "unset").
  for (auto [flag, value, target] :
       {std::make_tuple("--nccl-min-channels",
                        absl::GetFlag(FLAGS_nccl_min_channels),
                        &nccl.min_channels),
        std::make_tuple("--nccl-max-channels",
                        absl::GetFlag(FLAGS_nccl_max_channels),
                        &nccl.max_channels),
        std::make_tuple("--gpus-per-process",
                        absl::GetFlag(FLAGS_gpus_per_process),
                        &nccl.gpus_per_process)}) {
    if (!value) continue;
    if (*value < 1 || *value > 64)
      Fail(absl::StrFormat("%s %d: must be in [1, 64]", flag, *value));
    *target = *value;
  }
  et::sim::NcclSettings check;
  if (absl::Status s = et::sim::ApplyNcclFlags(nccl, &check); !s.ok()) {
    Fail(absl::StrCat(
        "--nccl-algo/--nccl-proto/--nccl-*-channels/--gpus-per-process: ",
        s.message()));
  }
  return {shape, nccl};
}

Flags ParseFlags(const std::vector<std::string>& positional) {
  Flags f;
  et::sim::SimOptions& o = f.options;
  if (positional.size() != 2) {
    Fail(positional.size() < 2
             ? "no input given (try --help)"
             : absl::StrCat("expected one input, got extra argument '",
                            positional[2], "'",
                            et::RanksAsOneInputHint(std::vector<std::string>(
                                positional.begin() + 1, positional.end()))));
  }
  f.input.path = positional[1];
  // Optional flags: unset means the default, but an explicit 0 or less is a
  // mistake, not a request for the default. Checked before anything is sized
  // by them.
  const std::optional<int64_t> world = absl::GetFlag(FLAGS_world);
  const std::optional<int64_t> ranks = absl::GetFlag(FLAGS_ranks);
  if (world && (*world < 1 || *world > et::kMaxRanks)) {
    Fail(absl::StrFormat("--world %d: must be in [1, %d]", *world,
                         et::kMaxRanks));
  }
  if (ranks && (*ranks < 1 || *ranks > et::kMaxRanks)) {
    Fail(absl::StrFormat("--ranks %d: must be in [1, %d]", *ranks,
                         et::kMaxRanks));
  }
  o.world_size = world.value_or(0);
  f.input.pattern_ranks = ranks.value_or(0);
  std::tie(o.cluster, o.nccl) = ClusterFlags();
  if (o.world_size == 0 && o.cluster.nodes > 0 && o.cluster.gpus_per_node > 0) {
    const int64_t product = o.cluster.nodes * o.cluster.gpus_per_node;
    if (ranks && *ranks != product) {
      Fail(absl::StrFormat(
          "--nodes %d x --gpus-per-node %d is %d ranks, not --ranks %d",
          o.cluster.nodes, o.cluster.gpus_per_node, product, *ranks));
    }
    // --layout and --sweep make their own world; the shape is checked
    // against it when the network is resolved.
    if (!ranks && absl::GetFlag(FLAGS_layout).empty() &&
        absl::GetFlag(FLAGS_sweep).empty())
      o.world_size = product;
  }
  // The same usage error, and exit status, as et-convert's.
  if (!ranks && et::IsRankPattern(f.input.path)) {
    Fail("'" + f.input.path +
         "': a rank pattern (%d) needs --ranks N, the number of ranks");
  }
  o.scheduling =
      Choose<SchedulingMode>("schedule", absl::GetFlag(FLAGS_schedule),
                             {{"stream", SchedulingMode::kStreamAware},
                              {"astra", SchedulingMode::kAstraCompat}});
  o.compute_model =
      Choose<ComputeModel>("compute", absl::GetFlag(FLAGS_compute),
                           {{"recorded", ComputeModel::kRecorded},
                            {"roofline", ComputeModel::kRoofline},
                            {"calibrated", ComputeModel::kCalibrated}});
  o.host_time =
      Choose<et::HostTimeMode>("host-time", absl::GetFlag(FLAGS_host_time),
                               {{"unprofiled", et::HostTimeMode::kUnprofiled},
                                {"recorded", et::HostTimeMode::kRecorded}});
  o.comm_model = Choose<CommModel>("comm", absl::GetFlag(FLAGS_comm),
                                   {{"nccl", CommModel::kNccl},
                                    {"alpha-beta", CommModel::kAlphaBeta},
                                    {"model", CommModel::kAlphaBeta},
                                    {"recorded", CommModel::kRecorded},
                                    {"calibrated", CommModel::kCalibrated},
                                    {"astra", CommModel::kAstra},
                                    {"astra-aware", CommModel::kAstraAware}});
  o.algorithm = Choose<CollectiveAlgorithm>(
      "algorithm", absl::GetFlag(FLAGS_algorithm),
      {{"auto", CollectiveAlgorithm::kAuto},
       {"ring", CollectiveAlgorithm::kRing},
       {"tree", CollectiveAlgorithm::kTree},
       {"direct", CollectiveAlgorithm::kDirect},
       {"hierarchical", CollectiveAlgorithm::kHierarchical}});
  if (const std::string light = absl::GetFlag(FLAGS_host_profile);
      !light.empty()) {
    auto learned = et::LearnHostProfile(light);
    if (!learned.ok()) Fail(std::string(learned.status().message()));
    o.host_model = learned->model;
    o.host_model_given = true;
  }
  o.host_model.host_speed = absl::GetFlag(FLAGS_host_speed);
  if (!(o.host_model.host_speed > 0) || !std::isfinite(o.host_model.host_speed))
    Fail("--host-speed: expected a positive factor");
  o.calibration_file = absl::GetFlag(FLAGS_calibration);
  if (const std::string ms = absl::GetFlag(FLAGS_measured_step_ms);
      !ms.empty()) {
    double v = 0;
    if (!absl::SimpleAtod(ms, &v) || !(v > 0) || !std::isfinite(v))
      Fail("--measured-step-ms '" + ms + "': expected a positive number of ms");
    o.measured_step_us = v * 1000.0;
  }
  o.device = absl::GetFlag(FLAGS_device);
  o.device_file = absl::GetFlag(FLAGS_device_file);
  o.compute_scale = absl::GetFlag(FLAGS_compute_scale);
  for (const std::string& item : absl::GetFlag(FLAGS_slow_rank)) {
    std::vector<std::string> parts = absl::StrSplit(item, ':');
    int64_t rank = 0;
    double factor = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &rank) ||
        !absl::SimpleAtod(parts[1], &factor)) {
      Fail("--slow-rank: expected RANK:FACTOR, got '" + item + "'");
    }
    o.rank_slowdown[rank] = factor;
  }
  o.nccl_efficiency = absl::GetFlag(FLAGS_nccl_efficiency);
  o.topology = absl::GetFlag(FLAGS_topology);
  o.astra_system = absl::GetFlag(FLAGS_astra_system);
  o.comm_from = absl::GetFlag(FLAGS_comm_from);
  o.use_rank_symmetry = !absl::GetFlag(FLAGS_no_symmetry);
  if (const std::string groups = absl::GetFlag(FLAGS_groups); !groups.empty()) {
    std::string text;
    absl::Status read = et::ReadFileMaybeGzip(groups, &text);
    if (!read.ok()) Fail(std::string(read.message()));
    auto parsed = et::ParseProcessGroupJson(text);
    if (!parsed.ok())
      Fail(groups + ": " + std::string(parsed.status().message()));
    o.groups_override = std::move(*parsed);
  }
  for (auto [flag, value, target] :
       {std::make_tuple("layout", absl::GetFlag(FLAGS_layout), &o.layout),
        std::make_tuple("recorded-layout", absl::GetFlag(FLAGS_recorded_layout),
                        &o.recorded_layout)}) {
    if (value.empty()) continue;
    auto parsed = et::scaleout::ParseLayout(value);
    if (!parsed.ok())
      Fail(absl::StrFormat("--%s %s", flag, parsed.status().message()));
    *target = *parsed;
  }
  if (const std::string mode = absl::GetFlag(FLAGS_dp_sync); !mode.empty()) {
    auto parsed = et::scaleout::ParseDpSyncMode(mode);
    if (!parsed.ok())
      Fail(absl::StrCat("--dp-sync: ", parsed.status().message()));
    o.dp_sync = *parsed;
    o.shard_stage = et::scaleout::ShardStageOf(mode);
  }
  o.memory = !absl::GetFlag(FLAGS_no_memory);
  o.device_memory_gib = absl::GetFlag(FLAGS_device_memory_gib);
  if (o.device_memory_gib < 0 || !std::isfinite(o.device_memory_gib) ||
      o.device_memory_gib > 1e9)
    Fail(absl::StrFormat("--device-memory-gib %g: expected a size in GiB",
                         o.device_memory_gib));
  const double bucket_mb = absl::GetFlag(FLAGS_bucket_mb);
  if (!(bucket_mb > 0) || bucket_mb > 1024 * 1024)
    Fail(absl::StrFormat("--bucket-mb %g: expected a positive size in MiB",
                         bucket_mb));
  o.bucket_cap_bytes = static_cast<int64_t>(bucket_mb * 1024 * 1024);
  o.keep_graph =
      o.layout.has_value() && !absl::GetFlag(FLAGS_write_ranks).empty();
  if (o.layout && o.world_size > 0 && o.world_size != o.layout->world()) {
    Fail(absl::StrFormat("--world %d but --layout %s spans %d ranks",
                         o.world_size, o.layout->ToString(),
                         o.layout->world()));
  }
  if (o.layout && !o.groups_override.empty())
    Fail("--layout places the trace's own groups; it does not take --groups");
  f.json = absl::GetFlag(FLAGS_json);
  f.timeline = absl::GetFlag(FLAGS_timeline);
  ParseSweepFlags(&f);
  const int64_t top = absl::GetFlag(FLAGS_top);
  if (top <= 0) Fail("--top: must be positive");
  f.top = static_cast<size_t>(top);
  return f;
}

// Mistakes that would still give a plausible number; see input_checks.h.
// Needs the groups file's path for messages, hence read here again. Returns
// the notes, printed once the run succeeded (an error is one line).
std::vector<std::string> CheckInputs(const Flags& flags,
                                     const et::sim::Simulation& sim) {
  std::vector<std::string> notes;
  const std::optional<et::sim::InputFacts> facts =
      et::sim::FactsOf(sim.model(0), sim.file(0));
  const bool groups_given = !flags.options.groups_override.empty();
  if (flags.input.pattern_ranks > 0) {
    absl::Status s = et::sim::CheckRankCount(
        flags.input.path, flags.input.pattern_ranks, *facts, groups_given);
    if (!s.ok()) Fail(std::string(s.message()));
  }
  absl::Status s = et::sim::CheckGroupsApply(
      flags.options.groups_override, absl::GetFlag(FLAGS_groups), *facts);
  if (!s.ok()) Fail(std::string(s.message()));
  for (const std::string& note :
       {et::sim::GroupsNote(flags.options.groups_override, *facts),
        et::sim::DurationsNote(*facts, flags.options, sim.compute_device())}) {
    if (!note.empty()) notes.push_back(note);
  }
  return notes;
}

// et-sim --nccl-tests OP: the model's nccl-tests table; no trace involved.
int RunNcclTests(const std::vector<std::string>& positional) {
  const std::string op_name = absl::GetFlag(FLAGS_nccl_tests);
  const std::optional<et::sim::NcclOp> op = et::sim::NcclOpByName(op_name);
  if (!op) {
    Fail("--nccl-tests '" + op_name +
         "': expected all_reduce, all_gather, reduce_scatter, alltoall, "
         "broadcast or sendrecv");
  }
  if (positional.size() > 1)
    Fail("--nccl-tests takes no input, got '" + positional[1] + "'");
  const auto [shape, nccl] = ClusterFlags();
  std::optional<int64_t> given_world = absl::GetFlag(FLAGS_world);
  if (!given_world && shape.nodes > 0 && shape.gpus_per_node > 0)
    given_world = shape.nodes * shape.gpus_per_node;
  int64_t world = given_world.value_or(8);
  if (world < 2 || world > et::kMaxRanks)
    Fail(absl::StrFormat("--world %d: must be in [2, %d]", world,
                         et::kMaxRanks));
  auto min_bytes = et::sim::ParseNcclTestsSize(absl::GetFlag(FLAGS_min_bytes));
  auto max_bytes = et::sim::ParseNcclTestsSize(absl::GetFlag(FLAGS_max_bytes));
  if (!min_bytes.ok()) Fail("--min-bytes " + min_bytes.status().ToString());
  if (!max_bytes.ok()) Fail("--max-bytes " + max_bytes.status().ToString());
  if (*min_bytes > *max_bytes) Fail("--min-bytes must not exceed --max-bytes");
  // With --comm-from and no --topology, the platform of the logs' GPU. A log
  // that cannot be read is an input's mistake (exit 1).
  const std::vector<std::string> logs = absl::GetFlag(FLAGS_comm_from);
  std::string log_device;
  if (!logs.empty()) {
    fail_exit_code = 1;
    auto parsed = et::sim::LoadNcclTestsLogs(logs);
    if (!parsed.ok()) Fail(std::string(parsed.status().message()));
    log_device = parsed->device_name;
  }
  // The cluster's shape is the flags' (a preset name, --world, --nodes): a
  // usage error; a --topology that names a file is an input (exit 1).
  const std::string topology = absl::GetFlag(FLAGS_topology);
  std::error_code ec;
  fail_exit_code = !topology.empty() && std::filesystem::exists(topology, ec)
                       ? 1
                       : et::kUsageExitCode;
  if (!given_world && shape.nodes > 0) {
    // --nodes alone: nodes of the platform's own size.
    auto node = et::sim::ResolveNetwork(topology, log_device, !logs.empty(), 1);
    if (!node.ok()) Fail(std::string(node.status().message()));
    world = shape.nodes * node->platform.gpus_per_node;
  }
  auto network = et::sim::ResolveNetwork(topology, log_device, !logs.empty(),
                                         world, false, shape, nccl);
  if (!network.ok()) Fail(std::string(network.status().message()));
  fail_exit_code = 1;  // the flags are all read: what follows is the inputs'
  if (!logs.empty()) {
    et::sim::Platform node = network->node_platform;
    auto fitted = et::sim::FitPlatformToLogs(logs, &node);
    if (!fitted.ok()) Fail(std::string(fitted.status().message()));
    et::sim::RefitNode(node, &*network);
    std::fprintf(stderr, "et-sim: note: %s\n",
                 et::EscapeForPrint(*fitted).c_str());
  }
  const std::vector<et::sim::NcclTestsRow> rows = et::sim::NcclTestsTable(
      network->platform, *op, world, *min_bytes, *max_bytes);
  const std::string out =
      absl::GetFlag(FLAGS_json)
          ? et::sim::FormatNcclTestsJson(rows, *op, world, network->name,
                                         network->cluster)
          : et::sim::FormatNcclTestsText(rows, *op, world, network->name,
                                         network->cluster);
  std::fputs(out.c_str(), stdout);
  return 0;
}

// Prints where the job went and how ASTRA-sim reads it.
void ReportJob(const et::scaleout::RankJobSpec& spec,
               const et::scaleout::RankJobResult& job) {
  std::string groups;
  if (!job.comm_groups_path.empty())
    groups = " --comm-group-configuration=" + job.comm_groups_path;
  std::fprintf(stderr,
               "et-sim: note: wrote %d ranks (%d nodes, %d collectives) for "
               "ASTRA-sim: --workload-configuration=%s%s (its network must "
               "have %d NPUs)\n",
               static_cast<int>(spec.world_size), static_cast<int>(job.nodes),
               static_cast<int>(job.collectives),
               et::scaleout::WorkloadConfiguration(spec).c_str(),
               groups.c_str(), static_cast<int>(spec.world_size));
  if (!job.astra_teardown_abort.empty()) {
    std::fprintf(stderr,
                 "et-sim: note: %s: ASTRA-sim (518bd51) runs this job to the "
                 "end, then aborts at exit freeing that collective's "
                 "implementation twice (docs/astra-sim.md has the fix)\n",
                 job.astra_teardown_abort.c_str());
  }
}

// --write-ranks DIR: the job this run simulates, one graph per rank, for
// ASTRA-sim. One recorded rank (a single input) made into --world N ranks;
// with --layout, see WriteLayoutRanks.
// Checked before the simulation, which the job is written after.
void CheckWriteRanksInput(const Flags& flags) {
  if (absl::GetFlag(FLAGS_write_ranks).empty()) return;
  if (flags.input.pattern_ranks > 0 || et::IsDirectory(flags.input.path)) {
    Fail(
        "--write-ranks: takes one recorded rank's .et (with --world N or "
        "--layout), not several ranks' files");
  }
}

void WriteRanks(const Flags& flags) {
  const std::string dir = absl::GetFlag(FLAGS_write_ranks);
  if (dir.empty()) return;
  if (flags.options.layout) return;  // after loading: WriteLayoutRanks
  const int64_t world = std::max<int64_t>(flags.options.world_size, 1);
  auto source = et::scaleout::ReplicatedFileSource(flags.input.path, world);
  if (!source.ok()) {
    Fail(absl::StrCat(flags.input.path,
                      ": --write-ranks: ", source.status().message()));
  }
  const et::scaleout::RankJobSpec spec{
      dir, et::scaleout::JobStemFor(flags.input.path), world};
  auto job = et::scaleout::WriteRankJob(spec, *source);
  if (!job.ok()) Fail(std::string(job.status().message()));
  ReportJob(spec, *job);
}

// --write-ranks DIR with --layout: every rank of the layout, each with the
// synthesized collectives and its own groups (scaleout/layout_job.h).
void WriteLayoutRanks(const Flags& flags, const et::sim::Simulation& sim) {
  const std::string dir = absl::GetFlag(FLAGS_write_ranks);
  if (dir.empty() || !flags.options.layout) return;
  const et::scaleout::ParallelLayout& layout = *flags.options.layout;
  auto source = et::scaleout::LayoutRankSource(*sim.layout_graph(),
                                               *sim.recorded_layout(), layout);
  if (!source.ok()) {
    Fail(absl::StrCat(flags.input.path,
                      ": --write-ranks: ", source.status().message()));
  }
  const et::scaleout::RankJobSpec spec{
      dir, et::scaleout::JobStemFor(flags.input.path), layout.world()};
  auto job = et::scaleout::WriteRankJob(spec, *source);
  if (!job.ok()) Fail(std::string(job.status().message()));
  ReportJob(spec, *job);
}

// et-sim TRACE --sweep dp=1,2,4: a row per point, and the chart.
int RunSweep(const Flags& flags) {
  auto result =
      et::sim::RunLayoutSweep(flags.input, flags.options, *flags.sweep);
  if (!result.ok()) Fail(std::string(result.status().message()));
  const std::string text = flags.json ? et::sim::FormatSweepJson(*result) + "\n"
                                      : et::sim::FormatSweepText(*result);
  std::fputs(text.c_str(), stdout);
  if (!flags.chart.empty()) {
    absl::Status s = et::sim::WriteStepChart(*result, flags.chart);
    if (!s.ok()) Fail(flags.chart + ": " + std::string(s.message()));
  }
  return 0;
}

// Outputs are checked before the work (base/path.h): a missing folder fails
// at once, not after the whole report is printed.
void CheckOutputs(const Flags& flags) {
  for (auto [flag, path] : {std::make_pair("--timeline", flags.timeline),
                            std::make_pair("--chart", flags.chart)}) {
    if (absl::Status s = et::CheckOutputPath(flag, path); !s.ok())
      Fail(std::string(s.message()));
  }
  // --write-ranks DIR may exist (empty) or be made; its parent must exist.
  std::string dir = absl::GetFlag(FLAGS_write_ranks);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!dir.empty() && !et::IsDirectory(dir)) {
    if (absl::Status s = et::CheckOutputPath("--write-ranks", dir); !s.ok())
      Fail(std::string(s.message()));
  }
  // An existing folder must be empty: refused before the simulation, not after.
  if (!dir.empty() && et::IsDirectory(dir)) {
    const std::string given = absl::GetFlag(FLAGS_write_ranks);
    if (absl::Status s = et::scaleout::CheckStagedFolderTarget(given); !s.ok())
      Fail(std::string(s.message()));
  }
}

// Flags that mean something only with another: given without it, they are
// refused rather than ignored (cli/flag_use.h).
void RefuseUnusedFlags() {
  const bool nccl_tests = !absl::GetFlag(FLAGS_nccl_tests).empty();
  const bool scaled = !absl::GetFlag(FLAGS_layout).empty() ||
                      !absl::GetFlag(FLAGS_sweep).empty();
  const std::string comm = absl::GetFlag(FLAGS_comm);
  const et::FlagUse uses[] = {
      {"calibration", absl::GetFlag(FLAGS_compute) == "calibrated",
       "--compute calibrated (the model that reads it)"},
      {"dp_sync", scaled, "--layout or --sweep (the job whose dp it syncs)"},
      {"bucket_mb", scaled,
       "--layout or --sweep (the job whose gradient buckets it sizes)"},
      {"recorded_layout", scaled,
       "--layout or --sweep (the job to predict from the recorded one)"},
      {"chart", !absl::GetFlag(FLAGS_sweep).empty(),
       "--sweep (the chart draws a sweep)"},
      {"min_bytes", nccl_tests, "--nccl-tests (the sizes of its table)"},
      {"max_bytes", nccl_tests, "--nccl-tests (the sizes of its table)"},
      {"astra_system", comm == "astra" || comm == "astra-aware",
       "--comm astra or astra-aware"},
      {"host_profile", absl::GetFlag(FLAGS_host_time) == "unprofiled",
       "--host-time unprofiled (the host cost it learns)"},
      {"device_memory_gib", !absl::GetFlag(FLAGS_no_memory) && !nccl_tests,
       "the memory model of a trace (not --no-memory, not --nccl-tests)"},
  };
  et::RefuseUnusedFlags("et-sim", uses);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> positional = et::ParseToolCommandLine(
      argc, argv,
      "predicts step time and communication cost of Chakra traces\n"
      "  et-sim out.et --world 8\n"
      "  et-sim 'out.%d.et' --ranks 8 [--topology DGX-A100] [--json] "
      "[--timeline t.json]\n"
      "  et-sim traces_dir/\n"
      "  et-sim out.et --world 8 --write-ranks job/   (one .et per rank, "
      "for ASTRA-sim)\n"
      "  et-sim out.et --sweep dp=1,2,4,8 [--chart step.svg]\n"
      "  et-sim out.et --layout tp=8,dp=64 [--dp-sync ddp] [--bucket-mb 25] "
      "[--write-ranks job/]\n"
      "  et-sim --nccl-tests all_reduce --world 16 [--topology HGX-H100] "
      "[--min-bytes 8] [--max-bytes 16G]");
  RefuseEmptyFlags(argc, argv);
  RefuseUnusedFlags();
  if (!absl::GetFlag(FLAGS_nccl_tests).empty()) return RunNcclTests(positional);
  Flags flags = ParseFlags(positional);
  fail_exit_code = 1;
  CheckOutputs(flags);
  if (flags.sweep) return RunSweep(flags);
  flags.options.keep_timeline = !flags.timeline.empty();
  CheckWriteRanksInput(flags);
  auto sim = et::sim::Simulation::Load(flags.input, flags.options);
  if (!sim.ok()) Fail(std::string(sim.status().message()));
  const std::vector<std::string> notes = CheckInputs(flags, **sim);
  if (absl::Status s = (*sim)->Simulate(flags.options); !s.ok())
    Fail(std::string(s.message()));
  for (const std::string& note : notes)
    std::fprintf(stderr, "et-sim: note: %s\n",
                 et::EscapeForPrint(note).c_str());
  const et::sim::Report& report = (*sim)->report();
  const std::string text = flags.json
                               ? et::sim::FormatReportJson(report) + "\n"
                               : et::sim::FormatReportText(report, flags.top);
  std::fputs(text.c_str(), stdout);
  if (!flags.timeline.empty()) {
    absl::Status s = et::sim::WriteTimeline((*sim)->classes(), (*sim)->result(),
                                            flags.timeline);
    if (!s.ok()) Fail(flags.timeline + ": " + std::string(s.message()));
  }
  // The job folder last: a run that fails publishes no job. A replicated job
  // reloads the recorded graph: the simulation's memory goes first.
  if (!flags.options.layout) sim->reset();
  WriteRanks(flags);
  if (flags.options.layout) WriteLayoutRanks(flags, **sim);
  return 0;
}
