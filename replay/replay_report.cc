// Aggregation and printing of replay measurements; see replay_report.h.
#include "replay/replay_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/comm_type.h"
#include "nlohmann/json.hpp"

namespace et::replay {
namespace {

// Ranks of the communicator the op ran on: a group that lists no ranks spans
// every launched rank (MpiWorld::FormGroups), whatever size it recorded.
int CommRanks(const ReplayPlan& plan, const CommSpec& c, int ranks) {
  if (c.group < 0 || plan.groups[c.group].ranks.empty()) return ranks;
  return static_cast<int>(plan.groups[c.group].ranks.size());
}

OpStat StatOf(const ReplayPlan& plan, const std::vector<IterationTiming>& timed,
              size_t i, int ranks, std::vector<int64_t>* scratch) {
  scratch->clear();
  for (const IterationTiming& t : timed)
    scratch->push_back(t.ops[i].duration_ns);
  std::sort(scratch->begin(), scratch->end());
  OpStat s;
  s.op = i;
  int64_t sum = 0;
  for (int64_t d : *scratch) sum += d;
  s.mean_ns =
      scratch->empty() ? 0 : sum / static_cast<int64_t>(scratch->size());
  s.min_ns = scratch->empty() ? 0 : scratch->front();
  s.p50_ns = scratch->empty() ? 0 : (*scratch)[scratch->size() / 2];
  const ReplayOp& op = plan.ops[i];
  const double seconds = s.mean_ns / 1e9;
  if (op.flops > 0 && seconds > 0) s.tflops = op.flops / seconds / 1e12;
  if (op.kind == ReplayOpKind::kCollective) {
    s.ranks = CommRanks(plan, op.comm, ranks);
    if (seconds > 0) {
      s.algbw_gbps =
          NcclTestsBytes(op.comm.type, op.comm.bytes, s.ranks) / seconds / 1e9;
      s.busbw_gbps = s.algbw_gbps * BusBandwidthFactor(op.comm.type, s.ranks);
    }
  } else if ((op.kind == ReplayOpKind::kSend ||
              op.kind == ReplayOpKind::kRecv) &&
             seconds > 0) {
    s.algbw_gbps = s.busbw_gbps = op.comm.bytes / seconds / 1e9;
  }
  return s;
}

// When each step ended in one iteration: the last end among its ops.
std::vector<int64_t> StepEnds(const ReplayPlan& plan,
                              const IterationTiming& t) {
  std::vector<int64_t> ends(static_cast<size_t>(plan.steps.steps()), 0);
  for (size_t i = 0; i < plan.ops.size() && i < t.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    if (op.kind == ReplayOpKind::kNone) continue;
    const int32_t k =
        plan.steps.step_ids().empty() ? 0 : plan.steps.step_index(op.node);
    if (k >= 0)
      ends[k] = std::max(ends[k], t.ops[i].start_ns + t.ops[i].duration_ns);
  }
  return ends;
}

// Each step's end, averaged over the timed iterations.
RankSteps LocalSteps(const ReplayPlan& plan,
                     const std::vector<IterationTiming>& timed, int rank) {
  std::vector<int64_t> mean(static_cast<size_t>(plan.steps.steps()), 0);
  for (const IterationTiming& t : timed) {
    const std::vector<int64_t> ends = StepEnds(plan, t);
    for (size_t k = 0; k < ends.size(); ++k)
      mean[k] += ends[k] / static_cast<int64_t>(timed.size());
  }
  return MakeRankSteps({rank}, mean, plan.Truth());
}

}  // namespace

// The layout: rank, truth, truth after the recording, the truth's fastest
// and slowest timing block (-1 absent), then each step.
constexpr size_t kStepValuesHead = 5;

std::vector<double> StepValues(const RankSteps& steps) {
  const std::vector<double>& blocks = steps.measured.blocks_us;
  const auto [fastest, slowest] =
      std::minmax_element(blocks.begin(), blocks.end());
  std::vector<double> v = {steps.ranks.empty() ? 0.0 : steps.ranks[0],
                           steps.measured.us.value_or(-1),
                           steps.measured.after_recording_us.value_or(-1),
                           blocks.empty() ? -1 : *fastest,
                           blocks.empty() ? -1 : *slowest};
  v.insert(v.end(), steps.step_us.begin(), steps.step_us.end());
  return v;
}

StepReport StepReportOfRanks(const ReplayPlan& plan,
                             const std::vector<std::vector<double>>& by_rank) {
  std::vector<RankSteps> rows;
  const MeasuredStep local = plan.Truth();
  for (const std::vector<double>& v : by_rank) {
    if (v.size() < kStepValuesHead) continue;
    RankSteps r;
    r.ranks = {static_cast<int64_t>(v[0])};
    r.step_us.assign(v.begin() + kStepValuesHead, v.end());
    double sum = 0;
    for (double us : r.step_us) sum += us;
    r.mean_us = r.step_us.empty() ? 0 : sum / r.step_us.size();
    if (v[1] > 0) {
      r.measured.us = v[1];
      r.measured.source =
          local.source.empty()
              ? (plan.host_time == HostTimeMode::kUnprofiled ? "unprofiled-run"
                                                             : "profiled-run")
              : local.source;
      r.error_pct = (r.mean_us - v[1]) / v[1] * 100.0;
      if (v[2] > 0) r.measured.after_recording_us = v[2];
      if (v[3] > 0 && v[4] > 0) r.measured.blocks_us = {v[3], v[4]};
    } else {
      r.measured.withheld = local.withheld;  // the same reason on every rank
    }
    rows.push_back(std::move(r));
  }
  StepReport report =
      MakeStepReport(std::move(rows), plan.steps.steps(), plan.host_time,
                     plan.host_time == HostTimeMode::kUnprofiled
                         ? plan.steps.nodes_outside_steps()
                         : 0,
                     plan.steps.has_gpu_ops());
  report.notes.insert(report.notes.begin(), plan.notes.begin(),
                      plan.notes.end());
  return report;
}

double NcclTestsBytes(ChakraProtoMsg::CollectiveCommType type, int64_t bytes,
                      int ranks) {
  if (type == ChakraProtoMsg::ALL_GATHER || type == ChakraProtoMsg::GATHER) {
    return static_cast<double>(bytes) * std::max(ranks, 1);
  }
  return static_cast<double>(bytes);
}

ReplayReport BuildReport(const ReplayPlan& plan, const ReplayTimings& timings,
                         int ranks) {
  const std::vector<IterationTiming>& timed = timings.steps;
  ReplayReport r;
  r.ranks = ranks;
  r.timed_iterations = static_cast<int>(timed.size());
  r.op_timing_iterations = static_cast<int>(timings.ops.size());
  double sum = 0;
  for (const IterationTiming& t : timed) {
    r.iteration_us.push_back(t.total_ns / 1e3);
    sum += t.total_ns / 1e3;
  }
  if (!timed.empty())
    r.comm_calls_per_iteration = timed.back().comm_calls;
  else if (!timings.ops.empty())
    r.comm_calls_per_iteration = timings.ops.back().comm_calls;
  r.mean_iteration_us = timed.empty() ? 0 : sum / timed.size();
  r.local_steps = LocalSteps(plan, timed, std::max(plan.recorded_rank, 0));
  r.step = StepReportOfRanks(plan, {StepValues(r.local_steps)});
  std::vector<int64_t> scratch;
  double gemm_flops = 0, gemm_seconds = 0;
  std::map<std::string, double> bus_bytes, comm_seconds;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    if (op.kind == ReplayOpKind::kNone) continue;
    OpStat s = StatOf(plan, timings.op_iterations(), i, ranks, &scratch);
    ++r.ops_by_kind[std::string(ReplayOpKindName(op.kind))];
    if (op.kind == ReplayOpKind::kGemm) {
      ++r.gemm_count;
      gemm_flops += op.flops;
      gemm_seconds += s.mean_ns / 1e9;
    }
    if (op.kind == ReplayOpKind::kCollective) {
      const std::string type(CommTypeName(op.comm.type));
      CommStats& c = r.collectives[type];
      ++c.count;
      c.bytes += op.comm.bytes;
      bus_bytes[type] += NcclTestsBytes(op.comm.type, op.comm.bytes, s.ranks) *
                         BusBandwidthFactor(op.comm.type, s.ranks);
      comm_seconds[type] += s.mean_ns / 1e9;
    }
    r.ops.push_back(s);
  }
  if (gemm_seconds > 0) r.gemm_tflops = gemm_flops / gemm_seconds / 1e12;
  for (auto& [type, c] : r.collectives) {
    if (comm_seconds[type] > 0)
      c.mean_busbw_gbps = bus_bytes[type] / comm_seconds[type] / 1e9;
  }
  return r;
}

