// Summaries, tables, critical path, text/JSON formatting and the Chrome
// timeline.
#include "simulator/report/report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "model/comm_type.h"
#include "nlohmann/json.hpp"
#include "simulator/report/kernel_table.h"
#include "simulator/report/step_busy.h"
#include "step/chrome_trace.h"
#include "step/recorded_timeline.h"
#include "step/step_report.h"

namespace et::sim {
namespace {

using Interval = std::pair<int64_t, int64_t>;

int64_t UnionLength(std::vector<Interval>* v) {
  std::sort(v->begin(), v->end());
  int64_t total = 0, cur_start = 0, cur_end = -1;
  bool open = false;
  for (const Interval& i : *v) {
    if (i.second <= i.first) continue;
    if (!open || i.first > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = i.first;
      cur_end = i.second;
      open = true;
    } else {
      cur_end = std::max(cur_end, i.second);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

void AddRecorded(std::optional<int64_t> recorded_ns, int64_t predicted_ns,
                 RecordedTime* t) {
  if (!recorded_ns) return;
  ++t->calls;
  t->recorded_ns += *recorded_ns;
  t->predicted_ns += predicted_ns;
}

bool IsComm(SimOpKind k) {
  return k == SimOpKind::kCollective || k == SimOpKind::kSend ||
         k == SimOpKind::kRecv;
}

// The whole graph split as each step is (step_breakdown.h): exposed
// communication by the bound's rule, so the table and the bound agree; every
// busy instant else is compute (ops, and the host's time between them, as the
// bound counts host busy); idle is the rest: waiting on a dependency or rank.
RankStats Summarize(const RankClass& rc, const ClassTimeline& tl) {
  const RankProgram& p = *rc.program;
  RankStats s;
  s.ranks = rc.ranks;
  std::vector<Interval> comm;
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (tl.finish_ns[i] < 0) continue;
    s.step_ns = std::max(s.step_ns, tl.finish_ns[i]);
    // From its issue, as the bound counts it: waiting for the other members
    // is the rank's communication time too.
    if (IsComm(p.kind[i])) comm.push_back({tl.issue_ns[i], tl.finish_ns[i]});
  }
  s.comm_ns = UnionLength(&comm);
  const StepBreakdown whole = BreakdownSteps(p, tl, {s.step_ns}).front();
  auto part = [&](StepPart k) { return whole.part_ns[static_cast<int>(k)]; };
  s.exposed_comm_ns = part(StepPart::kExposedComm);
  s.idle_ns = part(StepPart::kOther);
  s.compute_ns = s.step_ns - s.exposed_comm_ns - s.idle_ns;
  return s;
}

// The time before node `n` starts on the chain, by cause: from its critical
// predecessor's finish (0 for the first) to its issue, then to its start.
void AddWait(const RankProgram& p, const ClassTimeline& tl, int32_t n,
             CriticalWaits* w) {
  const int32_t pred = tl.critical_pred[n];
  const int64_t ready = pred >= 0 ? tl.finish_ns[pred] : 0;
  w->other_ns += std::max<int64_t>(0, tl.issue_ns[n] - ready);
  const int64_t before_start =
      std::max<int64_t>(0, tl.start_ns[n] - tl.issue_ns[n]);
  if (IsComm(p.kind[n])) {
    w->rendezvous_ns += before_start;
  } else if (p.kind[n] != SimOpKind::kNoop &&
             p.resource_is_host[p.resource[n]]) {
    w->host_gap_ns += before_start;
  } else {
    w->gpu_gap_ns += before_start;
  }
}

std::vector<CriticalStep> CriticalPath(const RankClass& rc,
                                       const ClassTimeline& tl,
                                       int64_t* busy_ns, CriticalWaits* waits) {
  const RankProgram& p = *rc.program;
  int32_t last = -1;
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (tl.finish_ns[i] >= 0 &&
        (last < 0 || tl.finish_ns[i] >= tl.finish_ns[last])) {
      last = static_cast<int32_t>(i);
    }
  }
  std::vector<CriticalStep> path;
  *busy_ns = 0;
  *waits = {};
  for (int32_t n = last; n >= 0; n = tl.critical_pred[n]) {
    AddWait(p, tl, n, waits);
    const int64_t dur = tl.finish_ns[n] - tl.start_ns[n];
    if (p.kind[n] != SimOpKind::kNoop) {
      path.push_back(
          {p.graph->id(n), std::string(p.graph->name(n)), tl.start_ns[n], dur});
      *busy_ns += dur;
    }
    if (path.size() > 1000000)
      break;  // defensive: preds always point back in time
  }
  std::reverse(path.begin(), path.end());
  return path;
}

// When each step of a class's program ended: the last finish among its nodes
// (the whole graph is one step when no node carries a step).
std::vector<int64_t> StepEnds(const RankProgram& p, const ClassTimeline& tl) {
  std::vector<int64_t> ends(static_cast<size_t>(p.steps.steps()), 0);
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (p.kind[i] == SimOpKind::kNoop || tl.finish_ns[i] < 0) continue;
    const int32_t k = p.steps.step_ids().empty()
                          ? 0
                          : p.steps.step_index(static_cast<NodeIndex>(i));
    if (k >= 0) ends[k] = std::max(ends[k], tl.finish_ns[i]);
  }
  return ends;
}

// Why a what-if moves the step or not: --device scales GPU ops only and
// --host-speed host time only, so a step bound by the other side barely moves.
void AddWhatIfNote(const RankProgram& p, StepReport* report) {
  if (!report->bound) return;
  const StepBound& b = *report->bound;
  const double host_speed = p.steps.model().host_speed;
  std::string what_if, unchanged;
  if (!p.device_target.empty() && b.side != BoundSide::kGpu) {
    what_if =
        absl::StrCat("--device ", p.device_target, " scales the GPU ops only");
  } else if (host_speed != 1.0 && b.side != BoundSide::kHost &&
             p.host_time == HostTimeMode::kUnprofiled) {
    what_if = "--host-speed scales the host time only";
  } else {
    return;
  }
  const double bound_us = b.side == BoundSide::kHost  ? b.host_busy_us
                          : b.side == BoundSide::kGpu ? b.gpu_busy_us
                                                      : b.exposed_comm_us;
  const std::string gpu =
      b.gpu_busy_us > 0 ? absl::StrFormat("GPU %.3f ms", b.gpu_busy_us / 1e3)
                        : "no GPU work";
  report->notes.push_back(absl::StrFormat(
      "the step is %s-bound (busy per step: host %.3f ms, %s, exposed comm "
      "%.3f ms, of %.3f ms): %s, and the %s's %.3f ms per step is not scaled, "
      "so the step cannot fall below it",
      BoundSideName(b.side), b.host_busy_us / 1e3, gpu, b.exposed_comm_us / 1e3,
      b.step_us / 1e3, what_if, BoundSideName(b.side), bound_us / 1e3));
}

// The op table (by name, with the recorded time of the calls the trace timed)
// and the GPU kernel table of one rank as simulated.
void AddOpTables(const RankProgram& p, const ClassTimeline& tl, Report* r) {
  std::map<std::string, OpRow> ops;
  int64_t compute_total = 0;
  std::map<std::string, KernelRow> kernels;
  int64_t kernel_total = 0;
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (p.kind[i] != SimOpKind::kCompute || tl.finish_ns[i] < 0) continue;
    const std::string name(p.graph->name(i));
    const int64_t ns = tl.finish_ns[i] - tl.start_ns[i];
    const std::optional<int64_t> recorded = RecordedDurationNs(p, i);
    OpRow& row = ops[name];
    row.name = name;
    ++row.calls;
    row.total_ns += ns;
    compute_total += ns;
    AddRecorded(recorded, ns, &row.recorded);
    if (p.resource_is_host[p.resource[i]] ||
        GpuPartOf(name) != StepPart::kKernel)
      continue;
    KernelRow& k = kernels[name];
    k.name = name;
    ++k.calls;
    k.total_ns += ns;
    kernel_total += ns;
    AddRecorded(recorded, ns, &k.recorded);
  }
  for (auto& [name, row] : ops) {
    row.share = compute_total > 0
                    ? static_cast<double>(row.total_ns) / compute_total
                    : 0;
    r->ops.push_back(row);
  }
  std::sort(r->ops.begin(), r->ops.end(), [](const OpRow& a, const OpRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  for (auto& [name, k] : kernels) {
    k.share =
        kernel_total > 0 ? static_cast<double>(k.total_ns) / kernel_total : 0;
    k.tensor_cores = UsesTensorCores(name);
    r->kernels.push_back(k);
  }
  std::sort(r->kernels.begin(), r->kernels.end(),
            [](const KernelRow& a, const KernelRow& b) {
              return a.total_ns != b.total_ns ? a.total_ns > b.total_ns
                                              : a.name < b.name;
            });
}

StepReport BuildStepReport(const std::vector<RankClass>& classes,
                           const SimResult& result) {
  std::vector<RankSteps> rows;
  int64_t steps = 1, left_out = 0;
  HostTimeMode mode = HostTimeMode::kUnprofiled;
  bool has_gpu_ops = false;
  for (size_t c = 0; c < classes.size(); ++c) {
    const RankProgram& p = *classes[c].program;
    const std::vector<int64_t> ends = StepEnds(p, result.timelines[c]);
    rows.push_back(MakeRankSteps(classes[c].ranks, ends, p.measured));
    rows.back().bounds = StepBounds(p, result.timelines[c], ends);
    steps = std::max(steps, p.steps.steps());
    // ASTRA-sim's costs are the recorded durations (without their gaps).
    mode = p.astra_replay ? HostTimeMode::kRecorded : p.host_time;
    has_gpu_ops |= p.steps.has_gpu_ops();
    if (p.host_time == HostTimeMode::kUnprofiled && !p.astra_replay)
      left_out = std::max(left_out, p.steps.nodes_outside_steps());
  }
  StepReport report =
      MakeStepReport(std::move(rows), steps, mode, left_out, has_gpu_ops);
  AddWhatIfNote(*classes.front().program, &report);
  return report;
}

}  // namespace

Report BuildReport(const std::vector<RankClass>& classes,
                   const SimResult& result, int64_t world_size) {
  Report r;
  r.world_size = world_size;
  r.classes = static_cast<int64_t>(classes.size());
  r.events = result.events;
  size_t slowest = 0;
  for (size_t c = 0; c < classes.size(); ++c) {
    r.ranks.push_back(Summarize(classes[c], result.timelines[c]));
    if (r.ranks.back().step_ns > r.step_ns) {
      r.step_ns = r.ranks.back().step_ns;
      slowest = c;
    }
    for (const std::string& note : classes[c].program->notes) {
      r.notes.push_back(
          absl::StrCat("rank ", classes[c].ranks.front(), ": ", note));
    }
  }
  // Per-op and kernel tables over the slowest rank (other ranks are alike or
  // listed in --json).
  const RankProgram& p = *classes[slowest].program;
  const ClassTimeline& tl = result.timelines[slowest];
  AddOpTables(p, tl, &r);
  r.phases = PhaseBreakdown(p, tl);
  std::map<std::tuple<std::string, std::string, uint64_t, int64_t, bool>,
           CollectiveRow>
      colls;
  int64_t comm_total = 0;
  for (const CollectiveRun& run : result.collectives) {
    const std::string type =
        run.point_to_point ? "SEND_RECV" : std::string(CommTypeName(run.type));
    CollectiveRow& row =
        colls[{type, run.group, run.bytes, run.group_size, run.synthesized}];
    row.type = type;
    row.group = run.group;
    row.bytes = run.bytes;
    row.group_size = run.group_size;
    row.synthesized = run.synthesized;
    ++row.calls;
    row.total_ns += run.cost_ns;
    row.wait_ns += run.max_wait_ns;
    comm_total += run.cost_ns;
  }
  for (auto& [key, row] : colls) {
    row.share =
        comm_total > 0 ? static_cast<double>(row.total_ns) / comm_total : 0;
    r.collectives.push_back(row);
  }
  std::sort(r.collectives.begin(), r.collectives.end(),
            [](const CollectiveRow& a, const CollectiveRow& b) {
              return a.total_ns > b.total_ns;
            });
  r.critical_path = CriticalPath(classes[slowest], tl, &r.critical_path_busy_ns,
                                 &r.critical_path_waits);
  r.step = BuildStepReport(classes, result);
  r.breakdown = BreakdownSteps(p, tl, StepEnds(p, tl));
  return r;
}

namespace {

// "; the other 164.537 ms: host time between ops (Python, dispatch)
// 164.537 ms": each cause that holds time, largest first.
std::string CriticalWaitsText(const Report& r) {
  const int64_t rest =
      std::max<int64_t>(0, r.step_ns - r.critical_path_busy_ns);
  if (rest == 0) return "";
  const CriticalWaits& w = r.critical_path_waits;
  const int64_t named = w.host_gap_ns + w.gpu_gap_ns + w.rendezvous_ns;
  std::vector<std::pair<int64_t, const char*>> parts = {
      {w.host_gap_ns,
       "host time between ops (Python, dispatch: the host's "
       "own work)"},
      {w.gpu_gap_ns, "GPU stream gaps between kernels"},
      {w.rendezvous_ns, "collectives waiting for other ranks"},
      {std::max<int64_t>(0, rest - named),
       "waiting for a dependency or a busy thread/stream"}};
  std::stable_sort(
      parts.begin(), parts.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = absl::StrFormat("; the other %.3f ms:", rest / 1e6);
  const char* sep = " ";
  for (const auto& [ns, what] : parts) {
    if (ns <= 0) continue;
    absl::StrAppendFormat(&out, "%s%s %.3f ms", sep, what, ns / 1e6);
    sep = ", ";
  }
  return out;
}

}  // namespace

std::string FormatReportText(const Report& r, size_t top) {
  auto ms = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
  std::string out = absl::StrFormat(
      "et-sim: %d ranks (%d simulated), %d events\ngraph time: %.3f ms (%d "
      "steps)\n",
      r.world_size, r.classes, r.events, ms(r.step_ns), r.step.steps);
  if (!r.topology.empty()) {
    absl::StrAppendFormat(&out, "topology: %s (%s)\n", r.topology,
                          r.topology_reason);
    if (!r.cluster.empty())
      absl::StrAppendFormat(&out, "cluster: %s\n", r.cluster);
  }
  absl::StrAppend(&out, FormatStepReport(r.step, "predicted", top));
  for (const std::string& n : r.notes) absl::StrAppend(&out, "note: ", n, "\n");
  absl::StrAppend(&out, FormatStepBreakdownText(r.breakdown, top));
  // Totals over the whole graph, every step: graph_ms, not step_ms, so that
  // it is not read against the per-step times above.
  absl::StrAppendFormat(&out,
                        "\nper rank, over the whole graph (%d steps; compute + "
                        "exposed_comm + idle = graph):\n"
                        "ranks            graph_ms  compute_ms  comm_ms  "
                        "exposed_comm_ms  idle_ms\n",
                        r.step.steps);
  for (size_t i = 0; i < r.ranks.size() && i < top; ++i) {
    const RankStats& s = r.ranks[i];
    const std::string label = RanksLabel(s.ranks);
    absl::string_view who = label;
    if (!absl::ConsumePrefix(&who, "ranks "))
      absl::ConsumePrefix(&who, "rank ");
    const std::string who_text(who);
    absl::StrAppendFormat(&out, "%-16s %9.3f %11.3f %8.3f %16.3f %8.3f\n",
                          who_text, ms(s.step_ns), ms(s.compute_ns),
                          ms(s.comm_ns), ms(s.exposed_comm_ns), ms(s.idle_ns));
  }
  if (r.memory) {
    std::vector<MemoryRow> rows;
    std::vector<std::string> labels;
    for (size_t i = 0; i < r.ranks.size() && i < top; ++i) {
      if (!r.ranks[i].memory) continue;
      rows.push_back(*r.ranks[i].memory);
      labels.push_back(RanksLabel(r.ranks[i].ranks));
    }
    absl::StrAppend(&out, FormatMemoryText(rows, labels, *r.memory));
  }
  if (!r.phases.empty()) absl::StrAppend(&out, "\n", FormatPhases(r.phases));
  // Which times these are: et-viz --report shows the recorded ones, which
  // differ from these by the profiler's cost in the unprofiled mode.
  absl::StrAppendFormat(
      &out,
      "\ntop ops of the slowest rank, as simulated (host time %s; et-viz "
      "--report shows the recorded times):\n"
      "%s"
      "op                             calls   total_ms    mean_us  share  "
      "rec_calls   rec_ms   error\n",
      HostTimeModeName(r.step.host_time),
      r.recorded_none.empty()
          ? std::string("recorded: the calls the trace timed, their recorded "
                        "time and the error of their simulated time\n")
          : absl::StrCat("recorded: none, ", r.recorded_none, "\n"));
  for (size_t i = 0; i < r.ops.size() && i < top; ++i) {
    const OpRow& o = r.ops[i];
    absl::StrAppendFormat(
        &out, "%-30.30s %6d %10.3f %10.2f %5.1f%% %10d %8s %7s\n", o.name,
        o.calls, ms(o.total_ns), o.total_ns / 1e3 / o.calls, o.share * 100,
        o.recorded.calls, RecordedMsText(o.recorded),
        RecordedErrorText(o.recorded));
  }
  absl::StrAppend(&out, FormatKernelTableText(r, top));
  absl::StrAppend(&out,
                  "\ncollectives          group   ranks       bytes  calls   "
                  "total_ms    mean_us  wait_ms  share\n");
  for (size_t i = 0; i < r.collectives.size() && i < top; ++i) {
    const CollectiveRow& c = r.collectives[i];
    absl::StrAppendFormat(
        &out, "%-20s %-6s %6d %11d %6d %10.3f %10.2f %8.3f %5.1f%%\n",
        c.synthesized ? c.type + "*" : c.type, c.group, c.group_size, c.bytes,
        c.calls, ms(c.total_ns), c.total_ns / 1e3 / c.calls, ms(c.wait_ns),
        c.share * 100);
  }
  if (std::any_of(r.collectives.begin(), r.collectives.end(),
                  [](const CollectiveRow& c) { return c.synthesized; })) {
    // Tensor parallelism's all-reduces (group scaleout:tp) are --layout's.
    const bool tp = std::any_of(
        r.collectives.begin(), r.collectives.end(), [](const CollectiveRow& c) {
          return c.synthesized && absl::StartsWith(c.group, "scaleout:tp");
        });
    absl::StrAppend(&out, tp ? "* synthesized by et-sim (--layout tp, "
                               "--dp-sync), not in the trace\n"
                             : "* synthesized by et-sim (--dp-sync), not in "
                               "the trace\n");
  }
  absl::StrAppendFormat(
      &out,
      "\ncritical path (the chain of dependent ops that ends last, on the "
      "slowest rank): %d ops, busy %.3f ms of the %.3f ms graph%s\n",
      r.critical_path.size(), ms(r.critical_path_busy_ns), ms(r.step_ns),
      CriticalWaitsText(r));
  std::vector<CriticalStep> longest = r.critical_path;
  std::stable_sort(longest.begin(), longest.end(),
                   [](const auto& a, const auto& b) {
                     return a.duration_ns > b.duration_ns;
                   });
  for (size_t i = 0; i < longest.size() && i < top; ++i) {
    absl::StrAppendFormat(
        &out, "  node %-8d %-30.30s start %10.3f ms  dur %10.2f us\n",
        longest[i].node_id, longest[i].name, ms(longest[i].start_ns),
        longest[i].duration_ns / 1e3);
  }
  return out;
}

namespace {

// FormatReportJson's object less its tables that grow with the graph (ops,
// collectives, the critical path): what a caller that reads those as columns
// (Python) parses.
nlohmann::json ReportSummaryJson(const Report& r) {
  nlohmann::json j;
  j["world_size"] = r.world_size;
  j["topology"] = r.topology;
  j["topology_reason"] = r.topology_reason;
  j["cluster"] = r.cluster;
  j["simulated_classes"] = r.classes;
  j["events"] = r.events;
  j["step_ns"] = r.step_ns;
  j["step"] = StepReportJson(r.step);
  j["notes"] = r.notes;
  j["step_breakdown"] = StepBreakdownJson(r.breakdown);
  for (const RankStats& s : r.ranks) {
    j["ranks"].push_back({{"ranks", s.ranks},
                          {"step_ns", s.step_ns},
                          {"compute_ns", s.compute_ns},
                          {"comm_ns", s.comm_ns},
                          {"exposed_comm_ns", s.exposed_comm_ns},
                          {"idle_ns", s.idle_ns}});
    if (s.memory) j["ranks"].back().update(MemoryRowJson(*s.memory));
  }
  if (r.memory) j["memory"] = MemorySummaryJson(*r.memory);
  j["gpu_kernels"] = KernelTableJson(r);
  if (!r.recorded_none.empty()) j["recorded_none"] = r.recorded_none;
  if (!r.phases.empty()) j["phases"] = PhasesJson(r.phases);
  j["critical_path_busy_ns"] = r.critical_path_busy_ns;
  const CriticalWaits& w = r.critical_path_waits;
  j["critical_path_waits_ns"] = {{"host_gap", w.host_gap_ns},
                                 {"gpu_gap", w.gpu_gap_ns},
                                 {"rendezvous", w.rendezvous_ns},
                                 {"other", w.other_ns}};
  return j;
}

}  // namespace

std::string FormatReportSummaryJson(const Report& r) {
  return ReportSummaryJson(r).dump(1);
}

std::string FormatReportJson(const Report& r) { return ReportJson(r).dump(1); }

// The keys are sorted (nlohmann::json's map), so the summary's keys and the
// tables' interleave as before.
nlohmann::json ReportJson(const Report& r) {
  nlohmann::json j = ReportSummaryJson(r);
  j["ops"] = nlohmann::json::array();
  for (const OpRow& o : r.ops) {
    j["ops"].push_back({{"name", o.name},
                        {"calls", o.calls},
                        {"total_ns", o.total_ns},
                        {"share", o.share}});
    j["ops"].back().update(RecordedJson(o.recorded));
  }
  j["collectives"] = nlohmann::json::array();
  for (const CollectiveRow& c : r.collectives) {
    j["collectives"].push_back({{"type", c.type},
                                {"group", c.group},
                                {"group_size", c.group_size},
                                {"bytes", c.bytes},
                                {"calls", c.calls},
                                {"total_ns", c.total_ns},
                                {"wait_ns", c.wait_ns},
                                {"share", c.share}});
    if (c.synthesized) j["collectives"].back()["synthesized"] = true;
  }
  j["critical_path"] = nlohmann::json::array();
  for (const CriticalStep& s : r.critical_path) {
    j["critical_path"].push_back({{"node", s.node_id},
                                  {"name", s.name},
                                  {"start_ns", s.start_ns},
                                  {"duration_ns", s.duration_ns}});
  }
  return j;
}

absl::Status WriteTimeline(const std::vector<RankClass>& classes,
                           const SimResult& result, const std::string& path) {
  ChromeTrace trace(path);  // streamed: a timeline can hold millions of ops
  for (size_t c = 0; c < classes.size(); ++c) {
    const RankProgram& p = *classes[c].program;
    const ClassTimeline& tl = result.timelines[c];
    const int64_t pid = classes[c].ranks.front();
    trace.NameProcess(
        pid, classes[c].ranks.size() == 1
                 ? absl::StrCat("rank ", pid, " (predicted)")
                 : absl::StrCat("rank ", pid, " (predicted, +",
                                classes[c].ranks.size() - 1, " identical)"));
    AddRecordedTimeline(*p.graph, p.steps, pid, &trace);
    for (size_t res = 0; res < p.resource_names.size(); ++res) {
      trace.NameThread(pid, static_cast<int64_t>(res), p.resource_names[res]);
    }
    for (size_t i = 0; i < p.kind.size(); ++i) {
      if (p.kind[i] == SimOpKind::kNoop || tl.finish_ns[i] < 0) continue;
      nlohmann::json args = {{"node", p.graph->id(i)}};
      if (IsComm(p.kind[i])) {
        args["bytes"] = p.comm_bytes[i];
        args["wait_us"] = (tl.start_ns[i] - tl.issue_ns[i]) / 1e3;
      }
      trace.AddComplete(pid, p.resource[i], std::string(p.graph->name(i)),
                        IsComm(p.kind[i]) ? "comm" : "compute", tl.start_ns[i],
                        tl.finish_ns[i] - tl.start_ns[i], std::move(args));
    }
  }
  return trace.Write(path);
}

}  // namespace et::sim
