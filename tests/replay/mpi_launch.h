// Runs et-replay under mpirun from a test and captures its exit code and
// stderr; the ranks' reports come back through their --json files.
#ifndef TESTS_REPLAY_MPI_LAUNCH_H_
#define TESTS_REPLAY_MPI_LAUNCH_H_

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"

namespace et::replay::testing {

struct LaunchResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr of every rank
};

// `args` is appended to "mpirun ... -np N et-replay"; quote patterns yourself.
inline LaunchResult LaunchReplay(int ranks, const std::string& args) {
  const std::string command =
      "mpirun --allow-run-as-root --oversubscribe -np " +
      std::to_string(ranks) + " " + ET_BINARY_DIR + "/replay/et-replay " +
      args + " 2>&1";
  LaunchResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

inline int CountOccurrences(const std::string& text,
                            const std::string& needle) {
  int count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

}  // namespace et::replay::testing

#endif  // TESTS_REPLAY_MPI_LAUNCH_H_
