// ettools.convert; see trace_convert.h.
#include "python/trace_convert.h"

#include <cmath>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "converter/converter.h"
#include "converter/multi_rank.h"
#include "converter/nsys/nsys_import.h"
#include "step/host_profile.h"

namespace et::python {
namespace {

absl::StatusOr<convert::ConvertOptions> OptionsOf(const ConvertCall& call) {
  convert::ConvertOptions o;
  if (call.keep == "all") {
    o.granularity = convert::Granularity::kAll;
  } else if (call.keep != "simulation") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--keep '%s': expected 'simulation' or 'all'", call.keep));
  }
  o.force_schema = call.force_schema;
  o.kineto_path = call.kineto;
  o.rank = static_cast<int>(call.rank);
  if (const std::string& ms = call.measured_step_ms; !ms.empty()) {
    double v = 0;
    if (!absl::SimpleAtod(ms, &v) || !(v > 0) || !std::isfinite(v)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--measured-step-ms '%s': expected a positive number of ms", ms));
    }
    o.measured_step_ms = v;
  }
  if (!call.host_profile.empty()) {
    if (call.ranks > 0) {
      return absl::InvalidArgumentError(
          "--host-profile: ettools.convert takes one light profile, for one "
          "input");
    }
    absl::StatusOr<HostProfileResult> learned =
        LearnHostProfile(call.host_profile);
    if (!learned.ok()) return learned.status();
    o.host_costs = learned->model;
  }
  return o;
}

// Each rank's summary once all are published (all or none).
absl::StatusOr<std::vector<std::string>> PublishRanks(
    std::vector<convert::RankResult> results) {
  std::vector<std::string> summaries;
  absl::Status first_failure;
  for (const convert::RankResult& r : results) {
    if (r.summary.ok()) {
      summaries.push_back(r.summary->ToJson());
    } else if (first_failure.ok()) {
      first_failure = absl::FailedPreconditionError(absl::StrFormat(
          "rank %d: %s", r.job.rank, r.summary.status().message()));
    }
  }
  ASSIGN_OR_RETURN(bool written, convert::PublishRankOutputs(&results));
  RETURN_IF_ERROR(first_failure);
  if (!written)
    return absl::FailedPreconditionError(
        "no output written (all ranks or none)");
  return summaries;
}

absl::StatusOr<std::vector<std::string>> ConvertRanksOf(
    const ConvertCall& call, const convert::ConvertOptions& options) {
  ASSIGN_OR_RETURN(
      std::vector<convert::RankJob> jobs,
      convert::JobsFromPattern(call.input, call.output, call.kineto,
                               static_cast<int>(call.ranks)));
  RETURN_IF_ERROR(convert::CheckJobInputs(jobs));
  const int threads =
      static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return PublishRanks(convert::ConvertRanks(jobs, options, threads));
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ConvertTrace(const ConvertCall& call) {
  if (call.ranks < 0 || call.ranks > 1 << 20)
    return absl::InvalidArgumentError("--ranks: expected a positive count");
  if (call.ranks == 0 && IsRankPattern(call.input)) {
    return absl::InvalidArgumentError(
        "'" + call.input +
        "': a rank pattern (%d) needs --ranks N, the number of ranks");
  }
  ASSIGN_OR_RETURN(convert::ConvertOptions options, OptionsOf(call));
  if (call.ranks > 0) return ConvertRanksOf(call, options);
  // An Nsight Systems export to 'out.%d.et': one graph per GPU and process,
  // as et-convert's RunNsys writes them.
  if (call.kineto.empty() && IsRankPattern(call.output) &&
      convert::IsNsysExport(call.input).value_or(false)) {
    ASSIGN_OR_RETURN(
        std::vector<convert::RankResult> results,
        convert::ConvertNsysExport(call.input, call.output, options));
    return PublishRanks(std::move(results));
  }
  if (IsRankPattern(call.output)) {
    return absl::InvalidArgumentError(
        "'" + call.input + "' -> '" + call.output +
        "': a rank pattern (%d) needs --ranks N, the number of ranks");
  }
  ASSIGN_OR_RETURN(convert::ConvertReport report,
                   convert::ConvertFile(call.input, call.output, options));
  return std::vector<std::string>{report.ToJson()};
}

}  // namespace et::python
