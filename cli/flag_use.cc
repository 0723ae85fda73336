// Given-but-unused flags as usage errors; see flag_use.h.
#include "cli/flag_use.h"

#include <cstdio>
#include <cstdlib>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cli/cli_args.h"

namespace et {
namespace {

std::set<std::string>& Given() {
  static auto* given = new std::set<std::string>();
  return *given;
}

// How users type a flag: `--bucket-mb`.
std::string Spelled(absl::string_view name) {
  return absl::StrCat(name.size() == 1 ? "-" : "--",
                      absl::StrReplaceAll(name, {{"_", "-"}}));
}

}  // namespace

std::set<std::string> FlagsNamed(const std::vector<std::string>& args) {
  std::set<std::string> named;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    absl::string_view body(arg);
    body.remove_prefix(arg[1] == '-' ? 2 : 1);
    std::string name(body.substr(0, body.find('=')));
    if (absl::FindCommandLineFlag(name) == nullptr &&
        absl::StartsWith(name, "no")) {
      const absl::CommandLineFlag* negated =
          absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) name.erase(0, 2);
    }
    named.insert(std::move(name));
  }
  return named;
}

void RecordGivenFlags(const std::vector<std::string>& args) {
  Given() = FlagsNamed(args);
}

bool FlagGiven(absl::string_view name) {
  return Given().count(std::string(name)) > 0;
}

std::string UnusedFlagMistake(const std::set<std::string>& given,
                              absl::Span<const FlagUse> uses) {
  for (const FlagUse& use : uses) {
    if (use.used || given.count(use.flag) == 0) continue;
    return absl::StrCat(Spelled(use.flag), " is used only with ", use.needs,
                        "; without it, it would be ignored");
  }
  return "";
}

void RefuseUnusedFlags(const char* tool, absl::Span<const FlagUse> uses) {
  const std::string mistake = UnusedFlagMistake(Given(), uses);
  if (mistake.empty()) return;
  std::fprintf(stderr, "%s: error: %s\n", tool, mistake.c_str());
  std::exit(kUsageExitCode);
}

}  // namespace et
