// A sweep point's row, read off its report, and the sweep's text and JSON.
#include "simulator/report/sweep_report.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace et::sim {

using scaleout::Dim;
using scaleout::DimName;
using scaleout::ParallelLayout;

// Per step: the slowest class's graph totals (report.h) over the steps, and
// the collective rows summed per group.
SweepRow SweepRowOf(const Report& report, const ParallelLayout& layout,
                    int64_t value) {
  SweepRow row;
  row.value = value;
  row.layout = layout;
  row.world = report.world_size;
  row.step_us = report.step.predicted_us;
  row.measured_us = report.step.measured_us;
  row.error_pct = report.step.error_pct;
  const double steps =
      static_cast<double>(std::max<int64_t>(1, report.step.steps));
  const RankStats* slowest = nullptr;
  for (const RankStats& s : report.ranks)
    if (slowest == nullptr || s.step_ns > slowest->step_ns) slowest = &s;
  if (slowest != nullptr) {
    row.compute_us = slowest->compute_ns / 1e3 / steps;
    row.exposed_comm_us = slowest->exposed_comm_ns / 1e3 / steps;
  }
  row.other_us =
      std::max(0.0, row.step_us - row.compute_us - row.exposed_comm_us);
  std::map<std::string, SweepGroupTime> groups;
  for (const CollectiveRow& c : report.collectives) {
    SweepGroupTime& g = groups[c.group];
    g.name = c.group;
    g.group_size = c.group_size;
    g.time_us += c.total_ns / 1e3 / steps;
  }
  for (auto& [name, g] : groups) row.groups.push_back(std::move(g));
  int64_t largest = -1;
  for (const RankStats& s : report.ranks) {
    if (s.memory && !s.ranks.empty() && s.memory->peak_bytes > largest) {
      largest = s.memory->peak_bytes;
      row.peak_rank = s.ranks.front();
    }
  }
  if (report.memory) {
    row.peak_bytes = report.memory->peak_bytes;
    row.capacity_bytes = report.memory->capacity_bytes;
    row.fits = report.memory->fits;
  }
  std::stable_sort(row.groups.begin(), row.groups.end(),
                   [](const SweepGroupTime& a, const SweepGroupTime& b) {
                     return a.time_us > b.time_us;
                   });
  return row;
}

std::string PointLabel(const SweepResult& r, const SweepRow& row) {
  if (r.search_world > 0) return row.layout.ToString();
  return absl::StrCat(DimName(r.dim), "=", row.value);
}

std::string SweepTruthNote(const SweepResult& r) {
  for (const SweepRow& row : r.rows) {
    if (!row.measured_us) continue;
    return absl::StrFormat(
        "%s is the recorded job: compared with its measured step; the "
        "other points are predictions for jobs that were not measured (no "
        "truth, no error)",
        PointLabel(r, row));
  }
  return "every point is a prediction for a job that was not measured: no "
         "measured truth, no error reported";
}

std::string FormatSweepText(const SweepResult& r) {
  const std::string dim(DimName(r.dim));
  std::string out = absl::StrFormat(
      "et-sim sweep of %s over %d points: %s (recorded as %s)\n"
      "note: %s; times are per step (predicted step; the slowest rank's "
      "compute and exposed communication over the whole graph / steps)\n",
      dim, r.rows.size(), r.trace, r.recorded_layout, SweepTruthNote(r));
  absl::StrAppendFormat(
      &out, "%-8s %7s  %-20s %10s %11s %7s %11s %16s %9s %13s  %s\n", dim,
      "world", "layout", "step_ms", "measured_ms", "error", "compute_ms",
      "exposed_comm_ms", "other_ms", "peak_mem_GiB",
      "collective ms per group (ranks)");
  for (const SweepRow& row : r.rows) {
    std::string groups;
    for (const SweepGroupTime& g : row.groups) {
      absl::StrAppendFormat(&groups, "%s%s(%d) %.3f",
                            groups.empty() ? "" : "  ", g.name, g.group_size,
                            g.time_us / 1e3);
    }
    // No peak (no memory model, or a trace without tensor sizes): "-".
    const std::string mem =
        row.peak_bytes <= 0
            ? "-"
            : absl::StrFormat("%.3f%s",
                              static_cast<double>(row.peak_bytes) / (1 << 30),
                              row.fits ? "" : " NOFIT");
    absl::StrAppendFormat(
        &out, "%-8d %7d  %-20s %10.3f %11s %7s %11.3f %16.3f %9.3f %13s  %s\n",
        row.value, row.world, row.layout.ToString(), row.step_us / 1e3,
        row.measured_us ? absl::StrFormat("%.3f", *row.measured_us / 1e3) : "-",
        row.error_pct ? absl::StrFormat("%+.1f%%", *row.error_pct) : "-",
        row.compute_us / 1e3, row.exposed_comm_us / 1e3, row.other_us / 1e3,
        mem, groups.empty() ? "-" : groups);
  }
  const int64_t capacity = r.rows.empty() ? 0 : r.rows.front().capacity_bytes;
  if (capacity > 0) {
    absl::StrAppendFormat(
        &out,
        "memory: predicted peak of the largest rank against %.2f GiB per "
        "device; NOFIT marks a point that does not fit\n",
        static_cast<double>(capacity) / (1 << 30));
  }
  return out;
}

std::string FormatSweepJson(const SweepResult& r) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const SweepRow& row : r.rows) {
    nlohmann::ordered_json groups = nlohmann::ordered_json::array();
    for (const SweepGroupTime& g : row.groups) {
      groups.push_back({{"name", g.name},
                        {"group_size", g.group_size},
                        {"time_us", g.time_us}});
    }
    points.push_back(
        {{"value", row.value},
         {"world", row.world},
         {"layout", row.layout.ToString()},
         {"step_us", row.step_us},
         {"measured_us", row.measured_us
                             ? nlohmann::ordered_json(*row.measured_us)
                             : nlohmann::ordered_json(nullptr)},
         {"error_pct", row.error_pct ? nlohmann::ordered_json(*row.error_pct)
                                     : nlohmann::ordered_json(nullptr)},
         {"compute_us", row.compute_us},
         {"exposed_comm_us", row.exposed_comm_us},
         {"other_us", row.other_us},
         {"groups", std::move(groups)},
         {"peak_allocated_bytes", row.peak_bytes > 0
                                      ? nlohmann::ordered_json(row.peak_bytes)
                                      : nlohmann::ordered_json(nullptr)},
         {"capacity_bytes", row.capacity_bytes},
         {"fits", row.fits}});
  }
  nlohmann::ordered_json j;
  j["sweep"] = {{"dimension", std::string(DimName(r.dim))},
                {"trace", r.trace},
                {"recorded_layout", r.recorded_layout},
                {"note", SweepTruthNote(r)},
                {"points", std::move(points)}};
  return j.dump(1);
}

}  // namespace et::sim
