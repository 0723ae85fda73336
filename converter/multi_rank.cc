// Multi-rank conversion; see multi_rank.h.
#include "converter/multi_rank.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "converter/converter.h"
#include "converter/kineto_only/kineto_only_import.h"
#include "proto/et_reader.h"

namespace et::convert {

absl::StatusOr<std::vector<RankJob>> JobsFromPattern(
    const std::string& input_pattern, const std::string& output_pattern,
    const std::string& kineto_pattern, int ranks) {
  ASSIGN_OR_RETURN(std::vector<std::string> inputs,
                   ExpandRankPatternForRanks(input_pattern, ranks));
  ASSIGN_OR_RETURN(std::vector<std::string> outputs,
                   ExpandRankPatternForRanks(output_pattern, ranks));
  std::vector<std::string> kinetos(inputs.size());
  if (!kineto_pattern.empty()) {
    ASSIGN_OR_RETURN(kinetos, ExpandRankPatternForRanks(kineto_pattern, ranks));
  }
  std::vector<RankJob> jobs;
  jobs.reserve(inputs.size());
  for (size_t r = 0; r < inputs.size(); ++r) {
    jobs.push_back({static_cast<int>(r),
                    std::move(inputs[r]),
                    std::move(outputs[r]),
                    std::move(kinetos[r]),
                    {}});
  }
  return jobs;
}

namespace {

struct EtAndKineto {
  std::string et, kineto;
};

// A rank's files in a folder: its ET alone, or its ET and its Kineto trace
// (a recorder's two files, "megatron_et_0.json" and "megatron_kineto_0.json"),
// told apart by their content; anything else is ambiguous.
absl::StatusOr<EtAndKineto> PairRankFiles(const std::string& dir, int rank,
                                          const std::vector<std::string>& files,
                                          bool kineto_given) {
  if (files.size() == 1) return EtAndKineto{files[0], ""};
  std::vector<std::string> ets, kinetos;
  for (const std::string& f : files) {
    ASSIGN_OR_RETURN(bool kineto, IsKinetoTrace(f));
    (kineto ? kinetos : ets).push_back(f);
  }
  if (files.size() == 2 && ets.size() == 1 && kinetos.size() == 1 &&
      !kineto_given)
    return EtAndKineto{ets[0], kinetos[0]};
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s would all be rank %d (%d execution trace(s), %d Kineto "
      "trace(s)%s); keep one ET per rank, with at most its Kineto trace",
      dir, absl::StrJoin(files, " and "), rank, ets.size(), kinetos.size(),
      kineto_given ? ", and --kineto given" : ""));
}

}  // namespace

absl::StatusOr<std::vector<RankJob>> JobsFromDirectory(
    const std::string& input_dir, const std::string& output_dir,
    const std::string& kineto_pattern) {
  ASSIGN_OR_RETURN(std::vector<std::vector<std::string>> groups,
                   ListRankFileGroups(input_dir, ".json"));
  std::vector<std::string> inputs, kinetos;
  for (size_t r = 0; r < groups.size(); ++r) {
    ASSIGN_OR_RETURN(EtAndKineto pair,
                     PairRankFiles(input_dir, static_cast<int>(r), groups[r],
                                   !kineto_pattern.empty()));
    inputs.push_back(std::move(pair.et));
    kinetos.push_back(std::move(pair.kineto));
  }
  if (!kineto_pattern.empty()) {
    if (inputs.size() > 1 && !IsRankPattern(kineto_pattern)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--kineto %s: %s holds %d ranks' traces; name their Kineto traces "
          "with a %%d pattern ('kineto_r%%d.json')",
          kineto_pattern, input_dir, inputs.size()));
    }
    for (size_t r = 0; r < inputs.size(); ++r)
      kinetos[r] = ExpandRankPattern(kineto_pattern, static_cast<int64_t>(r));
  }
  if (!IsDirectory(output_dir)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: with a directory of traces, the output must be an "
                        "existing directory",
                        output_dir));
  }
  std::vector<RankJob> jobs;
  jobs.reserve(inputs.size());
  for (size_t r = 0; r < inputs.size(); ++r) {
    // r.0.json -> OUTPUT_DIR/r.0.et; ranks differ, so do the names.
    const std::string& input = inputs[r];
    const size_t slash = input.rfind('/');
    const std::string name =
        slash == std::string::npos ? input : input.substr(slash + 1);
    const std::string stem = name.substr(0, name.rfind(".json"));
    jobs.push_back({static_cast<int>(r),
                    input,
                    JoinPath(output_dir, stem + ".et"),
                    std::move(kinetos[r]),
                    {}});
  }
  return jobs;
}

absl::Status CheckKinetoIsNotEt(const std::string& kineto_path) {
  if (kineto_path.empty() || !LooksLikeChakraEt(kineto_path))
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--kineto %s: a Chakra .et (et-convert's output), not a Kineto trace: "
      "give the profiler's JSON trace of the same run "
      "(torch.profiler / record_trace.py --kineto-out)",
      kineto_path));
}

absl::Status CheckJobInputs(const std::vector<RankJob>& jobs) {
  for (const RankJob& job : jobs) {
    if (job.rank == 0) RETURN_IF_ERROR(CheckKinetoIsNotEt(job.kineto));
    for (const std::string* path : {&job.input, &job.kineto}) {
      if (path->empty() || access(path->c_str(), R_OK) == 0) continue;
      const int err = errno;
      return absl::NotFoundError(absl::StrFormat(
          "rank %d of %d: %s: %s%s", job.rank, jobs.size(), *path,
          strerror(err),
          path == &job.kineto ? " (its --kineto trace)" : " (its trace)"));
    }
  }
  return absl::OkStatus();
}

std::vector<RankResult> ConvertRanks(const std::vector<RankJob>& jobs,
                                     const ConvertOptions& options,
                                     int threads) {
  std::vector<RankResult> results;
  for (const RankJob& job : jobs) {
    results.push_back(
        {job, StagingPath(job.output), absl::UnknownError("not run")});
  }
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t k = next++; k < jobs.size(); k = next++) {
      ConvertOptions o = options;
      o.rank = jobs[k].rank;
      o.world_size = static_cast<int>(jobs.size());
      o.kineto_path = jobs[k].kineto;
      if (jobs[k].host_costs) o.host_costs = jobs[k].host_costs;
      o.show_progress = false;
      results[k].summary = ConvertFile(jobs[k].input, results[k].staged, o);
      if (results[k].summary.ok())
        results[k].summary->output_path = jobs[k].output;
    }
  };
  std::vector<std::thread> pool;
  const int n =
      std::max(1, std::min<int>(threads, static_cast<int>(jobs.size())));
  for (int t = 0; t < n; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return results;
}

}  // namespace et::convert