std::string ReportText(const ReplayPlan& plan, const ReplayReport& r,
                       int top_ops) {
  std::string out = absl::StrFormat("et-replay: %s on %s (rank %d of %d)\n",
                                    r.input, r.device, r.rank, r.ranks);
  absl::StrAppendFormat(&out, "iterations: %d warm-up + %d timed",
                        r.warmup_iterations, r.timed_iterations);
  // Why op times and the step come from different iterations (on a GPU, the
  // events that time each op add their own time to every kernel).
  if (r.op_timing_iterations > 0) {
    absl::StrAppendFormat(&out,
                          " (the step, no per-op timing) + %d timing each op\n",
                          r.op_timing_iterations);
  } else {
    out += "\n";
  }
  absl::StrAppendFormat(&out,
                        "iteration (the whole graph, %d steps): %.1f us\n",
                        r.step.steps, r.mean_iteration_us);
  absl::StrAppend(&out, FormatStepReport(r.step, "replayed", 16));
  out += "ops per iteration:";
  for (const auto& [kind, n] : r.ops_by_kind)
    absl::StrAppendFormat(&out, " %s=%d", kind, n);
  out += "\n";
  if (r.gemm_count > 0) {
    absl::StrAppendFormat(&out, "GEMMs: %d, %.2f TFLOP/s achieved\n",
                          r.gemm_count, r.gemm_tflops);
  }
  for (const auto& [type, c] : r.collectives) {
    absl::StrAppendFormat(&out,
                          "%s: %d ops, %d bytes, bus bandwidth %.3f GB/s\n",
                          type, c.count, c.bytes, c.mean_busbw_gbps);
  }
  std::vector<const OpStat*> top;
  for (const OpStat& s : r.ops) top.push_back(&s);
  std::stable_sort(
      top.begin(), top.end(),
      [](const OpStat* a, const OpStat* b) { return a->mean_ns > b->mean_ns; });
  if (top.size() > static_cast<size_t>(top_ops)) top.resize(top_ops);
  if (!top.empty()) {
    // A collective's measured time includes waiting for the slowest rank to
    // arrive in this replay; its recorded time, the recording run's waits
    // (an NCCL kernel spins from its start until its peers arrive).
    absl::StrAppendFormat(&out,
                          "top ops (mean of the iterations that timed them):\n"
                          "  %-8s %-36s %-10s %12s %12s\n",
                          "node", "name", "kind", "measured_us", "recorded_us");
  }
  bool collective_waits = false;
  for (const OpStat* s : top) {
    const ReplayOp& op = plan.ops[s->op];
    const bool waits = op.kind == ReplayOpKind::kCollective &&
                       s->mean_ns > 2 * std::max<int64_t>(op.recorded_ns, 1);
    collective_waits |= waits;
    absl::StrAppendFormat(&out, "  %-8d %-36.36s %-10s %12.1f %12.1f%s\n",
                          op.node_id, plan.name(op), ReplayOpKindName(op.kind),
                          s->mean_ns / 1e3, op.recorded_ns / 1e3,
                          waits ? "  *" : "");
  }
  if (collective_waits) {
    out +=
        "  * a collective's measured time includes waiting for the other "
        "ranks to reach it in this replay (their work before it); its "
        "recorded time holds the recording run's own waits (an NCCL kernel "
        "runs from its start until its peers arrive), so the two differ by "
        "how the ranks' arrivals differ\n";
  }
  return out;
}

