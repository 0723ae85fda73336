// The et-sim command: flags checked into SimOptions (usage errors), then the
// run (input errors). The order of the checks is the order users meet them.
#include "simulator/et_sim_command.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/gzip_input.h"
#include "base/input_limits.h"
#include "base/json_file.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "base/text_escape.h"
#include "model/process_group.h"
#include "nlohmann/json.hpp"
#include "scaleout/dp_sync.h"
#include "scaleout/layout_job.h"
#include "scaleout/parallel_layout.h"
#include "scaleout/rank_job_writer.h"
#include "scaleout/replicated_job.h"
#include "scaleout/staged_folder.h"
#include "simulator/calibration/comm_fit.h"
#include "simulator/calibration/nccl_tests_log.h"
#include "simulator/calibration/nccl_tests_table.h"
#include "simulator/comm/nccl_cost_model.h"
#include "simulator/input_checks.h"
#include "simulator/layout_search.h"
#include "simulator/layout_sweep.h"
#include "simulator/platform/network.h"
#include "simulator/report/html_report.h"
#include "simulator/report/report_compare.h"
#include "simulator/report/search_report.h"
#include "simulator/report/step_chart.h"
#include "simulator/simulation.h"
#include "step/host_profile.h"

namespace et::sim {
namespace {

// A mistake in the command line, and one in the inputs or the run.
absl::Status UsageError(const std::string& message) {
  return absl::InvalidArgumentError(message);
}
absl::Status InputError(const std::string& message) {
  return absl::FailedPreconditionError(message);
}
absl::Status ErrorOf(bool usage, const std::string& message) {
  return usage ? UsageError(message) : InputError(message);
}

// The command once its flags are checked.
struct Command {
  SimInput input;
  SimOptions options;
  bool json = false;
  std::string timeline;
  std::string html;
  std::string compare;  // --compare: the other input, run with these flags
  std::optional<scaleout::LayoutSweep> sweep;
  std::optional<LayoutSearch> search;  // --search world=N
  std::string chart;
  std::string write_ranks;
  std::string groups_path;
  size_t top = 15;
  EtSimOutput* out = nullptr;  // where the text goes, and the results
};

void PrintOut(EtSimOutput* out, const std::string& text) {
  if (out->print_out) return out->print_out(text);
  std::fputs(text.c_str(), stdout);
}
void PrintErr(EtSimOutput* out, const std::string& line) {
  if (out->print_err) return out->print_err(line);
  std::fputs(line.c_str(), stderr);
}
void PrintNote(EtSimOutput* out, const std::string& note) {
  PrintErr(out, "et-sim: note: " + EscapeForPrint(note) + "\n");
}

// Looks `value` up in `choices`; an error names the flag and the accepted
// values.
template <typename T>
absl::StatusOr<T> Choose(
    const char* flag, const std::string& value,
    std::initializer_list<std::pair<const char*, T>> choices) {
  std::string names;
  for (const auto& [name, v] : choices) {
    if (value == name) return v;
    names += names.empty() ? name : std::string(", ") + name;
  }
  return UsageError(std::string("--") + flag + ": expected " + names +
                    ", got '" + value + "'");
}

// --sweep and --chart, after the other flags (the sweep's points take them).
absl::Status ParseSweepFlags(const EtSimFlags& flags, Command* c) {
  const std::string& text = flags.sweep;
  c->chart = flags.chart;
  if (text.empty()) return absl::OkStatus();
  auto sweep = scaleout::ParseSweep(text);
  if (!sweep.ok())
    return UsageError("--sweep " + std::string(sweep.status().message()));
  // --layout dp=1 parses like no dp at all: the text says whether it was set.
  const std::string dim(scaleout::DimName(sweep->dim));
  for (absl::string_view item : absl::StrSplit(flags.layout, ',')) {
    if (absl::StartsWith(item, dim + "=")) {
      return UsageError("--sweep " + text + " with --layout " + flags.layout +
                        ": both set " + dim +
                        "; give --layout the other dimensions only");
    }
  }
  const SimOptions& o = c->options;
  for (auto [flag, given] :
       {std::make_pair("--world", o.world_size > 0),
        std::make_pair("--ranks", c->input.pattern_ranks > 0),
        std::make_pair("--measured-step-ms", o.measured_step_us > 0),
        std::make_pair("--timeline", !c->timeline.empty()),
        std::make_pair("--write-ranks", !flags.write_ranks.empty())}) {
    if (given) return UsageError(std::string("--sweep does not take ") + flag);
  }
  if (absl::Status s = CheckLayoutSweep(o, *sweep); !s.ok())
    return UsageError(std::string(s.message()));
  c->sweep = std::move(*sweep);
  return absl::OkStatus();
}

// --search world=N: alone of --layout and --sweep (it chooses the layout),
// and without the flags of one job.
absl::Status ParseSearchFlags(const EtSimFlags& flags, Command* c) {
  if (flags.search.empty()) return absl::OkStatus();
  for (auto [flag, given] :
       {std::make_pair("--layout", !flags.layout.empty()),
        std::make_pair("--sweep", !flags.sweep.empty()),
        std::make_pair("--world", c->options.world_size > 0),
        std::make_pair("--ranks", c->input.pattern_ranks > 0),
        std::make_pair("--measured-step-ms", c->options.measured_step_us > 0),
        std::make_pair("--timeline", !c->timeline.empty()),
        std::make_pair("--write-ranks", !flags.write_ranks.empty())}) {
    if (given) {
      return UsageError(absl::StrCat("--search ", flags.search,
                                     " does not take ", flag,
                                     " (it predicts every layout of the "
                                     "world itself)"));
    }
  }
  auto search = ParseLayoutSearch(flags.search);
  if (!search.ok()) return UsageError(std::string(search.status().message()));
  c->search = *search;
  return absl::OkStatus();
}

// --nodes, --gpus-per-node and NCCL's knobs, checked as usage errors.
absl::StatusOr<std::pair<ClusterShape, NcclFlags>> ClusterFlags(
    const EtSimFlags& flags) {
  ClusterShape shape;
  for (auto [flag, value, target] :
       {std::make_tuple("--nodes", flags.nodes, &shape.nodes),
        std::make_tuple("--gpus-per-node", flags.gpus_per_node,
                        &shape.gpus_per_node)}) {
    if (!value) continue;
    if (*value < 1 || *value > kMaxRanks)
      return UsageError(absl::StrFormat("%s %d: must be in [1, %d]", flag,
                                        *value, kMaxRanks));
    *target = *value;
  }
  if (shape.nodes > 0 && shape.gpus_per_node > 0 &&
      shape.nodes * shape.gpus_per_node > kMaxRanks) {
    return UsageError(absl::StrFormat(
        "--nodes x --gpus-per-node: more than %d ranks", kMaxRanks));
  }
  if (flags.world && shape.nodes > 0 && shape.gpus_per_node > 0 &&
      shape.nodes * shape.gpus_per_node != *flags.world) {
    return UsageError(absl::StrFormat(
        "--nodes %d x --gpus-per-node %d is %d ranks, not --world %d",
        shape.nodes, shape.gpus_per_node, shape.nodes * shape.gpus_per_node,
        *flags.world));
  }
  NcclFlags nccl{flags.nccl_algo, flags.nccl_proto};
  // Unset: the platform's; given, at least 1 (0 is a mistake, not "unset").
  for (auto [flag, value, target] :
       {std::make_tuple("--nccl-min-channels", flags.nccl_min_channels,
                        &nccl.min_channels),
        std::make_tuple("--nccl-max-channels", flags.nccl_max_channels,
                        &nccl.max_channels),
        std::make_tuple("--gpus-per-process", flags.gpus_per_process,
                        &nccl.gpus_per_process)}) {
    if (!value) continue;
    if (*value < 1 || *value > 64)
      return UsageError(
          absl::StrFormat("%s %d: must be in [1, 64]", flag, *value));
    *target = *value;
  }
  NcclSettings check;
  if (absl::Status s = ApplyNcclFlags(nccl, &check); !s.ok()) {
    return UsageError(absl::StrCat(
        "--nccl-algo/--nccl-proto/--nccl-*-channels/--gpus-per-process: ",
        s.message()));
  }
  return std::make_pair(shape, nccl);
}

// The input and the world: --world, --ranks and the cluster's shape.
absl::Status ParseWorld(const EtSimFlags& flags, Command* c) {
  const std::vector<std::string>& positional = flags.positional;
  if (positional.size() != 2) {
    return UsageError(
        positional.size() < 2
            ? "no input given (try --help)"
            : absl::StrCat("expected one input, got extra argument '",
                           positional[2], "'",
                           RanksAsOneInputHint(std::vector<std::string>(
                               positional.begin() + 1, positional.end()))));
  }
  SimOptions& o = c->options;
  c->input.path = positional[1];
  // Optional flags: unset means the default, but an explicit 0 or less is a
  // mistake, not a request for the default. Checked before anything is sized
  // by them.
  const std::optional<int64_t>& world = flags.world;
  const std::optional<int64_t>& ranks = flags.ranks;
  if (world && (*world < 1 || *world > kMaxRanks)) {
    return UsageError(
        absl::StrFormat("--world %d: must be in [1, %d]", *world, kMaxRanks));
  }
  if (ranks && (*ranks < 1 || *ranks > kMaxRanks)) {
    return UsageError(
        absl::StrFormat("--ranks %d: must be in [1, %d]", *ranks, kMaxRanks));
  }
  o.world_size = world.value_or(0);
  c->input.pattern_ranks = ranks.value_or(0);
  ASSIGN_OR_RETURN(std::tie(o.cluster, o.nccl), ClusterFlags(flags));
  if (o.world_size == 0 && o.cluster.nodes > 0 && o.cluster.gpus_per_node > 0) {
    const int64_t product = o.cluster.nodes * o.cluster.gpus_per_node;
    if (ranks && *ranks != product) {
      return UsageError(absl::StrFormat(
          "--nodes %d x --gpus-per-node %d is %d ranks, not --ranks %d",
          o.cluster.nodes, o.cluster.gpus_per_node, product, *ranks));
    }
    // --layout and --sweep make their own world; the shape is checked
    // against it when the network is resolved.
    if (!ranks && flags.layout.empty() && flags.sweep.empty() &&
        flags.search.empty())
      o.world_size = product;
  }
  // --ranks counts the files of a pattern; a single file runs as every rank
  // of --world N (it once probed that one file for rank N+1 forever).
  if (ranks && !IsRankPattern(c->input.path) && !IsDirectory(c->input.path)) {
    return UsageError(absl::StrFormat(
        "'%s': --ranks %d counts the files of a rank pattern (out.%%d.et); "
        "one trace runs as every rank with --world %d",
        c->input.path, *ranks, *ranks));
  }
  // The same usage error, and exit status, as et-convert's.
  if (!ranks && IsRankPattern(c->input.path)) {
    return UsageError("'" + c->input.path +
                      "': a rank pattern (%d) needs --ranks N, the number of "
                      "ranks");
  }
  return absl::OkStatus();
}

// The models: --schedule, --compute, --host-time, --comm, --algorithm.
absl::Status ParseModels(const EtSimFlags& flags, SimOptions* o) {
  ASSIGN_OR_RETURN(
      o->scheduling,
      Choose<SchedulingMode>("schedule", flags.schedule,
                             {{"stream", SchedulingMode::kStreamAware},
                              {"astra", SchedulingMode::kAstraCompat}}));
  ASSIGN_OR_RETURN(
      o->compute_model,
      Choose<ComputeModel>("compute", flags.compute,
                           {{"recorded", ComputeModel::kRecorded},
                            {"roofline", ComputeModel::kRoofline},
                            {"calibrated", ComputeModel::kCalibrated}}));
  ASSIGN_OR_RETURN(o->host_time, Choose<HostTimeMode>(
                                     "host-time", flags.host_time,
                                     {{"unprofiled", HostTimeMode::kUnprofiled},
                                      {"recorded", HostTimeMode::kRecorded}}));
  ASSIGN_OR_RETURN(
      o->comm_model,
      Choose<CommModel>("comm", flags.comm,
                        {{"nccl", CommModel::kNccl},
                         {"alpha-beta", CommModel::kAlphaBeta},
                         {"model", CommModel::kAlphaBeta},
                         {"recorded", CommModel::kRecorded},
                         {"calibrated", CommModel::kCalibrated},
                         {"astra", CommModel::kAstra},
                         {"astra-aware", CommModel::kAstraAware}}));
  ASSIGN_OR_RETURN(o->algorithm,
                   Choose<CollectiveAlgorithm>(
                       "algorithm", flags.algorithm,
                       {{"auto", CollectiveAlgorithm::kAuto},
                        {"ring", CollectiveAlgorithm::kRing},
                        {"tree", CollectiveAlgorithm::kTree},
                        {"direct", CollectiveAlgorithm::kDirect},
                        {"hierarchical", CollectiveAlgorithm::kHierarchical}}));
  return absl::OkStatus();
}

// The host, the truth, the device and the what-ifs.
absl::Status ParseHostAndDevice(const EtSimFlags& flags, SimOptions* o) {
  if (!flags.host_profile.empty()) {
    auto learned = LearnHostProfile(flags.host_profile);
    if (!learned.ok())
      return UsageError(std::string(learned.status().message()));
    o->host_model = learned->model;
    o->host_model_given = true;
  }
  o->host_model.host_speed = flags.host_speed;
  if (!(o->host_model.host_speed > 0) ||
      !std::isfinite(o->host_model.host_speed))
    return UsageError("--host-speed: expected a positive factor");
  o->calibration_file = flags.calibration;
  if (const std::string& ms = flags.measured_step_ms; !ms.empty()) {
    double v = 0;
    if (!absl::SimpleAtod(ms, &v) || !(v > 0) || !std::isfinite(v))
      return UsageError("--measured-step-ms '" + ms +
                        "': expected a positive number of ms");
    o->measured_step_us = v * 1000.0;
  }
  o->device = flags.device;
  o->device_file = flags.device_file;
  o->compute_scale = flags.compute_scale;
  for (const std::string& item : flags.slow_rank) {
    std::vector<std::string> parts = absl::StrSplit(item, ':');
    int64_t rank = 0;
    double factor = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &rank) ||
        !absl::SimpleAtod(parts[1], &factor)) {
      return UsageError("--slow-rank: expected RANK:FACTOR, got '" + item +
                        "'");
    }
    o->rank_slowdown[rank] = factor;
  }
  return absl::OkStatus();
}

