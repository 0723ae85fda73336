// Flag spelling normalisation; see cli_args.h.
#include "cli/cli_args.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "cli/flag_use.h"

namespace et {
namespace {

// Abseil's own flags: Abseil parses them (and --help is answered before).
bool IsAbseilOwnFlag(absl::string_view name) {
  for (absl::string_view own :
       {"help", "helpfull", "helpshort", "helppackage", "helpon", "helpmatch",
        "version", "only_check_args", "flagfile", "fromenv", "tryfromenv",
        "undefok"}) {
    if (name == own) return true;
  }
  return false;
}

// How users type a flag: `--json-summary`, `-o`.
std::string Spelling(absl::string_view name) {
  return absl::StrCat(name.size() == 1 ? "-" : "--",
                      absl::StrReplaceAll(name, {{"_", "-"}}));
}

// Insertions, deletions and substitutions turning `a` into `b`.
size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// A flag argument split: "--world=4" -> {"world", "4", true}.
struct FlagArg {
  std::string name;
  std::string value;
  bool has_value = false;
};

// Nullopt for positionals: "-" (stdin/stdout), negative numbers, plain words.
std::optional<FlagArg> SplitFlagArg(const std::string& arg) {
  double number = 0;
  if (arg.size() < 2 || arg[0] != '-' || absl::SimpleAtod(arg, &number))
    return std::nullopt;
  absl::string_view body(arg);
  body.remove_prefix(arg[1] == '-' ? 2 : 1);
  FlagArg f;
  const size_t eq = body.find('=');
  f.name = std::string(body.substr(0, eq));
  if (eq != absl::string_view::npos) {
    f.value = std::string(body.substr(eq + 1));
    f.has_value = true;
  }
  return f;
}

}  // namespace

std::string NearestToolFlag(const std::string& name) {
  // A flag the name begins (--out for --output) before one a few edits away
  // (--dot): a shortened flag is the likelier slip. Only when one flag fits.
  std::string prefix_of;
  int prefixes = 0;
  for (const auto& [flag_name, flag] : absl::GetAllFlags()) {
    if (!absl::EndsWith(flag->Filename(), "_main.cc")) continue;
    if (name.size() >= 3 && absl::StartsWith(flag_name, name)) {
      prefix_of = std::string(flag_name);
      ++prefixes;
    }
  }
  if (prefixes == 1) return Spelling(prefix_of);
  std::string best;
  // Closer than this is a typo; farther, a different word.
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const auto& [flag_name, flag] : absl::GetAllFlags()) {
    if (!absl::EndsWith(flag->Filename(), "_main.cc")) continue;
    const size_t d = EditDistance(name, flag_name);
    if (d < best_distance ||
        (d == best_distance && !best.empty() && flag_name < best)) {
      best_distance = d;
      best = std::string(flag_name);
    }
  }
  return best.empty() ? "" : Spelling(best);
}

std::string FindFlagMistake(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    const std::optional<FlagArg> f = SplitFlagArg(args[i]);
    if (!f || IsAbseilOwnFlag(f->name)) continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(f->name);
    if (flag == nullptr && absl::StartsWith(f->name, "no") && !f->has_value) {
      absl::CommandLineFlag* negated =
          absl::FindCommandLineFlag(f->name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) continue;
    }
    if (flag == nullptr) {
      const std::string near = NearestToolFlag(f->name);
      return absl::StrCat("unknown flag ", Spelling(f->name),
                          near.empty() ? "" : " (did you mean " + near + "?)",
                          "; see --help");
    }
    if (flag->IsOfType<bool>() && !f->has_value) continue;
    std::string value = f->value;
    if (!f->has_value) {
      if (i + 1 >= args.size()) {
        return absl::StrCat(Spelling(f->name), " needs a value; see --help");
      }
      value = args[++i];
    }
    // Parsed here only to word the error; Abseil sets it again below.
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::StrCat(Spelling(f->name), " '", value, "': ", error);
    }
  }
  return "";
}

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
  // `--json-summary -` (stdout) as `--json-summary=-`: Abseil otherwise asks
  // "Did you really mean to set flag 'json_summary' to the value '-'?".
  for (size_t i = 1; i + 1 < storage->size(); ++i) {
    std::string& arg = (*storage)[i];
    if (arg == "--") break;
    if ((*storage)[i + 1] != "-") continue;
    const std::optional<FlagArg> f = SplitFlagArg(arg);
    if (!f || f->has_value) continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(f->name);
    if (flag == nullptr || flag->IsOfType<bool>()) continue;
    arg += "=-";
    storage->erase(storage->begin() + static_cast<std::ptrdiff_t>(i) + 1);
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
    std::string shown = Spelling(name);
    width = std::max(width, shown.size());
    flags.emplace_back(std::move(shown), flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [shown, flag] : flags) {
    const std::string def = flag->DefaultValue();
    absl::StrAppendFormat(&out, "  %-*s  %s%s\n", width, shown,
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
  for (size_t i = 1; i < storage.size(); ++i) {
    const std::string& arg = storage[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      printf("%s\n\nflags:\n%s", usage, FormatToolFlags().c_str());
      exit(0);
    }
  }
  if (const std::string mistake = FindFlagMistake(storage); !mistake.empty()) {
    std::string tool = argc > 0 ? argv[0] : "";
    tool = tool.substr(tool.rfind('/') + 1);  // npos + 1 == 0
    fprintf(stderr, "%s: error: %s\n", tool.c_str(), mistake.c_str());
    exit(kUsageExitCode);
  }
  RecordGivenFlags(storage);
  std::vector<char*> positional = absl::ParseCommandLine(
      static_cast<int>(normalized.size() - 1), normalized.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace et
