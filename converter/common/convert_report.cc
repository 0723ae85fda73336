// Text and JSON renderings of a ConvertReport; see convert_report.h.
#include "converter/common/convert_report.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace et::convert {
namespace {

std::string Counts(const std::map<std::string, int64_t>& m) {
  std::string out;
  for (const auto& [k, v] : m)
    absl::StrAppendFormat(&out, "%s%s %d", out.empty() ? "" : ", ", k, v);
  return out.empty() ? "none" : out;
}

}  // namespace

std::string ConvertReport::ToText() const {
  const bool from_et = input_units == "ET nodes";
  std::string out = absl::StrFormat(
      "%s -> %s: %s%s, %d %s -> %d nodes (%d data deps, %d ctrl deps) in "
      "%.3f s\n",
      input_path, output_path, from_et ? "schema " : "", schema, et_nodes,
      input_units, written_nodes, data_deps, ctrl_deps, wall_seconds);
  absl::StrAppend(&out, "  nodes: ", Counts(nodes_by_type), "\n");
  std::string colls;
  for (const auto& [type, count] : collectives_by_type) {
    auto bytes = collective_bytes_by_type.find(type);
    absl::StrAppendFormat(
        &colls, "%s%s %d (%d bytes)", colls.empty() ? "" : ", ", type, count,
        bytes == collective_bytes_by_type.end() ? 0 : bytes->second);
  }
  absl::StrAppend(&out, "  communication: ", colls.empty() ? "none" : colls,
                  "\n");
  absl::StrAppend(&out, "  not made nodes: ", Counts(skipped_by_reason), "\n");
  if (!unknown_ops.empty()) {
    std::vector<std::pair<int64_t, std::string>> top;
    int64_t total = 0;
    for (const auto& [name, count] : unknown_ops) {
      top.emplace_back(-count, name);
      total += count;
    }
    std::sort(top.begin(), top.end());
    std::string names;
    for (size_t k = 0; k < top.size() && k < 5; ++k) {
      absl::StrAppendFormat(&names, "%s%s %d", k ? ", " : "", top[k].second,
                            -top[k].first);
    }
    absl::StrAppendFormat(
        &out,
        "  ops without a cost model (kept, 0 FLOPs): %d of %d kinds; top: %s\n",
        total, unknown_ops.size(), names);
  }
  // A profiler trace alone is not matched with anything: its ops are the
  // trace's own, so "matches" would only count them again.
  if (!kineto_by_thread.empty() && from_et) {
    std::string threads;
    for (const auto& [tid, mt] : kineto_by_thread) {
      absl::StrAppendFormat(&threads, "%sthread %d %d/%d (%.1f%%)",
                            threads.empty() ? "" : ", ", tid, mt.first,
                            mt.second,
                            mt.second ? 100.0 * mt.first / mt.second : 100.0);
    }
    absl::StrAppend(&out, "  Kineto matches by thread: ", threads, "\n");
  }
  for (const std::string& n : notes) absl::StrAppend(&out, "  ", n, "\n");
  for (const std::string& w : warnings)
    absl::StrAppend(&out, "  warning: ", w, "\n");
  return out;
}

std::string ConvertReport::ToJson() const {
  nlohmann::json j;
  j["input"] = input_path;
  j["output"] = output_path;
  if (rank >= 0) j["rank"] = rank;
  j["schema"] = schema;
  j["et_nodes"] = et_nodes;
  j["input_units"] = input_units;
  j["written_nodes"] = written_nodes;
  j["nodes_by_type"] = nodes_by_type;
  j["collectives_by_type"] = collectives_by_type;
  j["collective_bytes_by_type"] = collective_bytes_by_type;
  j["skipped_by_reason"] = skipped_by_reason;
  j["ops_without_cost_model"] = unknown_ops;
  j["data_deps"] = data_deps;
  j["ctrl_deps"] = ctrl_deps;
  j["wall_seconds"] = wall_seconds;
  j["input_bytes"] = input_bytes;
  j["kineto_host_ops"] = kineto_host_ops;
  j["kineto_host_ops_matched"] = kineto_host_ops_matched;
  j["gpu_ops"] = gpu_ops;
  j["orphan_gpu_ops"] = orphan_gpu_ops;
  j["orphan_gpu_ops_by_cause"] = orphan_gpu_ops_by_cause;
  j["gpu_ops_left_out"] = gpu_ops_left_out;
  j["gpu_ops_before_trace"] = gpu_ops_before_trace;
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& [tid, mt] : kineto_by_thread) {
    threads.push_back(
        {{"tid", tid}, {"matched", mt.first}, {"host_ops", mt.second}});
  }
  j["kineto_by_thread"] = threads;
  j["notes"] = notes;
  j["warnings"] = warnings;
  return j.dump();
}

}  // namespace et::convert
