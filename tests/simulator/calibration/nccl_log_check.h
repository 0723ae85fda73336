// Checks a published nccl-tests log against et-sim run through its command
// line with the log's own settings (shape, NCCL_ALGO, NCCL_PROTO, -g), as a
// user would: the errors per size, their median over sizes >= 1 MiB, the
// worst such size and the latency floor's median. Shared by the shared-log
// and held-out tests.
#ifndef TESTS_SIMULATOR_CALIBRATION_NCCL_LOG_CHECK_H_
#define TESTS_SIMULATOR_CALIBRATION_NCCL_LOG_CHECK_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace et::sim::testing {

struct LogPoint {
  int64_t bytes = 0;
  double time_us = 0;  // out of place
};

struct LogCheck {
  double median = 0;  // |error| over sizes >= 1 MiB
  double worst = 0;   // signed, the largest |error| >= 1 MiB
  int64_t worst_bytes = 0;
  double small_median = -1;  // |error| over 8 B - 64 KiB; -1: no such sizes
  size_t large = 0;          // sizes >= 1 MiB compared
  std::string error;         // the run failed: its output
};

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline std::string SizeName(int64_t b) {
  if (b >= (int64_t{1} << 30))
    return absl::StrFormat("%g GiB", b / double(int64_t{1} << 30));
  if (b >= (1 << 20)) return absl::StrFormat("%.4g MiB", b / double(1 << 20));
  if (b >= (1 << 10)) return absl::StrFormat("%g KiB", b / double(1 << 10));
  return absl::StrFormat("%d B", b);
}

// et-sim's flags for a log's settings text: NCCL_ALGO=..., NCCL_PROTO=...,
// NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (or _CTAS) and nccl-tests' -g N.
inline std::string FlagsForSettings(const std::string& settings) {
  std::string flags;
  for (absl::string_view token :
       absl::StrSplit(settings, absl::ByAnyChar(" ;,()"), absl::SkipEmpty())) {
    for (auto [env, flag] :
         {std::make_pair("NCCL_ALGO=", "--nccl-algo"),
          std::make_pair("NCCL_PROTO=", "--nccl-proto"),
          std::make_pair("NCCL_MIN_NCHANNELS=", "--nccl-min-channels"),
          std::make_pair("NCCL_MIN_CTAS=", "--nccl-min-channels"),
          std::make_pair("NCCL_MAX_NCHANNELS=", "--nccl-max-channels"),
          std::make_pair("NCCL_MAX_CTAS=", "--nccl-max-channels")}) {
      if (absl::StartsWith(token, env)) {
        absl::StrAppend(&flags, " ", flag, " ", token.substr(strlen(env)));
      }
    }
  }
  // nccl-tests' "-g 8": GPUs per process.
  const std::vector<std::string> words =
      absl::StrSplit(settings, absl::ByAnyChar(" ;,()"), absl::SkipEmpty());
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "-g" && words[i + 1] != "1") {
      absl::StrAppend(&flags, " --gpus-per-process ", words[i + 1]);
    }
  }
  return flags;
}

// Runs `et-sim --nccl-tests ... --json` (stdout only) and returns its rows
// (bytes -> time), or the output when it failed.
inline std::map<int64_t, double> CliTimes(const std::string& args,
                                          std::string* failure) {
  std::map<int64_t, double> times;
  const std::string cmd =
      std::string(ET_SIM_BIN) + " " + args + " --json 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    *failure = "popen failed: " + cmd;
    return times;
  }
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), p)) out.append(buffer, n);
  if (pclose(p) != 0) {
    *failure = cmd + ": " + out;
    return times;
  }
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.contains("rows")) {
    *failure = cmd + ": not JSON: " + out;
    return times;
  }
  for (const nlohmann::json& r : j["rows"]) {
    times[r["bytes"].get<int64_t>()] = r["time_us"].get<double>();
  }
  return times;
}

// The log's points against et-sim run with `args` (op, shape, topology,
// knobs) over the log's size range. nccl-tests rounds sizes to whole
// elements per rank of its dtype; a point is compared with the predicted
// row nearest its size (within 1%).
inline LogCheck CheckLog(const std::vector<LogPoint>& points,
                         const std::string& args) {
  LogCheck check;
  int64_t lo = points.front().bytes, hi = points.front().bytes;
  for (const LogPoint& p : points) {
    lo = std::min(lo, p.bytes);
    hi = std::max(hi, p.bytes);
  }
  const std::map<int64_t, double> times =
      CliTimes(absl::StrFormat("%s --min-bytes %d --max-bytes %d", args, lo,
                               hi + hi / 50),
               &check.error);
  if (!check.error.empty()) return check;
  std::vector<double> large, small;
  for (const LogPoint& p : points) {
    auto it = times.lower_bound(p.bytes - p.bytes / 100);
    if (it == times.end() ||
        std::abs(it->first - p.bytes) > p.bytes / 100 + 64) {
      check.error =
          absl::StrFormat("%s: no predicted row near %d bytes", args, p.bytes);
      return check;
    }
    const double error = it->second / p.time_us - 1;
    if (p.bytes >= (1 << 20)) {
      large.push_back(std::abs(error));
      if (std::abs(error) > std::abs(check.worst)) {
        check.worst = error;
        check.worst_bytes = p.bytes;
      }
    } else if (p.bytes <= (64 << 10)) {
      small.push_back(std::abs(error));
    }
  }
  check.large = large.size();
  check.median = Median(large);
  if (!small.empty()) check.small_median = Median(small);
  return check;
}

}  // namespace et::sim::testing

#endif  // TESTS_SIMULATOR_CALIBRATION_NCCL_LOG_CHECK_H_
