// Multi-rank conversion; see multi_rank.h.
#include "converter/multi_rank.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "converter/converter.h"
#include "proto/file_util.h"

namespace et::convert {
namespace {

// The last run of digits in a file name, or -1.
int LastNumber(const std::string& name) {
  size_t end = name.find_last_of("0123456789");
  if (end == std::string::npos) return -1;
  size_t begin = end;
  while (begin > 0 && isdigit(static_cast<unsigned char>(name[begin - 1])))
    --begin;
  int value = -1;
  if (!absl::SimpleAtoi(name.substr(begin, end - begin + 1), &value)) return -1;
  return value;
}

// A hidden file beside `output`, so that the final rename stays on one
// filesystem; the name keeps the output's ending, which picks gzip or not.
std::string StagingPath(const std::string& output) {
  const size_t slash = output.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  return absl::StrFormat("%s.partial-%d-%s", output.substr(0, base), getpid(),
                         output.substr(base));
}

}  // namespace

absl::StatusOr<std::vector<RankJob>> JobsFromPattern(
    const std::string& input_pattern, const std::string& output_pattern,
    const std::string& kineto_pattern, int ranks) {
  if (ranks <= 0) return absl::InvalidArgumentError("--ranks must be positive");
  for (const auto* p : {&input_pattern, &output_pattern}) {
    if (!absl::StrContains(*p, "%d")) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s': with --ranks, paths need a %%d for the rank", *p));
    }
  }
  if (!kineto_pattern.empty() && !absl::StrContains(kineto_pattern, "%d")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': with --ranks, the Kineto path needs a %%d for the rank",
        kineto_pattern));
  }
  std::vector<RankJob> jobs;
  for (int r = 0; r < ranks; ++r) {
    jobs.push_back(
        {r, ExpandRankPattern(input_pattern, r),
         ExpandRankPattern(output_pattern, r),
         kineto_pattern.empty() ? "" : ExpandRankPattern(kineto_pattern, r)});
  }
  return jobs;
}

absl::StatusOr<std::vector<RankJob>> JobsFromDirectory(
    const std::string& input_dir, const std::string& output_dir) {
  DIR* dir = opendir(input_dir.c_str());
  if (dir == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("%s: cannot open directory", input_dir));
  }
  std::vector<std::string> names;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (absl::EndsWith(name, ".json") || absl::EndsWith(name, ".json.gz"))
      names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: no *.json or *.json.gz traces in the directory", input_dir));
  }
  if (!IsDirectory(output_dir)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: with a directory of traces, the output must be an "
                        "existing directory",
                        output_dir));
  }
  std::vector<RankJob> jobs;
  std::map<std::string, std::string> stems;  // stem -> the file it came from
  for (size_t k = 0; k < names.size(); ++k) {
    std::string stem = names[k].substr(0, names[k].find(".json"));
    // r.0.json and r.0.json.gz would both become r.0.et, one overwriting the
    // other mid-write; refuse before converting either.
    if (auto [it, fresh] = stems.emplace(stem, names[k]); !fresh) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s and %s would both be written to %s.et; keep one", input_dir,
          it->second, names[k], stem));
    }
    int rank = LastNumber(stem);
    jobs.push_back({rank >= 0 ? rank : static_cast<int>(k),
                    input_dir + "/" + names[k], output_dir + "/" + stem + ".et",
                    ""});
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

absl::StatusOr<bool> PublishRankOutputs(std::vector<RankResult>* results) {
  bool all_ok = true;
  for (const RankResult& r : *results) all_ok = all_ok && r.summary.ok();
  if (!all_ok) {
    for (const RankResult& r : *results) unlink(r.staged.c_str());
    return false;
  }
  for (const RankResult& r : *results) {
    if (rename(r.staged.c_str(), r.job.output.c_str()) != 0) {
      const int err = errno;
      for (const RankResult& q : *results) unlink(q.staged.c_str());
      return absl::InternalError(
          absl::StrFormat("%s: cannot write: %s", r.job.output, strerror(err)));
    }
  }
  return true;
}

}  // namespace et::convert
