// Multi-rank conversion; see multi_rank.h.
#include "converter/multi_rank.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_format.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "converter/converter.h"

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
    jobs.push_back({static_cast<int>(r), std::move(inputs[r]),
                    std::move(outputs[r]), std::move(kinetos[r])});
  }
  return jobs;
}

absl::StatusOr<std::vector<RankJob>> JobsFromDirectory(
    const std::string& input_dir, const std::string& output_dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> inputs,
                   ListRankFiles(input_dir, ".json"));
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
    jobs.push_back(
        {static_cast<int>(r), input, output_dir + "/" + stem + ".et", ""});
  }
  return jobs;
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
      o.kineto_path = jobs[k].kineto;
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