// The network, the groups and the layout.
absl::Status ParseJob(const EtSimFlags& flags, SimOptions* o) {
  o->nccl_efficiency = flags.nccl_efficiency;
  o->topology = flags.topology;
  o->astra_system = flags.astra_system;
  o->comm_from = flags.comm_from;
  o->use_rank_symmetry = !flags.no_symmetry;
  if (!flags.groups.empty()) {
    std::string text;
    absl::Status read = ReadFileMaybeGzip(flags.groups, &text);
    if (!read.ok()) return UsageError(std::string(read.message()));
    // A config file: no key twice (base/json_file.h), then its groups.
    if (auto checked = ParseConfigJson(text, flags.groups); !checked.ok())
      return UsageError(std::string(checked.status().message()));
    auto parsed = ParseProcessGroupJson(text);
    if (!parsed.ok())
      return UsageError(flags.groups + ": " +
                        std::string(parsed.status().message()));
    o->groups_override = std::move(*parsed);
  }
  for (auto [flag, value, target] :
       {std::make_tuple("layout", flags.layout, &o->layout),
        std::make_tuple("recorded-layout", flags.recorded_layout,
                        &o->recorded_layout)}) {
    if (value.empty()) continue;
    auto parsed = scaleout::ParseLayout(value);
    if (!parsed.ok())
      return UsageError(
          absl::StrFormat("--%s %s", flag, parsed.status().message()));
    *target = *parsed;
  }
  if (flags.micro_batches < 1)
    return UsageError(absl::StrFormat(
        "--micro-batches %d: a pipeline needs at least one micro-batch",
        flags.micro_batches));
  o->micro_batches = flags.micro_batches;
  o->sequence_parallel = flags.sequence_parallel;
  {
    auto schedule = scaleout::ParsePpSchedule(flags.pp_schedule);
    if (!schedule.ok())
      return UsageError(
          absl::StrCat("--pp-schedule: ", schedule.status().message()));
    o->pp_schedule = schedule->schedule;
    o->pp_chunks = schedule->chunks;
  }
  if (!flags.pp_split.empty()) {
    for (absl::string_view part : absl::StrSplit(flags.pp_split, ',')) {
      int64_t blocks = 0;
      if (!absl::SimpleAtoi(part, &blocks))
        return UsageError(absl::StrFormat(
            "--pp-split %s: '%s' is no number of blocks (expected a,b,... "
            "with one count per stage)",
            flags.pp_split, part));
      o->pp_split.push_back(blocks);
    }
    if (!o->layout || o->layout->of(scaleout::Dim::kPp) < 2)
      return UsageError(absl::StrFormat(
          "--pp-split %s: needs --layout with pp >= 2 (it gives a pipeline's "
          "stages their blocks)",
          flags.pp_split));
  }
  if (!flags.dp_sync.empty()) {
    auto parsed = scaleout::ParseDpSyncMode(flags.dp_sync);
    if (!parsed.ok())
      return UsageError(absl::StrCat("--dp-sync: ", parsed.status().message()));
    o->dp_sync = *parsed;
    o->shard_stage = scaleout::ShardStageOf(flags.dp_sync);
  }
  o->memory = !flags.no_memory;
  o->device_memory_gib = flags.device_memory_gib;
  if (o->device_memory_gib < 0 || !std::isfinite(o->device_memory_gib) ||
      o->device_memory_gib > 1e9)
    return UsageError(
        absl::StrFormat("--device-memory-gib %g: expected a size in GiB",
                        o->device_memory_gib));
  const double bucket_mb = flags.bucket_mb;
  if (!(bucket_mb > 0) || bucket_mb > 1024 * 1024)
    return UsageError(absl::StrFormat(
        "--bucket-mb %g: expected a positive size in MiB", bucket_mb));
  o->bucket_cap_bytes = static_cast<int64_t>(bucket_mb * 1024 * 1024);
  o->keep_graph = o->layout.has_value() && !flags.write_ranks.empty();
  if (o->layout && o->world_size > 0 && o->world_size != o->layout->world()) {
    return UsageError(absl::StrFormat(
        "--world %d but --layout %s spans %d ranks", o->world_size,
        o->layout->ToString(), o->layout->world()));
  }
  if (o->layout && !o->groups_override.empty())
    return UsageError(
        "--layout places the trace's own groups; it does not take --groups");
  return absl::OkStatus();
}

