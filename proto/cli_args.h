// Command-line spelling shared by every tool's main: users type
// `--json-summary` and
// `--force-schema`, Abseil flags are declared as `json_summary`. This rewrites
// hyphens in flag names (before any '=') to underscores, leaving values and
// positionals untouched.
#ifndef PROTO_CLI_ARGS_H_
#define PROTO_CLI_ARGS_H_

#include <string>
#include <vector>

namespace et {

// Returns normalised copies of argv; the char* vector points into `storage`.
std::vector<char*> NormalizeFlagSpelling(int argc, char** argv,
                                         std::vector<std::string>* storage);

// What every tool's main does first: sets the --help text, normalises flag
// spelling and parses the Abseil flags. Returns the positional arguments, the
// program name first.
std::vector<std::string> ParseToolCommandLine(int argc, char** argv,
                                              const char* usage);

}  // namespace et

#endif  // PROTO_CLI_ARGS_H_
