// Calibration file reading and writing; see calibration.h.
#include "step/calibration.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/atomic_output_file.h"
#include "base/json_file.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"

namespace et {
namespace {

// One entry's key and mean; every access checks the type first (nlohmann
// throws on a mismatch and this project has no exception handlers).
absl::StatusOr<std::pair<std::string, double>> ReadEntry(
    const std::string& path, size_t index, const nlohmann::json& e) {
  auto name = e.is_object() ? e.find("name") : e.end();
  auto mean = e.is_object() ? e.find("mean_us") : e.end();
  if (!e.is_object() || name == e.end() || !name->is_string() ||
      mean == e.end() || !mean->is_number()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: entry %d: needs a string name and a numeric mean_us", path,
        index));
  }
  const double mean_ns = mean->get<double>() * 1e3;
  // A negative or huge mean would wrap when rounded to int64 nanoseconds.
  if (!(mean_ns >= 0) || mean_ns > 9.2e18) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: entry %d: mean_us out of range (0 to 9.2e15)", path, index));
  }
  auto shapes = e.find("input_shapes");
  if (shapes != e.end() && !shapes->is_array()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: entry %d: input_shapes is not a list", path, index));
  }
  // Compact JSON of the shapes list is the canonical text the model writes.
  const std::string key_shapes = shapes != e.end() ? shapes->dump() : "[]";
  return std::make_pair(CalibrationKey(name->get<std::string>(), key_shapes),
                        mean_ns);
}

}  // namespace

std::string CalibrationKey(absl::string_view name,
                           absl::string_view shapes_key) {
  return absl::StrCat(name, "|", shapes_key.empty() ? "[]" : shapes_key);
}

std::string CalibrationJson(std::vector<CalibrationEntry> entries,
                            const std::string& device) {
  std::sort(entries.begin(), entries.end(),
            [](const CalibrationEntry& a, const CalibrationEntry& b) {
              return std::tie(a.name, a.shapes_key) <
                     std::tie(b.name, b.shapes_key);
            });
  nlohmann::json list = nlohmann::json::array();
  for (CalibrationEntry& e : entries) {
    if (e.samples_ns.empty()) continue;
    std::vector<int64_t>& s = e.samples_ns;
    std::sort(s.begin(), s.end());
    double sum = 0, sum_sq = 0;
    for (int64_t v : s) sum += v / 1e3;
    const double mean_us = sum / s.size();
    for (int64_t v : s) sum_sq += (v / 1e3 - mean_us) * (v / 1e3 - mean_us);
    nlohmann::json shapes = nlohmann::json::parse(
        e.shapes_key.empty() ? "[]" : e.shapes_key, nullptr, false);
    nlohmann::json entry = {{"name", e.name},
                            {"input_shapes", std::move(shapes)},
                            {"input_types", e.input_types},
                            {"mean_us", mean_us},
                            {"stddev_us", std::sqrt(sum_sq / s.size())},
                            {"count", s.size()},
                            {"min_us", s.front() / 1e3},
                            {"p50_us", s[s.size() / 2] / 1e3}};
    if (!e.comm_type.empty()) {
      entry["comm_type"] = e.comm_type;
      entry["comm_bytes"] = e.comm_bytes;
    }
    list.push_back(std::move(entry));
  }
  nlohmann::json doc = {{"format", "et-calibration"},
                        {"version", 1},
                        {"device", device},
                        {"entries", std::move(list)}};
  return doc.dump(1) + "\n";
}

absl::Status WriteCalibration(const std::string& path,
                              std::vector<CalibrationEntry> entries,
                              const std::string& device) {
  return WriteFileAtomically(path, CalibrationJson(std::move(entries), device));
}

absl::StatusOr<CalibrationTable> LoadCalibration(const std::string& path) {
  ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(path));
  auto format = j.is_object() ? j.find("format") : j.end();
  auto entries = j.is_object() ? j.find("entries") : j.end();
  if (!j.is_object() || format == j.end() || !format->is_string() ||
      format->get<std::string>() != "et-calibration" || entries == j.end() ||
      !entries->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": not an et-calibration file (needs \"format\": "
                     "\"et-calibration\" and an \"entries\" list)"));
  }
  CalibrationTable table;
  size_t index = 0;
  for (const auto& e : *entries) {
    ASSIGN_OR_RETURN(auto entry, ReadEntry(path, index, e));
    table[entry.first] = entry.second;
    ++index;
  }
  return table;
}

}  // namespace et
