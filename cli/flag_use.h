// "A given flag is used or refused": the rule every tool's main applies to
// flags that mean something only with another (--calibration with --compute
// calibrated, --bucket-mb with --layout, --min-bytes with --nccl-tests).
// Such a flag given without what uses it is a usage error (exit 2), never a
// flag silently accepted and ignored. ParseToolCommandLine (cli_args.h)
// records which flags the command line named; a main then lists its
// conditional flags once, in one table, and calls RefuseUnusedFlags.
#ifndef CLI_FLAG_USE_H_
#define CLI_FLAG_USE_H_

#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace et {

// The flags a normalised command line names (args[0] is the program), as
// declared ("bucket_mb"); "--noflag" names "flag" when that is a known bool.
// Nothing after "--".
std::set<std::string> FlagsNamed(const std::vector<std::string>& args);

// Records the flags this run's command line named (ParseToolCommandLine
// calls it), for FlagGiven.
void RecordGivenFlags(const std::vector<std::string>& args);

// Whether this run's command line named flag `name` (as declared:
// "bucket_mb"), even at its default value.
bool FlagGiven(absl::string_view name);

// A flag that is used only under a condition of the run.
struct FlagUse {
  const char* flag;   // as declared: "bucket_mb"
  bool used;          // whether this run uses it
  const char* needs;  // what makes it used: "--layout (the job to predict)"
};

// The usage error for the first flag of `uses` in `given` that the run does
// not use: "--bucket-mb is used only with --layout (...); without it, it would
// be ignored", or "" when every given flag is used.
std::string UnusedFlagMistake(const std::set<std::string>& given,
                              absl::Span<const FlagUse> uses);

// UnusedFlagMistake on this run's flags; prints "TOOL: error: ..." and exits
// with kUsageExitCode when there is one.
void RefuseUnusedFlags(const char* tool, absl::Span<const FlagUse> uses);

}  // namespace et

#endif  // CLI_FLAG_USE_H_
