// Staging files and all-or-none publishing; see rank_outputs.h.
#include "converter/graph/rank_outputs.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_format.h"

namespace et::convert {

std::string StagingPath(const std::string& output) {
  const size_t slash = output.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  return absl::StrFormat("%s.partial-%d-%s", output.substr(0, base), getpid(),
                         output.substr(base));
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
