// et-convert: PyTorch execution trace (+ Kineto) -> Chakra .et; also .et ->
// JSON and ASTRA-sim text workloads -> .et. Flags are parsed here only; the
// work is in the library.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/atomic_output_file.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "base/text_escape.h"
#include "cli/cli_args.h"
#include "cli/flag_use.h"
#include "converter/astra_text/astra_text_converter.h"
#include "converter/converter.h"
#include "converter/cross_rank_check.h"
#include "converter/multi_rank.h"
#include "converter/nsys/nsys_import.h"
#include "nlohmann/json.hpp"
#include "proto/graph_json.h"
#include "step/host_profile.h"

ABSL_FLAG(std::string, kineto, "",
          "Kineto trace of the same run (a %d pattern with --ranks)");
ABSL_FLAG(std::string, host_profile, "",
          "a light Kineto trace of the same program (record_trace.py "
          "--kineto-light-out: no shapes, no ET observer): the unprofiled host "
          "costs learned from it are stored in the .et, where et-sim uses them "
          "by default (docs/step-model.md); with --ranks, a %d pattern: each "
          "rank's own");
ABSL_FLAG(std::string, keep, "simulation",
          "operator granularity: 'simulation' (no time counted twice) or 'all' "
          "(every node)");
ABSL_FLAG(std::string, measured_step_ms, "",
          "the step time of the same program without a profiler, in ms (the "
          "truth et-sim and et-replay compare with); overrides the Kineto "
          "trace's");
ABSL_FLAG(bool, force_schema, false, "try an unknown ET schema version anyway");
ABSL_FLAG(int, ranks, 0,
          "convert ranks 0..N-1: input and output paths hold a %d");
ABSL_FLAG(int, rank, -1,
          "rank of a single input, recorded in the graph metadata");
ABSL_FLAG(int, jobs, 0,
          "parallel conversions for several ranks (0: one per core)");
ABSL_FLAG(std::string, json_summary, "",
          "write the summary as JSON to this file ('-': stdout)");
ABSL_FLAG(
    bool, to_json, false,
    "convert a .et to one JSON document: et-convert --to-json in.et out.json");
ABSL_FLAG(bool, quiet, false, "no summary on stderr");
ABSL_FLAG(bool, astra_text, false,
          "convert an ASTRA-sim text workload: et-convert --astra-text w.txt "
          "'out.%d.et' --ranks N");
ABSL_FLAG(int, passes, 1, "with --astra-text: training iterations to unroll");
ABSL_FLAG(double, cycle_ns, 1.0,
          "with --astra-text: nanoseconds per ASTRA-sim cycle");

namespace {

using et::convert::ConvertOptions;
using et::convert::ConvertReport;

struct Options {
  std::string input, output;
  ConvertOptions convert;
  int ranks = 0;
  int jobs = 1;
  std::string json_summary;
  bool to_json = false;
  bool astra_text = false;
  et::convert::AstraTextOptions astra;
  bool quiet = false;
};

int Fail(const std::string& message, int exit_code = 1) {
  fprintf(stderr, "et-convert: error: %s\n",
          et::EscapeForPrint(message).c_str());
  return exit_code;
}

// An output that is one of the inputs (the trace, --kineto) would be
// overwritten while it is read; one that is a device, FIFO or symlink would be
// replaced by a file. Both are refused before any work.
absl::Status CheckOutputTarget(const Options& o) {
  for (const std::string& input : {o.input, o.convert.kineto_path}) {
    if (!input.empty() && et::IsSameFile(input, o.output)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the output is the input %s: refused (it would be overwritten "
          "while it is read)",
          o.output, input));
    }
  }
  return et::CheckOutputFileKind(o.output);
}