// Every flag of a trace run, checked in the order users meet them.
absl::StatusOr<Command> ParseCommand(const EtSimFlags& flags) {
  Command c;
  RETURN_IF_ERROR(ParseWorld(flags, &c));
  RETURN_IF_ERROR(ParseModels(flags, &c.options));
  RETURN_IF_ERROR(ParseHostAndDevice(flags, &c.options));
  RETURN_IF_ERROR(ParseJob(flags, &c.options));
  c.json = flags.json;
  c.timeline = flags.timeline;
  c.html = flags.html;
  c.compare = flags.compare;
  c.write_ranks = flags.write_ranks;
  c.groups_path = flags.groups;
  RETURN_IF_ERROR(ParseSweepFlags(flags, &c));
  RETURN_IF_ERROR(ParseSearchFlags(flags, &c));
  if (flags.top <= 0) return UsageError("--top: must be positive");
  c.top = static_cast<size_t>(flags.top);
  return c;
}

// Mistakes that would still give a plausible number; see input_checks.h.
// Returns the notes, printed once the run succeeded (an error is one line).
absl::StatusOr<std::vector<std::string>> CheckInputs(const Command& c,
                                                     const Simulation& sim) {
  std::vector<std::string> notes;
  const std::optional<InputFacts> facts = FactsOf(sim.model(0), sim.file(0));
  const bool groups_given = !c.options.groups_override.empty();
  if (c.input.pattern_ranks > 0) {
    absl::Status s = CheckRankCount(c.input.path, c.input.pattern_ranks, *facts,
                                    groups_given);
    if (!s.ok()) return InputError(std::string(s.message()));
  }
  absl::Status s =
      CheckGroupsApply(c.options.groups_override, c.groups_path, *facts);
  if (!s.ok()) return InputError(std::string(s.message()));
  for (const std::string& note :
       {GroupsNote(c.options.groups_override, *facts),
        DurationsNote(*facts, c.options, sim.compute_device())}) {
    if (!note.empty()) notes.push_back(note);
  }
  return notes;
}