std::string ReportJson(const ReplayPlan& plan, const ReplayReport& r) {
  nlohmann::json j;
  j["input"] = r.input;
  j["device"] = r.device;
  j["rank"] = r.rank;
  j["ranks"] = r.ranks;
  j["warmup_iterations"] = r.warmup_iterations;
  j["timed_iterations"] = r.timed_iterations;
  j["op_timing_iterations"] = r.op_timing_iterations;
  j["iteration_us"] = r.iteration_us;
  j["mean_iteration_us"] = r.mean_iteration_us;
  j["step"] = StepReportJson(r.step);
  j["comm_calls_per_iteration"] = r.comm_calls_per_iteration;
  j["ops_by_kind"] = r.ops_by_kind;
  j["gemm"] = {{"count", r.gemm_count}, {"tflops", r.gemm_tflops}};
  nlohmann::json colls = nlohmann::json::object();
  for (const auto& [type, c] : r.collectives) {
    colls[type] = {{"count", c.count},
                   {"bytes", c.bytes},
                   {"busbw_gbps", c.mean_busbw_gbps}};
  }
  j["collectives"] = colls;
  nlohmann::json ops = nlohmann::json::array();
  for (const OpStat& s : r.ops) {
    const ReplayOp& op = plan.ops[s.op];
    nlohmann::json o = {{"node", op.node_id},
                        {"name", std::string(plan.name(op))},
                        {"kind", std::string(ReplayOpKindName(op.kind))},
                        {"queue", op.queue},
                        {"recorded_us", op.recorded_ns / 1e3},
                        {"mean_us", s.mean_ns / 1e3},
                        {"min_us", s.min_ns / 1e3},
                        {"p50_us", s.p50_ns / 1e3}};
    if (op.flops > 0) o["tflops"] = s.tflops;
    if (IsCommunication(op.kind)) {
      if (op.kind == ReplayOpKind::kCollective)
        o["comm_type"] = CommTypeName(op.comm.type);
      o["comm_bytes"] = op.comm.bytes;
      o["ranks"] = s.ranks;
      o["algbw_gbps"] = s.algbw_gbps;
      o["busbw_gbps"] = s.busbw_gbps;
    }
    if (op.kind == ReplayOpKind::kGemm) {
      o["gemm"] = {{"batch", op.gemm.batch},
                   {"m", op.gemm.m},
                   {"n", op.gemm.n},
                   {"k", op.gemm.k},
                   {"dtype", std::string(DtypeName(op.gemm.dtype))}};
    }
    ops.push_back(std::move(o));
  }
  j["ops"] = std::move(ops);
  return j.dump(1) + "\n";
}

}  // namespace et::replay