absl::StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options o;
  if (args.size() != 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expected an input and an output path, got %d arguments%s (try "
        "--help)",
        args.size() - 1,
        args.size() > 3
            ? et::RanksAsOneInputHint(
                  std::vector<std::string>(args.begin() + 1, args.end()),
                  "'OUT.%d.et'")
            : ""));
  }
  o.input = args[1];
  o.output = args[2];
  const std::string keep = absl::GetFlag(FLAGS_keep);
  if (keep == "all") {
    o.convert.granularity = et::convert::Granularity::kAll;
  } else if (keep != "simulation") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--keep '%s': expected 'simulation' or 'all'", keep));
  }
  o.convert.force_schema = absl::GetFlag(FLAGS_force_schema);
  o.convert.kineto_path = absl::GetFlag(FLAGS_kineto);
  o.convert.rank = absl::GetFlag(FLAGS_rank);
  if (const std::string ms = absl::GetFlag(FLAGS_measured_step_ms);
      !ms.empty()) {
    // A training step takes more than 1 us and less than a day (8.64e7 ms):
    // outside, a unit mistake (1e308 used to be kept and printed as the
    // truth).
    double v = 0;
    if (!absl::SimpleAtod(ms, &v) || !(v >= 1e-3) || !(v <= 8.64e7)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--measured-step-ms '%s': expected a number of ms in [0.001, "
          "8.64e7] (1 us to a day)",
          ms));
    }
    o.convert.measured_step_ms = v;
  }
  o.convert.show_progress = isatty(STDERR_FILENO);
  o.ranks = absl::GetFlag(FLAGS_ranks);
  o.jobs = absl::GetFlag(FLAGS_jobs);
  if (o.jobs <= 0) o.jobs = std::max(1u, std::thread::hardware_concurrency());
  o.json_summary = absl::GetFlag(FLAGS_json_summary);
  o.to_json = absl::GetFlag(FLAGS_to_json);
  o.quiet = absl::GetFlag(FLAGS_quiet);
  o.astra_text = absl::GetFlag(FLAGS_astra_text);
  o.astra.num_passes = absl::GetFlag(FLAGS_passes);
  o.astra.cycle_ns = absl::GetFlag(FLAGS_cycle_ns);
  // Checked before any per-rank job list is built from it.
  if (o.ranks < 0 || o.ranks > et::kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--ranks %d: needs an integer in [1, %d]", o.ranks, et::kMaxRanks));
  }
  if (o.ranks == 0 && !o.astra_text && !o.to_json &&
      (et::IsRankPattern(o.input) || et::IsRankPattern(o.output)) &&
      !(!et::IsRankPattern(o.input) &&
        et::convert::IsNsysExport(o.input).value_or(false))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s' -> '%s': a rank pattern (%%d) needs --ranks N, the number of "
        "ranks",
        o.input, o.output));
  }
  if (o.astra_text && o.ranks <= 0) {
    return absl::InvalidArgumentError(
        "--astra-text needs --ranks N (the number of NPUs)");
  }
  return o;
}

absl::Status WriteJsonSummary(const std::string& path,
                              const std::string& json) {
  if (path.empty()) return absl::OkStatus();
  if (path == "-") {
    printf("%s\n", json.c_str());
    return absl::OkStatus();
  }
  return et::WriteFileAtomically(path, json + "\n");
}