// et-sim --nccl-tests OP: the model's nccl-tests table; no trace involved.
absl::Status RunNcclTests(const EtSimFlags& flags, EtSimOutput* out) {
  const std::optional<NcclOp> op = NcclOpByName(flags.nccl_tests);
  if (!op) {
    return UsageError("--nccl-tests '" + flags.nccl_tests +
                      "': expected all_reduce, all_gather, reduce_scatter, "
                      "alltoall, broadcast or sendrecv");
  }
  if (flags.positional.size() > 1)
    return UsageError("--nccl-tests takes no input, got '" +
                      flags.positional[1] + "'");
  ASSIGN_OR_RETURN(auto cluster, ClusterFlags(flags));
  const auto& [shape, nccl] = cluster;
  std::optional<int64_t> given_world = flags.world;
  if (!given_world && shape.nodes > 0 && shape.gpus_per_node > 0)
    given_world = shape.nodes * shape.gpus_per_node;
  int64_t world = given_world.value_or(8);
  if (world < 2 || world > kMaxRanks)
    return UsageError(
        absl::StrFormat("--world %d: must be in [2, %d]", world, kMaxRanks));
  auto min_bytes = ParseNcclTestsSize(flags.min_bytes);
  auto max_bytes = ParseNcclTestsSize(flags.max_bytes);
  if (!min_bytes.ok())
    return UsageError("--min-bytes " + min_bytes.status().ToString());
  if (!max_bytes.ok())
    return UsageError("--max-bytes " + max_bytes.status().ToString());
  if (*min_bytes > *max_bytes)
    return UsageError("--min-bytes must not exceed --max-bytes");
  // With --comm-from and no --topology, the platform of the logs' GPU. A log
  // that cannot be read is an input's mistake (exit 1).
  const std::vector<std::string>& logs = flags.comm_from;
  std::string log_device;
  if (!logs.empty()) {
    auto parsed = LoadNcclTestsLogs(logs);
    if (!parsed.ok()) return InputError(std::string(parsed.status().message()));
    log_device = parsed->device_name;
  }
  // The cluster's shape is the flags' (a preset name, --world, --nodes): a
  // usage error; a --topology that names a file is an input (exit 1).
  const std::string& topology = flags.topology;
  std::error_code ec;
  const bool usage = topology.empty() || !std::filesystem::exists(topology, ec);
  if (!given_world && shape.nodes > 0) {
    // --nodes alone: nodes of the platform's own size.
    auto node = ResolveNetwork(topology, log_device, !logs.empty(), 1);
    if (!node.ok()) return ErrorOf(usage, std::string(node.status().message()));
    world = shape.nodes * node->platform.gpus_per_node;
  }
  auto network = ResolveNetwork(topology, log_device, !logs.empty(), world,
                                false, shape, nccl);
  if (!network.ok())
    return ErrorOf(usage, std::string(network.status().message()));
  // The flags are all read: what follows is the inputs'.
  if (!logs.empty()) {
    Platform node = network->node_platform;
    auto fitted = FitPlatformToLogs(logs, &node);
    if (!fitted.ok()) return InputError(std::string(fitted.status().message()));
    RefitNode(node, &*network);
    PrintNote(out, *fitted);
  }
  const std::vector<NcclTestsRow> rows =
      NcclTestsTable(network->platform, *op, world, *min_bytes, *max_bytes);
  const std::string text =
      flags.json ? FormatNcclTestsJson(rows, *op, world, network->name,
                                       network->cluster)
                 : FormatNcclTestsText(rows, *op, world, network->name,
                                       network->cluster);
  PrintOut(out, text);
  out->nccl_tests = rows;
  return absl::OkStatus();
}

