// nccl-tests output parser; see nccl_tests_log.h for the formats it accepts.
#include "simulator/calibration/nccl_tests_log.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/gzip_input.h"
#include "base/status_macros.h"
#include "base/text_escape.h"

namespace et::sim {
namespace {

// Drops mpirun's "[1,0]<stdout>:" (or <stderr>) tag.
absl::string_view StripMpiTag(absl::string_view line) {
  if (!absl::StartsWith(line, "[")) return line;
  const size_t close = line.find("]<std");
  if (close == absl::string_view::npos) return line;
  const size_t colon = line.find(">:", close);
  return colon == absl::string_view::npos ? line : line.substr(colon + 2);
}

// "all_reduce_perf" (or all_reduce_perf_mpi) anywhere in the line.
std::optional<NcclOp> OpNamedIn(absl::string_view line) {
  for (const char* name : {"all_reduce", "all_gather", "reduce_scatter",
                           "alltoall", "broadcast", "sendrecv"}) {
    if (absl::StrContains(line, absl::StrCat(name, "_perf")))
      return NcclOpByName(name);
  }
  return std::nullopt;
}

struct TableRowText {
  int64_t bytes = 0;
  absl::string_view time;  // the out-of-place time column, as written
};

// A table row: size count type redop [root] time algbw busbw ...; the root
// column is there when the in-place half makes 13 fields (12 without).
// nullopt for lines that are not rows.
std::optional<TableRowText> TableRow(absl::string_view line) {
  const std::vector<absl::string_view> f =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  int64_t bytes = 0, count = 0, root = 0;
  if (f.size() < 8 || !absl::SimpleAtoi(f[0], &bytes) ||
      !absl::SimpleAtoi(f[1], &count)) {
    return std::nullopt;
  }
  const bool has_root =
      f.size() == 13 || f.size() == 9 ||
      (f.size() != 12 && f.size() != 8 && absl::SimpleAtoi(f[4], &root));
  return TableRowText{bytes, f[has_root ? 5 : 4]};
}

// What a valid log is: text (UTF-8, no control bytes but tabs and carriage
// returns: binary data after a valid header is not a log), and table rows
// whose size is a positive number of bytes and whose time lies within
// [kMinTimeUs, kMaxTimeUs]. Anything else is refused, naming the line.
// nccl-tests prints times with two decimals in us: 0.01 us is the least it
// writes, and no collective of a benchmark runs for an hour.
constexpr double kMinTimeUs = 1e-3, kMaxTimeUs = 3.6e9;

// The first byte of `line` that text does not hold, or npos.
size_t FirstBinaryByte(absl::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) return i;
  }
  return IsValidUtf8(line) ? absl::string_view::npos : 0;
}

// A row's size and time, or why they cannot be fitted: a size of 0 bytes or
// a time that is not a finite number in [kMinTimeUs, kMaxTimeUs] (inf, nan,
// 0, 1e-300, 1e308) would put an infinite, undefined or meaningless
// bandwidth into the fit.
absl::StatusOr<std::pair<int64_t, double>> RowFigures(const TableRowText& row,
                                                      absl::string_view origin,
                                                      int64_t line_number) {
  double time_us = 0;
  if (row.bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: line %d: a row of %d bytes (a size must be positive to fit)",
        origin, line_number, row.bytes));
  }
  if (!absl::SimpleAtod(row.time, &time_us) || !std::isfinite(time_us) ||
      !(time_us >= kMinTimeUs) || !(time_us <= kMaxTimeUs)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: line %d: time '%s' is not a finite positive number of us in "
        "[%g, %g] (1 ns to an hour)",
        origin, line_number, EscapeForPrint(row.time.substr(0, 40)), kMinTimeUs,
        kMaxTimeUs));
  }
  return std::make_pair(row.bytes, time_us);
}

// "nThread 1 nGpus 8 minBytes ...": the GPUs each process drives (1 when
// not printed or out of range).
int64_t GpusOf(absl::string_view line) {
  const std::vector<absl::string_view> f =
      absl::StrSplit(line, ' ', absl::SkipEmpty());
  for (size_t i = 0; i + 1 < f.size(); ++i) {
    int64_t g = 0;
    if (f[i] == "nGpus" && absl::SimpleAtoi(f[i + 1], &g) && g >= 1 && g <= 64)
      return g;
  }
  return 1;
}

}  // namespace

absl::StatusOr<NcclTestsLog> ParseNcclTestsLog(absl::string_view text,
                                               absl::string_view origin) {
  NcclTestsLog log;
  std::optional<NcclOp> op;
  int64_t ranks = 0, gpus_per_process = 1;
  int64_t line_number = 0;
  absl::flat_hash_set<std::string> hosts;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (size_t bad = FirstBinaryByte(raw); bad != absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: line %d: binary data (byte %d of the line is not text): not an "
          "nccl-tests log",
          origin, line_number, bad + 1));
    }
    absl::string_view line = absl::StripAsciiWhitespace(StripMpiTag(raw));
    if (std::optional<NcclOp> named = OpNamedIn(line)) op = named;
    if (absl::ConsumePrefix(&line, "#")) {
      line = absl::StripLeadingAsciiWhitespace(line);
      if (absl::StartsWith(line, "Using devices")) {
        ranks = 0;
        hosts.clear();
      }
      if (absl::StartsWith(line, "nThread")) gpus_per_process = GpusOf(line);
      int64_t rank = 0;
      if (absl::ConsumePrefix(&line, "Rank")) {
        const std::vector<absl::string_view> f =
            absl::StrSplit(line, ' ', absl::SkipEmpty());
        if (!f.empty() && absl::SimpleAtoi(f[0], &rank)) {
          ranks = std::max(ranks, rank + 1);
          // "... Pid 313 on HOST device 0 [...]": the rank's host.
          for (size_t i = 1; i + 1 < f.size(); ++i) {
            if (f[i] == "on") {
              hosts.insert(std::string(f[i + 1]));
              break;
            }
          }
          const size_t bracket = line.find("] ");
          if (rank == 0 && bracket != absl::string_view::npos)
            log.device_name = std::string(line.substr(bracket + 2));
        }
      }
      continue;
    }
    const std::optional<TableRowText> text_row = TableRow(line);
    if (!text_row) continue;
    ASSIGN_OR_RETURN(auto row, RowFigures(*text_row, origin, line_number));
    if (ranks == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a table row before any '# Using devices' rank list", origin));
    }
    if (!op) {
      op = NcclOp::kAllReduce;
      log.op_assumed = true;
    }
    const int64_t hosts_n = static_cast<int64_t>(hosts.size());
    const int64_t per_node =
        hosts_n > 0 && ranks % hosts_n == 0 ? ranks / hosts_n : 0;
    log.rows.push_back(
        {*op, ranks, row.first, row.second, per_node, gpus_per_process});
  }
  if (log.rows.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": no nccl-tests table rows found"));
  }
  return log;
}

absl::StatusOr<NcclTestsLog> LoadNcclTestsLogs(
    const std::vector<std::string>& paths) {
  NcclTestsLog all;
  for (const std::string& path : paths) {
    std::string text;
    RETURN_IF_ERROR(ReadFileMaybeGzip(path, &text));
    ASSIGN_OR_RETURN(NcclTestsLog one, ParseNcclTestsLog(text, path));
    if (all.device_name.empty()) all.device_name = one.device_name;
    all.op_assumed = all.op_assumed || one.op_assumed;
    all.rows.insert(all.rows.end(), one.rows.begin(), one.rows.end());
  }
  return all;
}

}  // namespace et::sim
