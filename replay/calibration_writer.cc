// Measured times by (op name, input shapes); see calibration_writer.h.
#include "replay/calibration_writer.h"

#include <algorithm>
#include <map>
#include <utility>

#include "nlohmann/json.hpp"
#include "proto/comm_type.h"
#include "proto/file_util.h"

namespace et::replay {

std::string CalibrationJson(const ReplayPlan& plan, const std::vector<IterationTiming>& timed,
                            const std::string& device) {
  // Keyed by interned ids, ordered by (name, shapes) text for a deterministic file.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    if (op.kind == OpKind::kNone) continue;
    groups[{plan.name(op), plan.shape_key(op)}].push_back(i);
  }
  nlohmann::json ops = nlohmann::json::array();
  std::vector<int64_t> samples;
  for (const auto& [key, members] : groups) {
    samples.clear();
    for (size_t i : members) {
      for (const IterationTiming& t : timed) samples.push_back(t.ops[i].duration_ns);
    }
    if (samples.empty()) continue;
    std::sort(samples.begin(), samples.end());
    double sum = 0;
    for (int64_t s : samples) sum += s;
    const ReplayOp& first = plan.ops[members.front()];
    nlohmann::json entry = {{"name", key.first},
                            {"input_shapes", key.second},
                            {"kind", std::string(OpKindName(first.kind))},
                            {"count", members.size()},
                            {"samples", samples.size()},
                            {"mean_us", sum / samples.size() / 1e3},
                            {"min_us", samples.front() / 1e3},
                            {"p50_us", samples[samples.size() / 2] / 1e3}};
    if (first.kind == OpKind::kCollective) {
      entry["comm_type"] = std::string(CommTypeName(first.comm.type));
      entry["comm_bytes"] = first.comm.bytes;
    }
    ops.push_back(std::move(entry));
  }
  nlohmann::json doc = {{"version", 1}, {"device", device}, {"ops", std::move(ops)}};
  return doc.dump(1) + "\n";
}

absl::Status WriteCalibration(const std::string& path, const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              const std::string& device) {
  return WriteFileAtomically(path, CalibrationJson(plan, timed, device));
}

}  // namespace et::replay