// Prints where the job went and how ASTRA-sim reads it.
void ReportJob(const scaleout::RankJobSpec& spec,
               const scaleout::RankJobResult& job, EtSimOutput* out) {
  std::string groups;
  if (!job.comm_groups_path.empty())
    groups = " --comm-group-configuration=" + job.comm_groups_path;
  PrintErr(out,
           absl::StrFormat(
               "et-sim: note: wrote %d ranks (%d nodes, %d collectives) "
               "for ASTRA-sim: --workload-configuration=%s%s (its "
               "network must have %d NPUs)\n",
               static_cast<int>(spec.world_size), static_cast<int>(job.nodes),
               static_cast<int>(job.collectives),
               scaleout::WorkloadConfiguration(spec), groups,
               static_cast<int>(spec.world_size)));
  if (!job.astra_teardown_abort.empty()) {
    PrintErr(out, absl::StrFormat(
                      "et-sim: note: %s: ASTRA-sim (518bd51) runs this job to "
                      "the end, then aborts at exit freeing that collective's "
                      "implementation twice (docs/astra-sim.md has the fix)\n",
                      job.astra_teardown_abort));
  }
}

// --write-ranks DIR: the job this run simulates, one graph per rank, for
// ASTRA-sim. Checked before the simulation, which the job is written after.
absl::Status CheckWriteRanksInput(const Command& c) {
  if (c.write_ranks.empty()) return absl::OkStatus();
  if (c.input.pattern_ranks > 0 || IsDirectory(c.input.path)) {
    return InputError(
        "--write-ranks: takes one recorded rank's .et (with --world N or "
        "--layout), not several ranks' files");
  }
  return absl::OkStatus();
}

