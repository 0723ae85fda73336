// Rendering DOT through Graphviz's `dot` program; see dot_renderer.h.
#include "visualizer/dot_renderer.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/atomic_output_file.h"
#include "base/status_macros.h"

extern char** environ;

namespace et::viz {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         access(path.c_str(), X_OK) == 0;
}

std::string FirstLines(const std::string& path, int max_lines) {
  std::ifstream in(path);
  std::string line;
  std::string text;
  for (int k = 0; k < max_lines && std::getline(in, line); ++k) {
    absl::StrAppend(&text, k > 0 ? " | " : "",
                    absl::StripAsciiWhitespace(line));
  }
  return text;
}

// Runs argv (argv[0] a full path) with stderr sent to `stderr_path`; returns
// the exit status, or an error when the process could not start or died from a
// signal.
absl::StatusOr<int> RunProcess(const std::vector<std::string>& argv,
                               const std::string& stderr_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr,
                             args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrFormat("cannot start %s: %s", argv[0], std::strerror(rc)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(
          absl::StrFormat("waiting for %s: %s", argv[0], std::strerror(errno)));
    }
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrFormat("%s was killed by signal %d",
                                               argv[0], WTERMSIG(status)));
  }
  return WEXITSTATUS(status);
}

// Graphviz's messages when its spline router cannot route an edge.
bool SplineRouterFailed(absl::string_view err_text) {
  return absl::StrContains(err_text, "Pshortestpath failed") ||
         absl::StrContains(err_text, "triangulation failed");
}

}  // namespace

absl::StatusOr<std::string> FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (IsExecutableFile(program)) return program;
  } else if (const char* path = std::getenv("PATH")) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/", program);
      if (IsExecutableFile(candidate)) return candidate;
    }
  }
  return absl::NotFoundError(
      absl::StrFormat("Graphviz program '%s' not found on PATH; install "
                      "Graphviz (Debian/Ubuntu: "
                      "apt-get install graphviz) to draw .pdf/.svg/.png, or "
                      "write .dot, .graphml or "
                      ".json, which need no Graphviz",
                      program));
}

namespace {

// Graphviz pads every drawing by 4 pt on each side (its `pad` default); the
// plain output's size leaves the pad out, the drawn page holds it.
constexpr double kPadIn = 2 * 4.0 / 72.0;

// The drawn page's size: Graphviz's plain output, whose first line is "graph
// SCALE WIDTH HEIGHT" in inches, and the pad; 0 x 0 when absent.
void ReadPlainSize(const std::string& plain_path, Rendered* out) {
  std::ifstream in(plain_path);
  std::string word;
  double scale = 0;
  if (in >> word && word == "graph" &&
      in >> scale >> out->width_in >> out->height_in) {
    out->width_in += kPadIn;
    out->height_in += kPadIn;
    return;
  }
  out->width_in = out->height_in = 0;
}

}  // namespace

absl::StatusOr<Rendered> RenderDotToTemp(absl::string_view dot_text,
                                         absl::string_view format,
                                         const std::string& tmp_out,
                                         const std::string& shown_path,
                                         const std::string& dot_program) {
  ASSIGN_OR_RETURN(std::string dot, FindProgram(dot_program));
  const std::string tmp_dot = tmp_out + ".dot";
  const std::string tmp_err = tmp_out + ".stderr";
  const std::string tmp_plain = tmp_out + ".plain";
  // Errors name the output asked for, never the temporary files beside it.
  if (absl::Status s = WriteFileAtomically(tmp_dot, dot_text); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrReplaceAll(s.message(), {{tmp_dot, shown_path}}));
  }
  // One layout, two outputs: the drawing and its size. No margin: Graphviz's
  // PDF would add half an inch of white on each side, so its page would be
  // larger than the size measured and said.
  std::vector<std::string> argv = {
      dot,  "-Gmargin=0", "-Tplain",
      "-o", tmp_plain,    absl::StrCat("-T", format),
      "-o", tmp_out,      tmp_dot};
  auto exit_code = RunProcess(argv, tmp_err);
  std::string err_text = FirstLines(tmp_err, 3);
  Rendered rendered;
  if (exit_code.ok() && *exit_code != 0 && SplineRouterFailed(err_text)) {
    // Graphviz's spline router loses an edge it cannot fit between clusters
    // (2.43: "Pshortestpath failed", seen on a 4-rank tensor-parallel step's
    // collective links) and exits 1; straight lines need no routing.
    argv.insert(argv.begin() + 1, "-Gsplines=line");
    exit_code = RunProcess(argv, tmp_err);
    err_text = FirstLines(tmp_err, 3);
    rendered.straight_lines = true;
  }
  ReadPlainSize(tmp_plain, &rendered);
  for (const std::string& path : {tmp_dot, tmp_err, tmp_plain})
    std::remove(path.c_str());
  if (!exit_code.ok() || *exit_code != 0) {
    DiscardTempFile(tmp_out);
    return absl::InternalError(absl::StrFormat(
        "%s: %s failed (%s)%s", shown_path, dot,
        exit_code.ok() ? absl::StrCat("exit status ", *exit_code)
                       : std::string(exit_code.status().message()),
        err_text.empty() ? "" : absl::StrCat(": ", err_text)));
  }
  return rendered;
}

absl::Status RenderDot(absl::string_view dot_text, absl::string_view format,
                       const std::string& output_path,
                       const std::string& dot_program, bool* straight_lines) {
  const std::string tmp_out = TempPathFor(output_path);
  auto rendered =
      RenderDotToTemp(dot_text, format, tmp_out, output_path, dot_program);
  if (!rendered.ok()) {
    DiscardTempFile(tmp_out);
    return rendered.status();
  }
  if (straight_lines != nullptr) *straight_lines = rendered->straight_lines;
  return CommitTempFile(tmp_out, output_path);
}

absl::Status JoinPdfPages(const std::vector<std::string>& pages,
                          const std::string& tmp_out,
                          const std::string& shown_path) {
  auto pdfunite = FindProgram("pdfunite");
  if (!pdfunite.ok()) {
    return absl::NotFoundError(
        "pdfunite not found on PATH (Debian/Ubuntu: apt-get install "
        "poppler-utils)");
  }
  std::vector<std::string> argv = {*pdfunite};
  argv.insert(argv.end(), pages.begin(), pages.end());
  argv.push_back(tmp_out);
  const std::string tmp_err = tmp_out + ".stderr";
  auto exit_code = RunProcess(argv, tmp_err);
  const std::string err_text = FirstLines(tmp_err, 3);
  std::remove(tmp_err.c_str());
  if (!exit_code.ok() || *exit_code != 0) {
    DiscardTempFile(tmp_out);
    return absl::InternalError(absl::StrFormat(
        "%s: joining its %d pages with %s failed (%s)%s", shown_path,
        pages.size(), *pdfunite,
        exit_code.ok() ? absl::StrCat("exit status ", *exit_code)
                       : std::string(exit_code.status().message()),
        err_text.empty() ? "" : absl::StrCat(": ", err_text)));
  }
  return absl::OkStatus();
}

}  // namespace et::viz
