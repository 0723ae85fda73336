// Pipeline schedules' pass orders; see pipeline_order.h.
#include "scaleout/pipeline_order.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace et::scaleout {

absl::StatusOr<PpScheduleChoice> ParsePpSchedule(absl::string_view text) {
  if (text == "1f1b") return PpScheduleChoice{PpSchedule::k1F1B, 1};
  if (text == "gpipe") return PpScheduleChoice{PpSchedule::kGpipe, 1};
  constexpr absl::string_view kInterleaved = "interleaved:";
  if (text.substr(0, kInterleaved.size()) == kInterleaved) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(text.substr(kInterleaved.size()), &v) || v < 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s': interleaved:V needs V >= 2 model chunks per rank "
          "(interleaved:1 is 1f1b)",
          text));
    }
    return PpScheduleChoice{PpSchedule::kInterleaved, v};
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s': unknown pipeline schedule (expected 1f1b, gpipe or "
      "interleaved:V)",
      text));
}

absl::string_view PpScheduleName(PpSchedule schedule) {
  switch (schedule) {
    case PpSchedule::kGpipe:
      return "gpipe";
    case PpSchedule::kInterleaved:
      return "interleaved";
    case PpSchedule::k1F1B:
      break;
  }
  return "1f1b";
}

std::string PpScheduleText(PpSchedule schedule, int64_t chunks) {
  if (schedule == PpSchedule::kInterleaved)
    return absl::StrFormat("interleaved:%d", chunks);
  return std::string(PpScheduleName(schedule));
}

absl::Status CheckInterleaved(int64_t pp, int64_t micro_batches,
                              int64_t chunks) {
  if (micro_batches % pp == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "--pp-schedule interleaved:%d with --micro-batches %d on pp=%d: the "
      "interleaved schedule runs the micro-batches in groups of pp, so M must "
      "be a multiple of P (Megatron-LM requires it too)",
      chunks, micro_batches, pp));
}

int64_t WarmupForwards(PpSchedule schedule, int64_t pp, int64_t micro_batches,
                       int64_t chunks, int64_t stage) {
  switch (schedule) {
    case PpSchedule::kGpipe:
      return micro_batches;
    case PpSchedule::kInterleaved: {
      const int64_t total = micro_batches * chunks;
      if (micro_batches == pp) return total;
      return std::min(total, 2 * (pp - stage - 1) + (chunks - 1) * pp);
    }
    case PpSchedule::k1F1B:
      break;
  }
  return std::min(micro_batches, pp - stage - 1);
}

std::vector<PipelinePass> PassOrder(PpSchedule schedule, int64_t pp,
                                    int64_t micro_batches, int64_t chunks,
                                    int64_t stage) {
  const int64_t v = schedule == PpSchedule::kInterleaved ? chunks : 1;
  const int64_t total = micro_batches * v;
  // Pass k of either direction: its micro-batch and the rank's chunk. With
  // one chunk, pass k is micro-batch k.
  auto pass = [&](int64_t k, bool backward) {
    if (v == 1) return PipelinePass{backward, k, 0};
    const int64_t in_group = k % (pp * v);
    const int64_t forward_chunk = in_group / pp;
    return PipelinePass{backward, (k / (pp * v)) * pp + in_group % pp,
                        backward ? v - 1 - forward_chunk : forward_chunk};
  };
  const int64_t warm =
      WarmupForwards(schedule, pp, micro_batches, chunks, stage);
  std::vector<PipelinePass> order;
  order.reserve(static_cast<size_t>(2 * total));
  for (int64_t k = 0; k < warm; ++k) order.push_back(pass(k, false));
  for (int64_t k = 0; k < total - warm; ++k) {
    order.push_back(pass(warm + k, false));
    order.push_back(pass(k, true));
  }
  for (int64_t k = total - warm; k < total; ++k) order.push_back(pass(k, true));
  return order;
}

}  // namespace et::scaleout
