// Unit tests of cli/cli_args.h without the tools: how flag names are
// respelled (values, positionals and everything after "--" untouched) and
// which flags --help lists.
#include "cli/cli_args.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

// Defined here, in a file not named *_main.cc: --help must not list it.
ABSL_FLAG(int, cli_args_test_flag, 7, "a flag of this test, not of a tool");

namespace et {
namespace {

std::vector<std::string> Normalized(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::vector<std::string> storage;
  std::vector<char*> out = NormalizeFlagSpelling(static_cast<int>(argv.size()),
                                                 argv.data(), &storage);
  EXPECT_EQ(out.size(), args.size() + 1);
  EXPECT_EQ(out.back(), nullptr);  // argv convention: a null terminator
  return std::vector<std::string>(out.begin(), out.end() - 1);
}

TEST(CliArgsTest, HyphensInFlagNamesBecomeUnderscores) {
  EXPECT_EQ(
      Normalized({"et-sim", "--json-summary", "-force-schema"}),
      (std::vector<std::string>{"et-sim", "--json_summary", "-force_schema"}));
}

TEST(CliArgsTest, ValuesAfterEqualsKeepTheirHyphens) {
  EXPECT_EQ(Normalized({"et-sim", "--host-time=as-recorded"}),
            (std::vector<std::string>{"et-sim", "--host_time=as-recorded"}));
}

TEST(CliArgsTest, PositionalsAndTheProgramNameAreUntouched) {
  EXPECT_EQ(Normalized({"et-convert", "in-file.json", "out-file.et", "-1"}),
            (std::vector<std::string>{"et-convert", "in-file.json",
                                      "out-file.et", "-1"}));
}

TEST(CliArgsTest, NothingAfterDoubleDashIsRespelled) {
  EXPECT_EQ(
      Normalized({"et-viz", "--top-n", "--", "--not-a-flag"}),
      (std::vector<std::string>{"et-viz", "--top_n", "--", "--not-a-flag"}));
}

// "-" (stdout) after a flag that takes a value joins it: Abseil asks "Did
// you really mean ...?" for a separate "-".
TEST(CliArgsTest, DashAfterAValuedFlagJoinsIt) {
  EXPECT_EQ(
      Normalized({"et-convert", "--cli-args-test-flag=1", "a"}),
      (std::vector<std::string>{"et-convert", "--cli_args_test_flag=1", "a"}));
  std::vector<std::string> args = {"et-convert", "--cli-args-test-flag", "-"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::vector<std::string> storage;
  NormalizeFlagSpelling(3, argv.data(), &storage);
  EXPECT_EQ(storage,
            (std::vector<std::string>{"et-convert", "--cli_args_test_flag=-"}));
}

TEST(CliArgsTest, FlagMistakesAreWordedForOneLine) {
  EXPECT_EQ(FindFlagMistake({"t", "--cli_args_test_flag", "7", "in.et"}), "");
  EXPECT_EQ(FindFlagMistake({"t", "in.et", "-", "-1"}), "");  // positionals
  EXPECT_EQ(FindFlagMistake({"t", "--", "--not-a-flag"}), "");
  EXPECT_EQ(FindFlagMistake({"t", "--cli_args_test_flag"}),
            "--cli-args-test-flag needs a value; see --help");
  const std::string bad = FindFlagMistake({"t", "--cli_args_test_flag=x"});
  EXPECT_EQ(bad.rfind("--cli-args-test-flag 'x': ", 0), 0u) << bad;
  EXPECT_EQ(FindFlagMistake({"t", "--zzzzzzzzzz"}),
            "unknown flag --zzzzzzzzzz; see --help");
}

TEST(CliArgsTest, HelpListsOnlyFlagsOfMainFiles) {
  EXPECT_EQ(absl::GetFlag(FLAGS_cli_args_test_flag), 7);
  const std::string listed = FormatToolFlags();
  EXPECT_EQ(listed.find("cli-args-test-flag"), std::string::npos) << listed;
  EXPECT_EQ(listed.find("flagfile"), std::string::npos) << listed;
}

}  // namespace
}  // namespace et
