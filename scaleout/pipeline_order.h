// The order in which one pipeline rank runs its passes (a forward or a
// backward of one micro-batch through one of its model chunks), for each
// schedule et-sim synthesizes (docs/et-sim.md, "Pipeline parallelism from a
// one-rank trace"; Narayanan et al. 2021, "Efficient Large-Scale Language
// Model Training on GPU Clusters Using Megatron-LM", section 2.2):
//
// - gpipe: every micro-batch's forward, then every backward.
// - 1f1b: P - s - 1 forwards to warm up, then one forward and one backward
//   in turn, then the remaining backwards.
// - interleaved:V: rank s holds V model chunks, s, s + P, ..., of the P x V
//   chunks in model order. Its M x V forward passes run in groups of P
//   micro-batches: pass k is chunk (k mod PV) / P of micro-batch
//   (k / PV) P + k mod P; backward pass k the same micro-batch through chunk
//   V - 1 - (k mod PV) / P. It warms up with 2 (P - s - 1) + (V - 1) P
//   forwards (all of them when M = P, as Megatron-LM runs it), then
//   alternates forward and backward, then finishes the backwards. M must be a
//   multiple of P.
//
// Pure functions; the stage programs (pipeline_schedule.h) and the memory
// per rank (pipeline_plan.h) both walk this order.
#ifndef SCALEOUT_PIPELINE_ORDER_H_
#define SCALEOUT_PIPELINE_ORDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace et::scaleout {

enum class PpSchedule { k1F1B, kGpipe, kInterleaved };

// A --pp-schedule value: the schedule and its model chunks per rank (V: 1
// but for interleaved).
struct PpScheduleChoice {
  PpSchedule schedule = PpSchedule::k1F1B;
  int64_t chunks = 1;
};

// "1f1b", "gpipe", "interleaved:V" (V >= 2); errors are one line.
absl::StatusOr<PpScheduleChoice> ParsePpSchedule(absl::string_view text);
// "1f1b", "gpipe", "interleaved" (the schedule's family).
absl::string_view PpScheduleName(PpSchedule schedule);
// "1f1b", "gpipe", "interleaved:2" (as --pp-schedule takes it).
std::string PpScheduleText(PpSchedule schedule, int64_t chunks);

// One pass of a rank: `chunk` is the rank's own chunk index, 0 .. V - 1
// (model chunk chunk x P + stage).
struct PipelinePass {
  bool backward = false;
  int64_t micro_batch = 0;
  int64_t chunk = 0;
};

// The passes of `stage` (0 .. pp - 1) in order, 2 M V of them. `chunks` is V
// (1 for 1f1b and gpipe).
std::vector<PipelinePass> PassOrder(PpSchedule schedule, int64_t pp,
                                    int64_t micro_batches, int64_t chunks,
                                    int64_t stage);

// The forwards `stage` runs before its first backward (the warm-up).
int64_t WarmupForwards(PpSchedule schedule, int64_t pp, int64_t micro_batches,
                       int64_t chunks, int64_t stage);

// Why the interleaved schedule cannot run M micro-batches on P stages (M not
// a multiple of P), or OK.
absl::Status CheckInterleaved(int64_t pp, int64_t micro_batches,
                              int64_t chunks);

}  // namespace et::scaleout

#endif  // SCALEOUT_PIPELINE_ORDER_H_
