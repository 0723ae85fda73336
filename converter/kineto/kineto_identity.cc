// One-run check of an ET + Kineto pair; see kineto_identity.h.
#include "converter/kineto/kineto_identity.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace et::convert {
namespace {

// Time zones span UTC-12..UTC+14; the observer and the profiler may be
// started hours apart in a long job, but one run's two files are not days
// apart.
constexpr double kMaxClockGapSeconds = 26 * 3600.0;
// Below this share of ET ops whose `rf_id` names a Kineto op of the same
// name, the ids come from another process.
constexpr double kMinRecordFunctionAgreement = 0.1;

// The pid most of the trace's CPU ops carry (legacy traces have string pids,
// < 0), unless the recorder wrote one at the top level.
int64_t KinetoPid(const kineto::KinetoTrace& trace) {
  if (trace.process_id() > 0) return trace.process_id();
  absl::flat_hash_map<int64_t, int64_t> count;
  for (const kineto::KinetoEvent& e : trace.events()) {
    if (e.pid > 0 && (e.kind == kineto::EventKind::kCpuOp ||
                      e.kind == kineto::EventKind::kUserAnnotation)) {
      ++count[e.pid];
    }
  }
  int64_t best = -1, best_n = 0;
  for (const auto& [pid, n] : count) {
    if (n > best_n || (n == best_n && pid < best)) best = pid, best_n = n;
  }
  return best;
}

// The trace's first event as seconds since the epoch; nullopt when its times
// are relative (legacy traces) rather than wall-clock.
std::optional<double> KinetoStartSeconds(const kineto::KinetoTrace& trace) {
  if (trace.events().empty()) return std::nullopt;
  int64_t first_ns = trace.events()[0].ts_ns;
  for (const kineto::KinetoEvent& e : trace.events())
    first_ns = std::min(first_ns, e.ts_ns);
  const double s = (static_cast<double>(trace.base_time_ns()) +
                    static_cast<double>(first_ns)) /
                   1e9;
  return s > 1e9 ? std::optional<double>(s) : std::nullopt;  // after 2001
}

absl::Status CheckClocks(const EtRun& et, const std::string& kineto_path,
                         const kineto::KinetoTrace& trace) {
  const std::optional<double> kineto_s = KinetoStartSeconds(trace);
  absl::Time et_local;
  std::string error;
  if (!kineto_s || et.local_time.empty() ||
      !absl::ParseTime("%Y-%m-%d %H:%M:%S", et.local_time, absl::UTCTimeZone(),
                       &et_local, &error)) {
    return absl::OkStatus();
  }
  const double gap_s =
      *kineto_s - absl::ToDoubleSeconds(et_local - absl::UnixEpoch());
  if (std::abs(gap_s) <= kMaxClockGapSeconds) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: recorded %.1f days %s the execution trace %s (%s local time): not "
      "the same run; pass the Kineto trace recorded with this ET",
      kineto_path, std::abs(gap_s) / 86400, gap_s > 0 ? "after" : "before",
      et.path, et.local_time));
}

absl::Status CheckRecordFunctionIds(const EtRun& et,
                                    const std::string& kineto_path,
                                    const kineto::KinetoTrace& trace,
                                    const std::vector<HostOp>& ops,
                                    const StringPool& pool) {
  absl::flat_hash_map<int64_t, uint32_t> name_by_rf;
  int64_t with_rf = 0;
  for (const kineto::KinetoEvent& e : trace.events()) {
    if (e.record_function_id <= 0 || e.kind != kineto::EventKind::kCpuOp)
      continue;
    ++with_rf;
    name_by_rf.emplace(e.record_function_id, e.name);
  }
  // Old profilers write 0 (or repeat ids) on every op: not ids.
  if (with_rf == 0 || name_by_rf.size() < 0.9 * static_cast<double>(with_rf))
    return absl::OkStatus();
  int64_t et_with_rf = 0, agree = 0;
  for (const HostOp& op : ops) {
    if (op.rf_id <= 0) continue;
    ++et_with_rf;
    auto it = name_by_rf.find(op.rf_id);
    agree +=
        it != name_by_rf.end() && trace.name(it->second) == pool.Get(op.name);
  }
  if (et_with_rf < 100 ||
      agree >= kMinRecordFunctionAgreement * static_cast<double>(et_with_rf))
    return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: only %d of the %d record-function ids of %s name an op of the "
      "same name in it: not the same run; pass the Kineto trace recorded "
      "with this ET",
      kineto_path, agree, et_with_rf, et.path));
}

}  // namespace

bool CanCheckSameRun(const EtRun& et, const kineto::KinetoTrace& trace) {
  absl::Time unused;
  std::string error;
  return (et.pid > 0 && KinetoPid(trace) > 0) ||
         (et.rank >= 0 && trace.rank() >= 0) ||
         (KinetoStartSeconds(trace).has_value() &&
          absl::ParseTime("%Y-%m-%d %H:%M:%S", et.local_time,
                          absl::UTCTimeZone(), &unused, &error));
}

absl::Status CheckSameRun(const EtRun& et, const std::string& kineto_path,
                          const kineto::KinetoTrace& trace,
                          const std::vector<HostOp>& ops,
                          const StringPool& pool) {
  if (et.rank >= 0 && trace.rank() >= 0 && trace.rank() != et.rank) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the Kineto trace is of rank %d (its distributedInfo), the ET of "
        "rank %d: pass the Kineto trace of the same rank",
        kineto_path, trace.rank(), et.rank));
  }
  const int64_t kineto_pid = KinetoPid(trace);
  if (et.pid > 0 && kineto_pid > 0 && et.pid != kineto_pid) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: recorded by process %d, the execution trace %s by process %d: "
        "not the same run; pass the Kineto trace recorded with this ET",
        kineto_path, kineto_pid, et.path, et.pid));
  }
  if (absl::Status s = CheckClocks(et, kineto_path, trace); !s.ok()) return s;
  return CheckRecordFunctionIds(et, kineto_path, trace, ops, pool);
}

}  // namespace et::convert
