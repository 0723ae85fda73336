// The results people read: per-rank and overall summary (step, compute,
// communication, exposed communication, idle), the critical path, per-op and
// per-collective tables sorted by total time, the measured-vs-predicted step
// error, as text, JSON, and a Chrome/Perfetto timeline (a process per simulated
// rank, a track per resource). Built once from a finished simulation; plain
// data afterwards.
#ifndef SIMULATOR_REPORT_REPORT_H_
#define SIMULATOR_REPORT_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "simulator/engine/engine.h"
#include "simulator/report/memory_report.h"
#include "simulator/report/phase_breakdown.h"
#include "simulator/report/step_breakdown.h"
#include "step/step_report.h"

namespace et::sim {

struct RankStats {
  std::vector<int64_t> ranks;  // the class's ranks (identical results)
  int64_t step_ns = 0, compute_ns = 0, comm_ns = 0, exposed_comm_ns = 0,
          idle_ns = 0;
  std::optional<MemoryRow> memory;  // the memory model's peak (Simulation)
};

// The calls of an op (or kernel) group that the trace timed: their recorded
// duration beside their simulated one (kernel_table.h).
struct RecordedTime {
  int64_t calls = 0;         // the calls with a recorded duration
  int64_t recorded_ns = 0;   // their recorded durations, summed
  int64_t predicted_ns = 0;  // the same calls as simulated
};

struct OpRow {
  std::string name;
  int64_t calls = 0, total_ns = 0;
  double share = 0;  // of all compute time
  RecordedTime recorded;
};

// A GPU kernel (not memcpy or memset) of the slowest rank, by name.
struct KernelRow {
  std::string name;
  int64_t calls = 0, total_ns = 0;
  double share = 0;           // of all kernel time, as simulated
  bool tensor_cores = false;  // UsesTensorCores(name)
  RecordedTime recorded;
};

struct CollectiveRow {
  std::string type, group;
  uint64_t bytes = 0;
  int64_t group_size = 0, calls = 0, total_ns = 0, wait_ns = 0;
  double share = 0;          // of all communication time
  bool synthesized = false;  // added by et-sim (--dp-sync), not recorded
};

struct CriticalStep {
  uint64_t node_id = 0;
  std::string name;
  int64_t start_ns = 0, duration_ns = 0;
};

// Where the critical path's time goes when none of its ops runs: so that
// "the other X ms" says what it is (on one rank with no communication it is
// the host's own time between ops, not waiting for anyone).
struct CriticalWaits {
  int64_t host_gap_ns = 0;    // host time before a host op (Python, dispatch)
  int64_t gpu_gap_ns = 0;     // a GPU stream's front-end gap before a kernel
  int64_t rendezvous_ns = 0;  // a collective waiting for its other members
  int64_t other_ns = 0;       // waiting for a dependency or a busy resource
};

struct Report {
  int64_t world_size = 0;
  std::string topology;         // the platform/topology preset or file used
  std::string topology_reason;  // why: --topology, the trace's GPU, default
  // The shape and NCCL knobs simulated ("10 nodes x 1 GPU, NCCL_ALGO=ring").
  std::string cluster;
  int64_t classes = 0;
  int64_t events = 0;
  int64_t step_ns = 0;  // the whole graph (every step), max over ranks
  std::vector<RankStats> ranks;
  std::vector<OpRow> ops;
  std::vector<KernelRow> kernels;  // by simulated time, largest first
  // Why no op has a recorded time to compare with ("" when they may).
  std::string recorded_none;
  std::vector<PhaseRow> phases;  // the slowest rank's, when roles are stamped
  std::vector<CollectiveRow> collectives;
  std::vector<CriticalStep>
      critical_path;  // of the slowest rank, in time order
  int64_t critical_path_busy_ns = 0;
  CriticalWaits critical_path_waits;  // the rest of step_ns, by cause
  std::vector<std::string> notes;
  StepReport step;                      // per step, against the measured step
  std::optional<MemorySummary> memory;  // the largest rank against capacity
  // Per step of the slowest rank, where its time goes (step_breakdown.h).
  std::vector<StepBreakdown> breakdown;
};

Report BuildReport(const std::vector<RankClass>& classes,
                   const SimResult& result, int64_t world_size);

std::string FormatReportText(const Report& report, size_t top_rows);
std::string FormatReportJson(const Report& report);
nlohmann::json ReportJson(const Report& report);  // FormatReportJson's object
// FormatReportJson less "ops", "collectives" and "critical_path", the tables
// that grow with the graph (a caller that reads those as columns: Python).
std::string FormatReportSummaryJson(const Report& report);

// Chrome trace JSON of the simulated run, written atomically to `path`.
absl::Status WriteTimeline(const std::vector<RankClass>& classes,
                           const SimResult& result, const std::string& path);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_REPORT_H_
