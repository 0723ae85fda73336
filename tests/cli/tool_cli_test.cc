// Command-line behaviour every tool shares (cli/cli_args.h): --help lists
// the tool's own flags, one line each (Abseil's --help said "No flags
// matched" for et-replay). Runs the built binaries.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace {

std::string RunTool(const std::string& cmd, int* exit_code) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), p)) out.append(buffer, n);
  const int status = pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

struct Tool {
  const char* path;
  std::vector<const char*> flags;  // a few it must list
};

TEST(ToolCliTest, HelpListsOwnFlagsOneLineEach) {
  const std::vector<Tool> tools = {
      {ET_CONVERT_BIN, {"--ranks", "--json-summary", "--kineto"}},
      {ET_SIM_BIN, {"--ranks", "--groups", "--compute"}},
      {ET_VIZ_BIN, {}},
      {ET_REPLAY_BIN, {"--device", "--iters", "--host-wait"}},
  };
  for (const Tool& tool : tools) {
    SCOPED_TRACE(tool.path);
    int code = -1;
    const std::string out = RunTool(std::string(tool.path) + " --help", &code);
    EXPECT_EQ(code, 0) << out;
    EXPECT_EQ(out.find("No flags matched"), std::string::npos) << out;
    int flag_lines = 0;
    for (absl::string_view line : absl::StrSplit(out, '\n')) {
      if (line.substr(0, 4) == "  --") ++flag_lines;
    }
    EXPECT_GE(flag_lines, 3) << out;
    for (const char* f : tool.flags) {
      EXPECT_NE(out.find(std::string("\n  ") + f + " "), std::string::npos)
          << f << " missing from:\n"
          << out;
    }
    // Only the tool's flags, not Abseil's own (--flagfile, --fromenv...).
    EXPECT_EQ(out.find("--flagfile"), std::string::npos) << out;
  }
}

// The step-time flags: a truth that is not a positive number, or an unknown
// host-time mode, is one error line naming the flag and a non-zero exit.
TEST(ToolCliTest, StepFlagsRejectBadValuesInOneLine) {
  const std::string et =
      std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(ET_CONVERT_BIN) + " " + et +
           " /tmp/x.et --measured-step-ms -1",
       "--measured-step-ms"},
      {std::string(ET_CONVERT_BIN) + " " + et +
           " /tmp/x.et --measured-step-ms abc",
       "--measured-step-ms"},
      {std::string(ET_SIM_BIN) + " x.et --measured-step-ms 0",
       "--measured-step-ms"},
      {std::string(ET_SIM_BIN) + " x.et --host-time fast", "--host-time"},
      {std::string(ET_REPLAY_BIN) + " x.et --host-time fast", "--host-time"},
  };
  for (const auto& [cmd, flag] : cases) {
    SCOPED_TRACE(cmd);
    int code = -1;
    const std::string out = RunTool(cmd, &code);
    EXPECT_NE(code, 0) << out;
    EXPECT_NE(out.find(flag), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

}  // namespace
