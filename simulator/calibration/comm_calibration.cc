// The trace's recorded collectives for --comm calibrated; see
// comm_calibration.h.
#include "simulator/calibration/comm_calibration.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "model/process_group.h"
#include "simulator/calibration/comm_fit.h"
#include "simulator/calibration/host_collective_fit.h"

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

// Ranks a host collective ran on when recorded, from the graph itself: under
// --layout the program's groups are the simulated job's. A graph that does
// not name its world (torch 1.13) is one of `job_world` rank files when each
// rank has its own (0: unknown).
int64_t RecordedHostGroupSize(const NodeModel& graph, const CommSpec& c,
                              int64_t job_world) {
  if (c.group >= 0)
    return static_cast<int64_t>(graph.groups()[c.group].ranks.size());
  return graph.info().world_size > 0 ? graph.info().world_size : job_world;
}

}  // namespace

std::vector<NcclTestsLogRow> RecordedCollectives(
    const std::vector<const RankProgram*>& programs, int64_t world_size) {
  using RowKey = std::tuple<int, int64_t, int64_t>;  // op, ranks, bytes
  std::map<RowKey, double> shortest_us;
  // Host collectives: per call (the k-th on its group, matched across the
  // ranks' programs) the fastest member's time, the one that waited least.
  std::map<std::tuple<std::string, int64_t>, std::pair<RowKey, double>> calls;
  std::map<RowKey, int> members;
  // A rank's program stands for other ranks too (--layout, --world): each
  // recorded graph counts once, so the fit does not move with the job.
  std::set<const NodeModel*> seen;
  for (const RankProgram* p : programs) seen.insert(p->graph);
  const int64_t job_world =
      static_cast<int64_t>(seen.size()) == world_size ? world_size : 0;
  seen.clear();
  for (const RankProgram* p : programs) {
    if (!seen.insert(p->graph).second) continue;
    std::map<std::string, int64_t> issued;
    for (size_t i = 0; i < p->kind.size(); ++i) {
      if (p->kind[i] != SimOpKind::kCollective || p->recorded_ns[i] <= 0)
        continue;
      const std::optional<NcclOp> op = NcclOpForChakra(p->comm_type[i]);
      const CommSpec* host = p->graph->comm(i);
      if (host != nullptr && !host->on_host) host = nullptr;
      const int64_t ranks =
          host != nullptr ? RecordedHostGroupSize(*p->graph, *host, job_world)
                          : RecordedGroupSize(*p, p->group[i], world_size);
      if (!op || ranks < 2) continue;
      // nccl-tests sizes an all-gather by its output; Chakra by the shard.
      const int64_t bytes = static_cast<int64_t>(p->comm_bytes[i]) *
                            (*op == NcclOp::kAllGather ? ranks : 1);
      const double us = static_cast<double>(p->recorded_ns[i]) / 1e3;
      const RowKey key(static_cast<int>(*op), ranks, bytes);
      auto [it, inserted] = shortest_us.emplace(key, us);
      if (!inserted) it->second = std::min(it->second, us);
      if (host != nullptr) {
        const std::string& group = p->groups.groups[p->group[i]].name;
        auto [call, fresh] =
            calls.try_emplace(std::make_tuple(group, issued[group]++), key, us);
        if (!fresh) call->second.second = std::min(call->second.second, us);
        ++members[key];
      }
    }
  }
  // With the calls of several ranks, a host collective's typical call:
  // gloo's worker shares the host's cores with the step, so its best call
  // is not what the others cost (tp2dp2: 0.21 ms at best, 2-5 ms typical).
  std::map<RowKey, std::vector<double>> typical_us;
  for (const auto& [id, call] : calls)
    typical_us[call.first].push_back(call.second);
  for (auto& [key, v] : typical_us) {
    if (members[key] <= static_cast<int>(v.size())) continue;  // one rank
    double sum = 0;
    for (double us : v) sum += us;
    shortest_us[key] = sum / static_cast<double>(v.size());
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
        "to fit (use --comm nccl; a gloo trace needs its profiler trace, "
        "whose gloo:* records time each collective)");
  }
  const Platform start = *platform;
  if (start.host_backend) {
    const HostCollectiveFit fit = FitHostCollectives(start, rows);
    *platform = fit.platform;
    return DescribeHostFit(start, fit, rows.size(),
                           "the trace's own gloo work records (per call the "
                           "rank that waited least; per op, group size and "
                           "size the mean over calls across the ranks' files, "
                           "the shortest from one rank's)");
  }
  const CommFit fit = FitPlatform(start, rows);
  *platform = fit.platform;
  return DescribeFit(start, fit,
                     "--comm calibrated: the trace's shortest recorded kernel "
                     "per op, group size and size");
}

}  // namespace et::sim
