// Command-line handling shared by every tool's main. Users type
// `--json-summary` and `--force-schema`, Abseil flags are declared as
// `json_summary`: this rewrites hyphens in flag names (before any '=') to
// underscores, leaving values and positionals untouched. It also prints
// --help from the tool's own flag table, and answers a usage mistake (an
// unknown flag, a flag without its value or with a value it rejects) with one
// line that names the tool, and exit status kUsageExitCode in every tool.
#ifndef CLI_CLI_ARGS_H_
#define CLI_CLI_ARGS_H_

#include <string>
#include <vector>

namespace et {

// Exit status of every tool for a usage error: an unknown flag, a bad flag
// value, wrong positional arguments. 1 is for errors in the inputs or the
// work; 0 for success.
inline constexpr int kUsageExitCode = 2;

// Returns normalised copies of argv; the char* vector points into `storage`.
std::vector<char*> NormalizeFlagSpelling(int argc, char** argv,
                                         std::vector<std::string>* storage);

// The usage error in a normalised command line (args[0] is the program),
// worded without the tool's name ("unknown flag --wrold (did you mean
// --world?)"), or "" when every flag is known and has a value it accepts.
// Abseil's own flags (--help, --flagfile, ...) are left to Abseil.
std::string FindFlagMistake(const std::vector<std::string>& args);

// The tool flag whose name is closest to `name` (a flag name as declared,
// `json_summary`), spelled as users type it (`--json-summary`, `-o`); "" when
// none is close.
std::string NearestToolFlag(const std::string& name);

// What every tool's main does first: normalises flag spelling, answers
// --help (the usage, then the tool's own flags; exits 0) and parses the Abseil
// flags. Returns the positional arguments, the program name first.
std::vector<std::string> ParseToolCommandLine(int argc, char** argv,
                                              const char* usage);

// The flags defined in this binary's *_main.cc (where rule 18 of the style
// guide puts them), one line each, sorted: "  --json-summary  help (default:
// ...)". Abseil's own --help selects flags by a file name matching the program
// name, which "et-replay" vs et_replay_main.cc defeats ("No flags matched").
std::string FormatToolFlags();

}  // namespace et

#endif  // CLI_CLI_ARGS_H_