int RunSingle(const Options& o) {
  if (absl::Status s = et::convert::CheckKinetoIsNotEt(o.convert.kineto_path);
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  auto summary = et::convert::ConvertFile(o.input, o.output, o.convert);
  if (!summary.ok()) return Fail(std::string(summary.status().message()));
  if (!o.quiet) fprintf(stderr, "%s", summary->ToText().c_str());
  auto s = WriteJsonSummary(o.json_summary, summary->ToJson());
  return s.ok() ? 0 : Fail(std::string(s.message()));
}

// Whether the converted ranks agree: collectives per process group, and the
// shapes of their graphs. Warnings on stderr and in the JSON summary.
void ReportCrossRankCheck(const Options& o,
                          const std::vector<et::convert::RankTrace>& converted,
                          nlohmann::json* summary, std::string* info) {
  auto check = et::convert::CheckRanksAgree(converted);
  if (!check.ok()) {
    const std::string why(check.status().message());
    fprintf(stderr, "et-convert: warning: cross-rank check: %s\n",
            et::EscapeForPrint(why).c_str());
    (*summary)["cross_rank_check_error"] = why;
    return;
  }
  (*summary)["cross_rank_mismatches"] = check->collective_mismatches;
  for (const auto& m : check->collective_mismatches)
    fprintf(stderr, "et-convert: warning: %s\n", et::EscapeForPrint(m).c_str());
  if (!check->shape_mismatch.empty()) {
    (*summary)["cross_rank_shape_mismatch"] = check->shape_mismatch;
    fprintf(stderr, "et-convert: warning: %s\n",
            et::EscapeForPrint(check->shape_mismatch).c_str());
  } else {
    (*summary)["rank_graph_shape"] = check->shape;
  }
  if (o.quiet) return;
  if (check->collective_mismatches.empty()) {
    absl::StrAppendFormat(
        info,
        "cross-rank check (%d ranks): every process group's members "
        "issued the same collectives in the same order\n",
        converted.size());
  }
  if (check->shape_mismatch.empty()) {
    absl::StrAppendFormat(info,
                          "cross-rank check (%d ranks): every rank's graph has "
                          "%s\n",
                          converted.size(), check->shape);
  }
}

// Several ranks, all or none: the outputs appear only if every rank
// converted. The JSON summary says which ranks failed and why, and the
// cross-rank check runs on the ranks that converted either way (a mismatch
// there often explains the failure).
// Reports the ranks' conversions, checks them against each other and writes
// all outputs or none.
int FinishRanks(const Options& o,
                std::vector<et::convert::RankResult> results) {
  nlohmann::json summary = {{"ranks", nlohmann::json::array()},
                            {"failed", nlohmann::json::array()}};
  std::vector<et::convert::RankTrace> converted;
  std::string info;
  for (const auto& r : results) {
    if (!r.summary.ok()) {
      const std::string why(r.summary.status().message());
      fprintf(stderr, "et-convert: error: rank %d: %s\n", r.job.rank,
              et::EscapeForPrint(why).c_str());
      summary["failed"].push_back(
          {{"rank", r.job.rank}, {"input", r.job.input}, {"error", why}});
      continue;
    }
    // What each rank became is printed once all are published: a run that
    // fails says only why.
    if (!o.quiet)
      absl::StrAppend(&info, "rank ", r.job.rank, ": ", r.summary->ToText());
    summary["ranks"].push_back(nlohmann::json::parse(r.summary->ToJson()));
    converted.push_back({r.job.rank, r.staged, r.summary->digest});
  }
  const size_t failures = summary["failed"].size();
  if (converted.size() >= 2)
    ReportCrossRankCheck(o, converted, &summary, &info);
  auto written = et::convert::PublishRankOutputs(&results);
  if (!written.ok()) {
    summary["failed"].push_back(
        {{"rank", -1},
         {"input", ""},
         {"error", std::string(written.status().message())}});
  }
  summary["outputs_written"] = written.ok() && *written;
  if (absl::Status s = WriteJsonSummary(
          o.json_summary,
          summary.dump(-1, ' ', false,
                       nlohmann::json::error_handler_t::replace));
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (!written.ok()) return Fail(std::string(written.status().message()));
  if (failures > 0) {
    return Fail(absl::StrFormat(
        "%d of %d ranks failed; no output written (all ranks or none)",
        failures, results.size()));
  }
  fputs(info.c_str(), stderr);
  return 0;
}

// --host-profile with --ranks: a %d pattern, each rank's light profile for its
// own graph (ranks of one job differ: a rank that also runs the gloo work or
// the logging pays more host time per step).
absl::Status LearnRankHostProfiles(const Options& o,
                                   std::vector<et::convert::RankJob>* jobs) {
  const std::string pattern = absl::GetFlag(FLAGS_host_profile);
  if (pattern.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<std::string> paths,
                   et::ExpandRankPatternForRanks(pattern, o.ranks));
  for (et::convert::RankJob& job : *jobs) {
    ASSIGN_OR_RETURN(et::HostProfileResult learned,
                     et::LearnHostProfile(paths[job.rank]));
    job.host_costs = learned.model;
  }
  return absl::OkStatus();
}

int RunRanks(const Options& o) {
  auto jobs = o.ranks > 0
                  ? et::convert::JobsFromPattern(o.input, o.output,
                                                 o.convert.kineto_path, o.ranks)
                  : et::convert::JobsFromDirectory(o.input, o.output,
                                                   o.convert.kineto_path);
  if (!jobs.ok()) return Fail(std::string(jobs.status().message()));
  if (absl::Status s = et::convert::CheckJobInputs(*jobs); !s.ok())
    return Fail(std::string(s.message()));
  if (absl::Status s = LearnRankHostProfiles(o, &*jobs); !s.ok())
    return Fail(std::string(s.message()));
  return FinishRanks(o, et::convert::ConvertRanks(*jobs, o.convert, o.jobs));
}

// An Nsight Systems export: one graph per GPU and process, 'out.%d.et'.
int RunNsys(const Options& o) {
  auto results = et::convert::ConvertNsysExport(o.input, o.output, o.convert);
  if (!results.ok()) return Fail(std::string(results.status().message()));
  return FinishRanks(o, *std::move(results));
}

int RunAstraText(const Options& o) {
  auto summary =
      et::convert::ConvertAstraText(o.input, o.output, o.ranks, o.astra);
  if (!summary.ok()) return Fail(std::string(summary.status().message()));
  if (!o.quiet) {
    fprintf(stderr,
            "%s: %s, %d layers -> %d ranks x %d nodes (%d compute, %d "
            "communication)\n",
            o.input.c_str(), summary->parallelism.c_str(), summary->num_layers,
            summary->num_ranks, static_cast<int>(summary->nodes_per_rank),
            static_cast<int>(summary->comp_nodes_per_rank),
            static_cast<int>(summary->comm_nodes_per_rank));
    for (const auto& w : summary->warnings)
      fprintf(stderr, "  warning: %s\n", w.c_str());
  }
  return 0;
}

// Flags that mean something only with another input or flag: refused, not
// ignored (cli/flag_use.h).
void RefuseUnusedFlags(const Options& o) {
  const bool converts_trace = !o.to_json && !o.astra_text;
  const bool several = o.ranks > 0 || et::IsDirectory(o.input);
  const et::FlagUse uses[] = {
      {"passes", o.astra_text, "--astra-text (the iterations it unrolls)"},
      {"cycle_ns", o.astra_text, "--astra-text (its cycle length)"},
      {"kineto", converts_trace,
       "a PyTorch execution trace to link it with (not --to-json or "
       "--astra-text)"},
      {"measured_step_ms", converts_trace,
       "a trace to convert (not --to-json or --astra-text)"},
      {"host_profile", converts_trace && !et::IsDirectory(o.input),
       "a trace to convert (its light profile; with --ranks a %d pattern, "
       "not a directory, --to-json or --astra-text)"},
      {"keep", converts_trace,
       "a trace to convert (not --to-json or --astra-text)"},
      {"jobs", several && converts_trace,
       "several ranks (--ranks N or a directory of traces)"},
      {"rank", !several && converts_trace,
       "one rank's trace (with --ranks or a directory, each file's rank is "
       "its own)"},
  };
  et::RefuseUnusedFlags("et-convert", uses);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = et::ParseToolCommandLine(
      argc, argv,
      "PyTorch execution trace -> Chakra .et\n"
      "  et-convert in.json[.gz] out.et [--kineto trace.json] [--keep all]\n"
      "  et-convert 'rank_%d.json' 'out.%d.et' --ranks 8 [--kineto "
      "'kineto_%d.json']\n"
      "  et-convert trace.pt.trace.json[.gz] out.et   (a Kineto trace alone)\n"
      "  et-convert export.sqlite[.gz] 'out.%d.et'   (Nsight Systems: a graph "
      "per GPU and process)\n"
      "  et-convert traces_dir/ out_dir/\n"
      "  et-convert --to-json in.et out.json\n"
      "  et-convert --astra-text workload.txt 'out.%d.et' --ranks 8");
  auto options = ParseOptions(args);
  if (!options.ok()) {
    return Fail(std::string(options.status().message()), et::kUsageExitCode);
  }
  const Options& o = *options;
  RefuseUnusedFlags(o);
  // Outputs are checked before the work: a missing folder fails at once, not
  // after converting (the converter writes a temporary file beside each).
  if (!et::IsDirectory(o.input)) {
    if (absl::Status s = et::CheckOutputPath("", o.output); !s.ok())
      return Fail(std::string(s.message()));
    if (absl::Status s = CheckOutputTarget(o); !s.ok())
      return Fail(std::string(s.message()));
  }
  if (absl::Status s = et::CheckOutputPath("--json-summary", o.json_summary);
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  if (const std::string light = absl::GetFlag(FLAGS_host_profile);
      !light.empty() && o.ranks > 0 && !et::IsRankPattern(light)) {
    return Fail(absl::StrFormat("--host-profile %s: with --ranks %d, name each "
                                "rank's light profile with a %%d pattern "
                                "('light_r%%d.json')",
                                light, o.ranks),
                et::kUsageExitCode);
  } else if (!light.empty() && o.ranks == 0) {
    absl::StatusOr<et::HostProfileResult> learned = et::LearnHostProfile(light);
    if (!learned.ok()) return Fail(std::string(learned.status().message()));
    options->convert.host_costs = learned->model;
  }
  if (o.to_json) {
    auto s = et::EtToJsonFile(o.input, o.output);
    return s.ok() ? 0 : Fail(std::string(s.message()));
  }
  if (o.astra_text) return RunAstraText(o);
  if (o.ranks > 0 || et::IsDirectory(o.input)) return RunRanks(o);
  if (o.convert.kineto_path.empty() &&
      et::convert::IsNsysExport(o.input).value_or(false)) {
    return RunNsys(o);
  }
  return RunSingle(o);
}
