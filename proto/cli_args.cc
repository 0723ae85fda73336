// Flag spelling normalisation; see cli_args.h.
#include "proto/cli_args.h"

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"

namespace et {

std::vector<char*> NormalizeFlagSpelling(int argc, char** argv,
                                         std::vector<std::string>* storage) {
  storage->assign(argv, argv + argc);
  bool after_double_dash = false;
  for (size_t i = 1; i < storage->size(); ++i) {
    std::string& arg = (*storage)[i];
    if (after_double_dash || arg.size() < 3 || arg[0] != '-') continue;
    if (arg == "--") {
      after_double_dash = true;
      continue;
    }
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

std::vector<std::string> ParseToolCommandLine(int argc, char** argv,
                                              const char* usage) {
  absl::SetProgramUsageMessage(usage);
  std::vector<std::string> storage;
  std::vector<char*> normalized = NormalizeFlagSpelling(argc, argv, &storage);
  std::vector<char*> positional = absl::ParseCommandLine(
      static_cast<int>(normalized.size() - 1), normalized.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace et
