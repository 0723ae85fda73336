// The trace's recorded collectives for --comm calibrated; see
// comm_calibration.h.
#include "simulator/comm_calibration.h"

#include <map>
#include <optional>
#include <tuple>

#include "model/process_group.h"
#include "simulator/comm_fit.h"

namespace et::sim {
namespace {

// Ranks the collective ran on when recorded.
int64_t RecordedGroupSize(const RankProgram& p, int32_t group,
                          int64_t world_size) {
  const ProcessGroup& g = p.groups.groups[group];
  if (group == 0 || g.ranks.empty()) {
    return p.recorded_world_size > 0 ? p.recorded_world_size : world_size;
  }
  return static_cast<int64_t>(g.ranks.size());
}

}  // namespace

std::vector<NcclTestsLogRow> RecordedCollectives(
    const std::vector<const RankProgram*>& programs, int64_t world_size) {
  std::map<std::tuple<int, int64_t, int64_t>, double> shortest_us;
  for (const RankProgram* p : programs) {
    for (size_t i = 0; i < p->kind.size(); ++i) {
      if (p->kind[i] != SimOpKind::kCollective || p->recorded_ns[i] <= 0)
        continue;
      const std::optional<NcclOp> op = NcclOpForChakra(p->comm_type[i]);
      const int64_t ranks = RecordedGroupSize(*p, p->group[i], world_size);
      if (!op || ranks < 2) continue;
      // nccl-tests sizes an all-gather by its output; Chakra by the shard.
      const int64_t bytes = static_cast<int64_t>(p->comm_bytes[i]) *
                            (*op == NcclOp::kAllGather ? ranks : 1);
      const double us = static_cast<double>(p->recorded_ns[i]) / 1e3;
      auto [it, inserted] = shortest_us.emplace(
          std::make_tuple(static_cast<int>(*op), ranks, bytes), us);
      if (!inserted) it->second = std::min(it->second, us);
    }
  }
  std::vector<NcclTestsLogRow> rows;
  for (const auto& [key, us] : shortest_us) {
    rows.push_back({static_cast<NcclOp>(std::get<0>(key)), std::get<1>(key),
                    std::get<2>(key), us});
  }
  return rows;
}

absl::StatusOr<std::string> CalibratePlatformToTrace(
    const std::vector<const RankProgram*>& programs, int64_t world_size,
    Platform* platform) {
  const std::vector<NcclTestsLogRow> rows =
      RecordedCollectives(programs, world_size);
  if (rows.empty()) {
    return absl::InvalidArgumentError(
        "--comm calibrated: the trace has no recorded collective durations "
        "to fit (use --comm nccl)");
  }
  const Platform start = *platform;
  const CommFit fit = FitPlatform(start, rows);
  *platform = fit.platform;
  return DescribeFit(start, fit,
                     "--comm calibrated: the trace's shortest recorded kernel "
                     "per op, group size and size");
}

}  // namespace et::sim