// `Source`: a replicated rank's stream, or a layout's graphs.
template <typename Source>
absl::Status WriteJob(const Command& c, const scaleout::RankJobSpec& spec,
                      absl::StatusOr<Source> source) {
  if (!source.ok()) {
    return InputError(absl::StrCat(
        c.input.path, ": --write-ranks: ", source.status().message()));
  }
  auto job = scaleout::WriteRankJob(spec, *source);
  if (!job.ok()) return InputError(std::string(job.status().message()));
  ReportJob(spec, *job, c.out);
  return absl::OkStatus();
}

// One recorded rank (a single input) made into the `world` it was simulated
// in (--world N, else its recorded world).
absl::Status WriteReplicatedRanks(const Command& c, int64_t world) {
  const scaleout::RankJobSpec spec{c.write_ranks,
                                   scaleout::JobStemFor(c.input.path), world};
  return WriteJob(c, spec, scaleout::ReplicatedFileSource(c.input.path, world));
}

// With --layout: every rank of the layout, each with the synthesized
// collectives and its own groups (scaleout/layout_job.h).
absl::Status WriteLayoutRanks(const Command& c, const Simulation& sim) {
  const scaleout::ParallelLayout& layout = *c.options.layout;
  const scaleout::RankJobSpec spec{
      c.write_ranks, scaleout::JobStemFor(c.input.path), layout.world()};
  if (!sim.stage_graphs().empty()) {
    return WriteJob(c, spec,
                    scaleout::PipelineRankSource(
                        sim.stage_graphs(), *sim.recorded_layout(), layout));
  }
  return WriteJob(c, spec,
                  scaleout::LayoutRankSource(*sim.layout_graph(),
                                             *sim.recorded_layout(), layout));
}

// et-sim TRACE --sweep dp=1,2,4: a row per point, and the chart.
absl::Status RunSweep(const Command& c) {
  auto result = RunLayoutSweep(c.input, c.options, *c.sweep);
  if (!result.ok()) return InputError(std::string(result.status().message()));
  const std::string text =
      c.json ? FormatSweepJson(*result) + "\n" : FormatSweepText(*result);
  PrintOut(c.out, text);
  if (!c.chart.empty()) {
    absl::Status s = WriteStepChart(*result, c.chart);
    if (!s.ok()) return InputError(c.chart + ": " + std::string(s.message()));
  }
  if (!c.html.empty()) {
    HtmlReportInput page;
    page.trace = c.input.path;
    page.sweep = &*result;
    absl::Status s = WriteHtmlReport(page, c.html);
    if (!s.ok()) return InputError(c.html + ": " + std::string(s.message()));
  }
  c.out->sweep = std::move(*result);
  return absl::OkStatus();
}

