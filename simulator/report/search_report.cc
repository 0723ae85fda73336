// The search's ranked table, its verdicts and its JSON.
#include "simulator/report/search_report.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "simulator/report/memory_report.h"

namespace et::sim {
namespace {

using scaleout::Dim;

double GiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 30); }

bool KnownNoFit(const SweepRow& row) {
  return row.peak_bytes > 0 && row.capacity_bytes > 0 && !row.fits;
}

std::string GroupsText(const SweepRow& row) {
  std::string out;
  for (const SweepGroupTime& g : row.groups) {
    absl::StrAppendFormat(&out, "%s%s(%d) %.3f", out.empty() ? "" : "  ",
                          g.name, g.group_size, g.time_us / 1e3);
  }
  return out.empty() ? "-" : out;
}

constexpr char kBatchNote[] =
    "ranked by predicted step; every layout's replicas each run the recorded "
    "batch (pp: as its micro-batches), so a layout's global batch is dp x "
    "the recorded batch: compare ms per batch (step / dp) for throughput; no "
    "layout here was measured (predictions, no truth, no error)";

}  // namespace

const SweepRow* BestFittingRow(const SweepResult& search) {
  for (const SweepRow& row : search.rows)
    if (!KnownNoFit(row)) return &row;
  return nullptr;
}

std::string NoFitReason(const SweepRow& row) {
  if (!KnownNoFit(row)) return "";
  return absl::StrFormat("rank %d: peak %s, %s over the %s device",
                         row.peak_rank, MemorySizeText(row.peak_bytes),
                         MemorySizeText(row.peak_bytes - row.capacity_bytes),
                         MemorySizeText(row.capacity_bytes));
}

std::string FormatSearchText(const SweepResult& r) {
  std::string out = absl::StrFormat(
      "et-sim search of the layouts of %d ranks: %s (recorded as %s), %d "
      "layouts\n",
      r.search_world, r.trace, r.recorded_layout, r.rows.size());
  for (const std::string& note : r.search_notes)
    absl::StrAppend(&out, "  ", note, "\n");
  absl::StrAppend(&out, "note: ", kBatchNote, "\n");
  absl::StrAppendFormat(&out, "%4s  %-22s %10s %12s %11s %16s %9s %13s  %s\n",
                        "rank", "layout", "step_ms", "ms_per_batch",
                        "compute_ms", "exposed_comm_ms", "other_ms",
                        "peak_mem_GiB", "collective ms per group (ranks)");
  for (const SweepRow& row : r.rows) {
    const std::string mem =
        row.peak_bytes <= 0 ? "-"
                            : absl::StrFormat("%.3f%s", GiB(row.peak_bytes),
                                              KnownNoFit(row) ? " NOFIT" : "");
    const int64_t dp = std::max<int64_t>(1, row.layout.of(Dim::kDp));
    absl::StrAppendFormat(
        &out, "%4d  %-22s %10.3f %12.6f %11.3f %16.3f %9.3f %13s  %s\n",
        row.value, row.layout.ToString(), row.step_us / 1e3,
        row.step_us / 1e3 / static_cast<double>(dp), row.compute_us / 1e3,
        row.exposed_comm_us / 1e3, row.other_us / 1e3, mem, GroupsText(row));
  }
  for (const SweepRow& row : r.rows) {
    if (KnownNoFit(row))
      absl::StrAppend(&out, "NOFIT ", row.layout.ToString(), ": ",
                      NoFitReason(row), "\n");
  }
  for (const auto& [layout, reason] : r.search_refused)
    absl::StrAppend(&out, "refused ", layout, ": ", reason, "\n");
  const int64_t capacity = r.rows.empty() ? 0 : r.rows.front().capacity_bytes;
  absl::StrAppend(
      &out, "memory: ",
      capacity > 0
          ? absl::StrFormat("predicted peak of the largest rank against "
                            "%.2f GiB per device",
                            GiB(capacity))
          : std::string("no device capacity known (give --device or "
                        "--device-memory-gib): nothing is marked NOFIT"),
      "\n");
  const SweepRow* best = BestFittingRow(r);
  if (best == nullptr) {
    absl::StrAppend(&out, "best: none of the layouts fits the device\n");
  } else {
    absl::StrAppendFormat(&out, "best: %s, predicted step %.3f ms%s\n",
                          best->layout.ToString(), best->step_us / 1e3,
                          best->peak_bytes > 0
                              ? absl::StrFormat(", peak %.3f GiB per rank%s",
                                                GiB(best->peak_bytes),
                                                capacity > 0 ? " (fits)" : "")
                              : "");
  }
  return out;
}

std::string FormatSearchJson(const SweepResult& r) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const SweepRow& row : r.rows) {
    nlohmann::ordered_json groups = nlohmann::ordered_json::array();
    for (const SweepGroupTime& g : row.groups) {
      groups.push_back({{"name", g.name},
                        {"group_size", g.group_size},
                        {"time_us", g.time_us}});
    }
    const bool known = row.peak_bytes > 0;
    rows.push_back(
        {{"rank", row.value},
         {"layout", row.layout.ToString()},
         {"tp", row.layout.of(Dim::kTp)},
         {"pp", row.layout.of(Dim::kPp)},
         {"dp", row.layout.of(Dim::kDp)},
         {"ep", row.layout.of(Dim::kEp)},
         {"world", row.world},
         {"step_us", row.step_us},
         {"compute_us", row.compute_us},
         {"exposed_comm_us", row.exposed_comm_us},
         {"other_us", row.other_us},
         {"groups", std::move(groups)},
         {"peak_allocated_bytes", known ? nlohmann::ordered_json(row.peak_bytes)
                                        : nlohmann::ordered_json(nullptr)},
         {"peak_rank", known ? nlohmann::ordered_json(row.peak_rank)
                             : nlohmann::ordered_json(nullptr)},
         {"capacity_bytes", row.capacity_bytes},
         {"fits", !KnownNoFit(row)},
         {"over_bytes",
          KnownNoFit(row) ? row.peak_bytes - row.capacity_bytes : 0}});
  }
  nlohmann::ordered_json refused = nlohmann::ordered_json::array();
  for (const auto& [layout, reason] : r.search_refused)
    refused.push_back({{"layout", layout}, {"reason", reason}});
  const SweepRow* best = BestFittingRow(r);
  nlohmann::ordered_json j;
  j["search"] = {{"world", r.search_world},
                 {"trace", r.trace},
                 {"recorded_layout", r.recorded_layout},
                 {"limits", r.search_notes},
                 {"note", kBatchNote},
                 {"best", best ? nlohmann::ordered_json(best->layout.ToString())
                               : nlohmann::ordered_json(nullptr)},
                 {"layouts", std::move(rows)},
                 {"refused", std::move(refused)}};
  return j.dump(1);
}

}  // namespace et::sim
