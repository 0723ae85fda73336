// Command-line handling shared by every tool's main. Users type
// `--json-summary` and `--force-schema`, Abseil flags are declared as
// `json_summary`: this rewrites hyphens in flag names (before any '=') to
// underscores, leaving values and positionals untouched. It also prints
// --help from the tool's own flag table.
#ifndef CLI_CLI_ARGS_H_
#define CLI_CLI_ARGS_H_

#include <string>
#include <vector>

namespace et {

// Returns normalised copies of argv; the char* vector points into `storage`.
std::vector<char*> NormalizeFlagSpelling(int argc, char** argv,
                                         std::vector<std::string>* storage);

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