// et-sim TRACE --search world=N: the ranked layouts, the chart, the page.
absl::Status RunSearch(const Command& c) {
  auto result = RunLayoutSearch(c.input, c.options, *c.search);
  if (!result.ok()) return InputError(std::string(result.status().message()));
  PrintOut(c.out, c.json ? FormatSearchJson(*result) + "\n"
                         : FormatSearchText(*result));
  if (!c.chart.empty()) {
    absl::Status s = WriteStepChart(*result, c.chart);
    if (!s.ok()) return InputError(c.chart + ": " + std::string(s.message()));
  }
  if (!c.html.empty()) {
    HtmlReportInput page;
    page.trace = c.input.path;
    page.sweep = &*result;
    absl::Status s = WriteHtmlReport(page, c.html);
    if (!s.ok()) return InputError(c.html + ": " + std::string(s.message()));
  }
  c.out->sweep = std::move(*result);
  return absl::OkStatus();
}

// Outputs are checked before the work (base/path.h): a missing folder fails
// at once, not after the whole report is printed.
absl::Status CheckOutputs(const Command& c) {
  for (auto [flag, path] :
       {std::make_pair("--timeline", c.timeline),
        std::make_pair("--chart", c.chart), std::make_pair("--html", c.html)}) {
    if (absl::Status s = CheckOutputPath(flag, path); !s.ok())
      return InputError(std::string(s.message()));
  }
  // --write-ranks DIR may exist (empty) or be made; its parent must exist.
  std::string dir = c.write_ranks;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (!dir.empty() && !IsDirectory(dir)) {
    if (absl::Status s = CheckOutputPath("--write-ranks", dir); !s.ok())
      return InputError(std::string(s.message()));
  }
  // An existing folder must be empty: refused before the simulation, not after.
  if (!dir.empty() && IsDirectory(dir)) {
    if (absl::Status s = scaleout::CheckStagedFolderTarget(c.write_ranks);
        !s.ok())
      return InputError(std::string(s.message()));
  }
  return absl::OkStatus();
}

// --compare OTHER: the other input run with the same flags, for its report
// alone (its simulation is dropped). Its notes and errors name it.
absl::StatusOr<Report> SimulateOther(const Command& c,
                                     std::vector<std::string>* notes) {
  Command other = c;
  other.input.path = c.compare;
  other.options.keep_timeline = false;
  auto sim = Simulation::Load(other.input, other.options);
  if (!sim.ok())
    return InputError(
        absl::StrCat("--compare ", c.compare, ": ", sim.status().message()));
  ASSIGN_OR_RETURN(const std::vector<std::string> other_notes,
                   CheckInputs(other, **sim));
  if (absl::Status s = (*sim)->Simulate(other.options); !s.ok())
    return InputError(absl::StrCat("--compare ", c.compare, ": ", s.message()));
  for (const std::string& note : other_notes)
    notes->push_back(absl::StrCat("--compare ", c.compare, ": ", note));
  return (*sim)->report();
}

// The report as printed: text or JSON, with the comparison when there is one.
std::string ReportText(const Command& c, const Report& report,
                       const std::optional<ReportComparison>& comparison) {
  if (c.json && !comparison) return FormatReportJson(report) + "\n";
  if (c.json) {
    nlohmann::json j = ReportJson(report);
    j["compare"] = ComparisonJson(*comparison);
    return j.dump(1) + "\n";
  }
  std::string text = FormatReportText(report, c.top);
  if (comparison)
    absl::StrAppend(&text, FormatComparisonText(*comparison, c.top));
  return text;
}

