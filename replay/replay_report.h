// What a replay measured, per op and per iteration, against what the trace
// recorded: measured vs recorded time per op, iteration (step) time and its
// error, achieved TFLOP/s of GEMMs and bus bandwidth of collectives
// (nccl-tests' size conventions and et::BusBandwidthFactor). Built from the
// timed iterations; printed as text and JSON.
#ifndef REPLAY_REPLAY_REPORT_H_
#define REPLAY_REPLAY_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "replay/device_backend.h"
#include "replay/replay_plan.h"
#include "step/step_report.h"

namespace et::replay {

struct OpStat {
  size_t op = 0;  // plan op index
  int64_t mean_ns = 0;
  int64_t min_ns = 0;
  int64_t p50_ns = 0;
  double tflops = 0;      // GEMM-like ops with FLOPs
  double algbw_gbps = 0;  // collectives: nccl-tests' algorithm bandwidth
  double busbw_gbps = 0;  // collectives: bus bandwidth
  int ranks = 1;          // collectives: communicator size
};

struct CommStats {
  int64_t count = 0;           // executed per iteration
  int64_t bytes = 0;           // sum of comm_size per iteration
  double mean_busbw_gbps = 0;  // time-weighted: total bus bytes / total time
};

struct ReplayReport {
  std::string input;
  std::string device;
  int rank = 0;
  int ranks = 1;
  int warmup_iterations = 0;
  int timed_iterations = 0;
  int op_timing_iterations = 0;  // iterations of their own that timed each op
  std::vector<double> iteration_us;  // measured, each timed iteration (graph)
  double mean_iteration_us = 0;
  RankSteps local_steps;  // this rank's steps (mean over timed iterations)
  StepReport step;        // every rank's, against the measured step
  int64_t comm_calls_per_iteration =
      0;  // communication calls the backend completed
  std::map<std::string, int64_t> ops_by_kind;    // executed per iteration
  std::map<std::string, CommStats> collectives;  // "ALL_REDUCE" -> totals
  int64_t gemm_count = 0;
  double gemm_tflops = 0;   // total GEMM FLOPs / total GEMM time
  std::vector<OpStat> ops;  // every op that does something, issue order
};

// `ranks` is the launch's world size (for collectives over every rank).
// Fills local_steps and a one-rank `step` (StepReportOfRanks widens it).
// The step and iteration times come from timings.steps, op times from
// timings.op_iterations().
ReplayReport BuildReport(const ReplayPlan& plan, const ReplayTimings& timings,
                         int ranks);

// The step report of every rank from each rank's local_steps, flattened by
// StepValues (what one rank sends to the others).
std::vector<double> StepValues(const RankSteps& steps);
StepReport StepReportOfRanks(const ReplayPlan& plan,
                             const std::vector<std::vector<double>>& by_rank);

// The human summary: step time, error, top `top_ops` ops by measured time,
// totals.
std::string ReportText(const ReplayPlan& plan, const ReplayReport& report,
                       int top_ops);

// One JSON object (see docs/et-replay.md for the fields).
std::string ReportJson(const ReplayPlan& plan, const ReplayReport& report);

// nccl-tests' "size" of a collective whose ranks each contribute `bytes`: the
// total output for all-gather/gather, the per-rank buffer otherwise.
double NcclTestsBytes(ChakraProtoMsg::CollectiveCommType type, int64_t bytes,
                      int ranks);

}  // namespace et::replay

#endif  // REPLAY_REPLAY_REPORT_H_
