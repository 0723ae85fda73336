// Runs a built tool's command line in a test: its stdout and stderr together,
// and its exit code.
#ifndef TESTS_CLI_RUN_TOOL_H_
#define TESTS_CLI_RUN_TOOL_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace et::testing {

inline std::string RunTool(const std::string& cmd, int* exit_code) {
  int ignored = 0;
  if (exit_code == nullptr) exit_code = &ignored;
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), p)) out.append(buffer, n);
  const int status = pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace et::testing

#endif  // TESTS_CLI_RUN_TOOL_H_
