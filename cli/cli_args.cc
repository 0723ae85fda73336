// Flag spelling normalisation; see cli_args.h.
#include "cli/cli_args.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace et {

std::vector<char*> NormalizeFlagSpelling(int argc, char** argv,
                                         std::vector<std::string>* storage) {
  storage->assign(argv, argv + argc);
  bool after_double_dash = false;
  for (size_t i = 1; i < storage->size(); ++i) {
    std::string& arg = (*storage)[i];
    // "--" before the length test: it is two characters long, and everything
    // after it is positional, spelled as typed.
    if (arg == "--") after_double_dash = true;
    if (after_double_dash || arg.size() < 3 || arg[0] != '-') continue;
    const size_t start = arg[1] == '-' ? 2 : 1;
    const size_t end = arg.find('=');
    for (size_t k = start; k < arg.size() && k < end; ++k) {
      if (arg[k] == '-') arg[k] = '_';
    }
  }
  std::vector<char*> out;
  for (std::string& s : *storage) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string FormatToolFlags() {
  std::vector<std::pair<std::string, const absl::CommandLineFlag*>> flags;
  size_t width = 0;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!absl::EndsWith(flag->Filename(), "_main.cc")) continue;
    std::string shown = absl::StrReplaceAll(name, {{"_", "-"}});
    width = std::max(width, shown.size());
    flags.emplace_back(std::move(shown), flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [shown, flag] : flags) {
    const std::string def = flag->DefaultValue();
    absl::StrAppendFormat(&out, "  --%-*s  %s%s\n", width, shown,
                          absl::StrReplaceAll(flag->Help(), {{"\n", " "}}),
                          def.empty() ? "" : " (default: " + def + ")");
  }
  return out;
}

std::vector<std::string> ParseToolCommandLine(int argc, char** argv,
                                              const char* usage) {
  absl::SetProgramUsageMessage(usage);
  std::vector<std::string> storage;
  std::vector<char*> normalized = NormalizeFlagSpelling(argc, argv, &storage);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = storage[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      printf("%s\n\nflags:\n%s", usage, FormatToolFlags().c_str());
      exit(0);
    }
  }
  std::vector<char*> positional = absl::ParseCommandLine(
      static_cast<int>(normalized.size() - 1), normalized.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace et
