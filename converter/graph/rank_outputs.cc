// Staging files and all-or-none publishing; see rank_outputs.h.
#include "converter/graph/rank_outputs.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_format.h"
#include "base/atomic_output_file.h"
#include "base/path.h"

namespace et::convert {

std::string StagingPath(const std::string& output) {
  const size_t slash = output.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const std::string staged =
      absl::StrFormat("%s.partial-%d-%s", output.substr(0, base), getpid(),
                      output.substr(base));
  RegisterTempFile(staged);  // removed on SIGINT/SIGTERM
  return staged;
}

namespace {

// Removes every staged file (and forgets it), after a failure or once renamed.
void DropStaged(const std::vector<RankResult>& results) {
  for (const RankResult& r : results) {
    unlink(r.staged.c_str());
    UnregisterTempFile(r.staged);
  }
}

}  // namespace

absl::StatusOr<bool> PublishRankOutputs(std::vector<RankResult>* results) {
  bool all_ok = true;
  for (const RankResult& r : *results) all_ok = all_ok && r.summary.ok();
  if (!all_ok) {
    DropStaged(*results);
    return false;
  }
  // Every target is checked before the first rename (an output that is an
  // input, a directory, a device, FIFO or symlink), so that a refusal leaves
  // nothing published.
  for (const RankResult& r : *results) {
    absl::Status s = CheckOutputFileKind(r.job.output);
    if (s.ok() && IsSameFile(r.job.input, r.job.output)) {
      s = absl::InvalidArgumentError(absl::StrFormat(
          "%s: the output is the input: refused", r.job.output));
    }
    if (!s.ok()) {
      DropStaged(*results);
      return s;
    }
  }
  for (size_t i = 0; i < results->size(); ++i) {
    const RankResult& r = (*results)[i];
    if (rename(r.staged.c_str(), r.job.output.c_str()) != 0) {
      const int err = errno;
      // All or nothing: the ones already renamed go too.
      for (size_t k = 0; k < i; ++k) unlink((*results)[k].job.output.c_str());
      DropStaged(*results);
      return absl::InternalError(
          absl::StrFormat("%s: cannot write: %s", r.job.output, strerror(err)));
    }
  }
  DropStaged(*results);  // renamed: only forgets them
  return true;
}

}  // namespace et::convert