// One simulation: its report, timeline and job.
absl::Status RunTrace(Command c) {
  c.options.keep_timeline = !c.timeline.empty();
  c.options.keep_memory_lives = c.out->keep_simulation;
  RETURN_IF_ERROR(CheckWriteRanksInput(c));
  auto sim = Simulation::Load(c.input, c.options);
  if (!sim.ok()) return InputError(std::string(sim.status().message()));
  ASSIGN_OR_RETURN(std::vector<std::string> notes, CheckInputs(c, **sim));
  if (absl::Status s = (*sim)->Simulate(c.options); !s.ok())
    return InputError(std::string(s.message()));
  const Report& report = (*sim)->report();
  // The other run before any output: an error in it is the one line printed.
  std::optional<ReportComparison> comparison;
  if (!c.compare.empty()) {
    ASSIGN_OR_RETURN(const Report other, SimulateOther(c, &notes));
    comparison = CompareReports(c.input.path, report, c.compare, other);
  }
  for (const std::string& note : notes) PrintNote(c.out, note);
  // A caller that formats the report itself (print_report false: Python)
  // still gets the comparison, which only this text holds.
  if (c.out->print_report || comparison)
    PrintOut(c.out, ReportText(c, report, comparison));
  c.out->report = report;
  if (!c.timeline.empty()) {
    absl::Status s =
        WriteTimeline((*sim)->classes(), (*sim)->result(), c.timeline);
    if (!s.ok())
      return InputError(c.timeline + ": " + std::string(s.message()));
  }
  if (!c.html.empty()) {
    HtmlReportInput page;
    page.trace = c.input.path;
    page.report = &report;
    page.classes = &(*sim)->classes();
    page.result = &(*sim)->result();
    page.timeline_path = c.timeline;
    if (comparison) page.comparison = &*comparison;
    absl::Status s = WriteHtmlReport(page, c.html);
    if (!s.ok()) return InputError(c.html + ": " + std::string(s.message()));
  }
  // The job folder last: a run that fails publishes no job. A replicated job
  // reloads the recorded graph: the simulation's memory goes first.
  if (!c.write_ranks.empty() && c.options.layout)
    RETURN_IF_ERROR(WriteLayoutRanks(c, **sim));
  if (!c.write_ranks.empty() && !c.options.layout) {
    const int64_t world = std::max<int64_t>((*sim)->world_size(), 1);
    sim->reset();
    return WriteReplicatedRanks(c, world);
  }
  if (c.out->keep_simulation) c.out->simulation = std::move(*sim);
  return absl::OkStatus();
}

}  // namespace

std::vector<EtSimFlagUse> EtSimFlagUses(const EtSimFlags& flags) {
  const bool nccl_tests = !flags.nccl_tests.empty();
  const bool scaled =
      !flags.layout.empty() || !flags.sweep.empty() || !flags.search.empty();
  // The closed-form model is the one that reads the algorithm and the
  // efficiency: NCCL's model picks its own, ASTRA-sim's has one.
  const bool alpha_beta = flags.comm == "alpha-beta" || flags.comm == "model";
  const bool unprofiled = flags.host_time == "unprofiled";
  return {
      {"calibration", flags.compute == "calibrated",
       "--compute calibrated (the model that reads it)"},
      {"dp_sync", scaled, "--layout or --sweep (the job whose dp it syncs)"},
      {"bucket_mb", scaled,
       "--layout or --sweep (the job whose gradient buckets it sizes)"},
      {"micro_batches", scaled, "--layout or --sweep (a pipeline's, pp=P)"},
      {"pp_schedule", scaled, "--layout or --sweep (a pipeline's, pp=P)"},
      {"pp_split", !flags.layout.empty(),
       "--layout (one pipeline's stages; a sweep or search varies pp)"},
      {"sequence_parallel", scaled,
       "--layout or --sweep (tensor parallelism's, tp=T)"},
      {"recorded_layout", scaled,
       "--layout or --sweep (the job to predict from the recorded one)"},
      {"chart", !flags.sweep.empty() || !flags.search.empty(),
       "--sweep or --search (the chart draws a sweep or a search)"},
      {"html", !nccl_tests, "a trace (the page reports a run or a sweep)"},
      {"compare", !nccl_tests && flags.sweep.empty() && flags.search.empty(),
       "a trace run without --sweep or --search (it compares two runs)"},
      {"min_bytes", nccl_tests, "--nccl-tests (the sizes of its table)"},
      {"max_bytes", nccl_tests, "--nccl-tests (the sizes of its table)"},
      {"astra_system", flags.comm == "astra" || flags.comm == "astra-aware",
       "--comm astra or astra-aware"},
      {"host_profile", unprofiled,
       "--host-time unprofiled (the host cost it learns)"},
      {"host_speed", unprofiled && !nccl_tests,
       "--host-time unprofiled (the host model it scales; recorded host "
       "times are kept as they are)"},
      {"algorithm", alpha_beta && !nccl_tests,
       "--comm alpha-beta (the closed-form model it picks for; NCCL's model "
       "chooses as NCCL does)"},
      {"nccl_efficiency", alpha_beta && !nccl_tests,
       "--comm alpha-beta (the closed-form model whose bandwidth it scales)"},
      {"device_memory_gib", !flags.no_memory && !nccl_tests,
       "the memory model of a trace (not --no-memory, not --nccl-tests)"},
  };
}

absl::Status RunEtSim(const EtSimFlags& flags) {
  EtSimOutput output;
  return RunEtSim(flags, &output);
}

absl::Status RunEtSim(const EtSimFlags& flags, EtSimOutput* output) {
  if (!flags.nccl_tests.empty()) return RunNcclTests(flags, output);
  ASSIGN_OR_RETURN(Command command, ParseCommand(flags));
  command.out = output;
  RETURN_IF_ERROR(CheckOutputs(command));
  if (command.sweep) return RunSweep(command);
  if (command.search) return RunSearch(command);
  return RunTrace(std::move(command));
}

}  // namespace et::sim
