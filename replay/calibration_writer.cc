// Measured times by (op name, input shapes); see calibration_writer.h.
#include "replay/calibration_writer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "nlohmann/json.hpp"
#include "proto/comm_type.h"
#include "proto/file_util.h"
#include "proto/io_shapes.h"

namespace et::replay {
namespace {

// The trace's shapes string as a JSON list ("" -> []). Shapes are lists of
// integers, so the text our converter writes is already JSON; anything else
// becomes [].
nlohmann::json ShapesJson(const std::string& text) {
  if (text.empty()) return nlohmann::json::array();
  nlohmann::json j =
      nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_array() ? j : nlohmann::json::array();
}

// Types are JSON in our converter's output and Python literals in Chakra's
// reference converter's; either becomes a JSON list of strings ([] if neither).
nlohmann::json TypesJson(const std::string& text) {
  std::vector<std::string> types;
  if (ParseTypeList(text, &types)) return types;
  return nlohmann::json::array();
}

}  // namespace

std::string CalibrationJson(const ReplayPlan& plan,
                            const std::vector<IterationTiming>& timed,
                            const std::string& device) {
  // Ordered by (name, shapes) text for a deterministic file.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const ReplayOp& op = plan.ops[i];
    if (op.kind == OpKind::kNone) continue;
    groups[{plan.name(op), plan.shape_key(op)}].push_back(i);
  }
  nlohmann::json entries = nlohmann::json::array();
  std::vector<int64_t> samples;
  for (const auto& [key, members] : groups) {
    samples.clear();
    for (size_t i : members) {
      for (const IterationTiming& t : timed)
        samples.push_back(t.ops[i].duration_ns);
    }
    if (samples.empty()) continue;
    std::sort(samples.begin(), samples.end());
    double sum = 0, sum_sq = 0;
    for (int64_t s : samples) sum += s / 1e3;
    const double mean_us = sum / samples.size();
    for (int64_t s : samples)
      sum_sq += (s / 1e3 - mean_us) * (s / 1e3 - mean_us);
    const ReplayOp& first = plan.ops[members.front()];
    nlohmann::json entry = {{"name", key.first},
                            {"input_shapes", ShapesJson(key.second)},
                            {"input_types", TypesJson(plan.types(first))},
                            {"mean_us", mean_us},
                            {"stddev_us", std::sqrt(sum_sq / samples.size())},
                            {"count", samples.size()},
                            {"min_us", samples.front() / 1e3},
                            {"p50_us", samples[samples.size() / 2] / 1e3}};
    if (first.kind == OpKind::kCollective) {
      entry["comm_type"] = std::string(CommTypeName(first.comm.type));
      entry["comm_bytes"] = first.comm.bytes;
    }
    entries.push_back(std::move(entry));
  }
  nlohmann::json doc = {{"format", "et-calibration"},
                        {"version", 1},
                        {"device", device},
                        {"entries", std::move(entries)}};
  return doc.dump(1) + "\n";
}

absl::Status WriteCalibration(const std::string& path, const ReplayPlan& plan,
                              const std::vector<IterationTiming>& timed,
                              const std::string& device) {
  return WriteFileAtomically(path, CalibrationJson(plan, timed, device));
}

}  // namespace et::replay
