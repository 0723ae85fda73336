// et-sim's memory section (docs/memory-model.md, "In et-sim").
#include "simulator/report/memory_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace et::sim {
namespace {

double Gib(int64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
}

// Readable sizes: GiB above 1 GiB, MiB above 1 MiB, else bytes.
std::string Size(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30))
    return absl::StrFormat("%.2f GiB", Gib(bytes));
  if (bytes >= (int64_t{1} << 20))
    return absl::StrFormat("%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return absl::StrFormat("%d B", bytes);
}

int64_t Part(const MemoryRow& r, MemoryKind k) {
  return r.parts[static_cast<int>(k)];
}

std::string DeviceName(int32_t device) {
  return device < 0 ? std::string("host") : absl::StrCat("cuda:", device);
}

}  // namespace

std::string MemorySizeText(int64_t bytes) { return Size(bytes); }

MemoryRow MakeMemoryRow(const NodeModel& model,
                        const MemoryTimelineResult& timeline, bool at_layout) {
  MemoryRow row;
  row.at_layout = at_layout;
  const DeviceMemory* d = timeline.main();
  if (d == nullptr) return row;
  row.device = d->device;
  row.peak_bytes = d->peak_bytes;
  row.baseline_bytes = d->baseline_bytes;
  row.parts = d->peak_parts;
  if (d->peak_node < model.size()) {
    row.peak_node_id = model.id(d->peak_node);
    row.peak_node_name = std::string(model.name(d->peak_node));
  }
  // The curve's stretches: each point the largest of its nodes.
  const size_t n = d->curve.size();
  const size_t stretch = (n + kMemoryCurvePoints - 1) / kMemoryCurvePoints;
  for (size_t lo = 0; stretch > 0 && lo < n; lo += stretch) {
    const size_t hi = std::min(n, lo + stretch);
    const auto top =
        std::max_element(d->curve.begin() + lo, d->curve.begin() + hi);
    row.curve.push_back({static_cast<int64_t>(top - d->curve.begin()), *top});
  }
  if (!at_layout) {
    if (std::optional<RecordedMemory> r = RecordedMemoryOf(model))
      row.recorded_peak_bytes = r->peak_bytes;
  }
  return row;
}

MemorySummary SummarizeMemory(const std::vector<MemoryRow>& rows,
                              int64_t capacity_bytes,
                              const std::string& capacity_source, int64_t dp) {
  MemorySummary s;
  s.capacity_bytes = capacity_bytes;
  s.capacity_source = capacity_source;
  const MemoryRow* top = nullptr;
  for (const MemoryRow& r : rows) {
    if (top == nullptr || r.peak_bytes > top->peak_bytes) top = &r;
  }
  if (top == nullptr) return s;
  s.peak_bytes = top->peak_bytes;
  s.fits = capacity_bytes <= 0 || top->peak_bytes <= capacity_bytes;
  if (s.fits) return s;
  // What each remedy would take off the peak (docs/memory-model.md): the
  // ZeRO stages at this dp (a job of one replica shards nothing), and the
  // activations that recomputation or a smaller micro-batch would drop.
  const double keep = dp > 1 ? 1.0 - 1.0 / static_cast<double>(dp) : 0.0;
  const int64_t opt = Part(*top, MemoryKind::kOptimizerState);
  const int64_t grad = Part(*top, MemoryKind::kGradient);
  const int64_t param = Part(*top, MemoryKind::kParameter);
  struct Remedy {
    int64_t saves;
    std::string what;
  };
  std::vector<Remedy> remedies = {
      {static_cast<int64_t>(opt * keep),
       "--dp-sync zero1 (optimizer state sharded)"},
      {static_cast<int64_t>((opt + grad) * keep),
       "--dp-sync zero2 (and gradients)"},
      {static_cast<int64_t>((opt + grad + param) * keep),
       "--dp-sync zero3 / fsdp (and parameters)"},
      {Part(*top, MemoryKind::kActivation),
       "activation checkpointing or a smaller micro-batch (activations)"},
  };
  std::stable_sort(
      remedies.begin(), remedies.end(),
      [](const Remedy& a, const Remedy& b) { return a.saves > b.saves; });
  const int64_t over = top->peak_bytes - capacity_bytes;
  s.advice = absl::StrFormat(
      "what shrinks it most: %s, up to %s (%s)", remedies[0].what,
      Size(remedies[0].saves),
      remedies[0].saves >= over ? "enough" : "not enough alone");
  if (dp <= 1)
    absl::StrAppend(
        &s.advice,
        "; ZeRO shards only across data-parallel replicas (--layout dp=N)");
  return s;
}

std::string FormatMemoryText(const std::vector<MemoryRow>& rows,
                             const std::vector<std::string>& labels,
                             const MemorySummary& summary) {
  std::string out =
      "\nmemory, predicted peak per rank (allocated bytes, "
      "docs/memory-model.md):\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const MemoryRow& r = rows[i];
    absl::StrAppendFormat(
        &out, "%-16s %s on %s at node %d (%s); %s held before the first op\n",
        i < labels.size() ? labels[i] : "", Size(r.peak_bytes),
        DeviceName(r.device), r.peak_node_id, r.peak_node_name,
        Size(r.baseline_bytes));
    std::string parts;
    for (int k = 0; k < kMemoryKinds; ++k) {
      if (r.parts[k] == 0) continue;
      absl::StrAppendFormat(&parts, "%s%s %s", parts.empty() ? "" : ", ",
                            MemoryKindName(static_cast<MemoryKind>(k)),
                            Size(r.parts[k]));
    }
    absl::StrAppend(&out, "                   made of: ", parts, "\n");
    if (r.recorded_peak_bytes > 0) {
      const double error =
          static_cast<double>(r.peak_bytes - r.recorded_peak_bytes) /
          static_cast<double>(r.recorded_peak_bytes);
      absl::StrAppendFormat(
          &out,
          "                   recorded peak %s (the recorder's "
          "unprofiled step): error %+.1f%%\n",
          Size(r.recorded_peak_bytes), 100 * error);
    } else {
      absl::StrAppend(&out,
                      "                   no recorded peak to compare with",
                      r.at_layout ? " (a layout that was not run)" : "", "\n");
    }
  }
  if (summary.capacity_bytes <= 0 && !summary.capacity_unchecked.empty()) {
    absl::StrAppend(&out, "capacity: not checked: ", summary.capacity_unchecked,
                    " (--device-memory-gib to check a size)\n");
  } else if (summary.capacity_bytes <= 0) {
    absl::StrAppend(&out,
                    "capacity: unknown for host memory (--device-memory-gib to "
                    "check a size)\n");
  } else if (summary.fits) {
    absl::StrAppendFormat(&out, "fits: %s of %s (%s), %.0f%%\n",
                          Size(summary.peak_bytes),
                          Size(summary.capacity_bytes), summary.capacity_source,
                          100.0 * static_cast<double>(summary.peak_bytes) /
                              static_cast<double>(summary.capacity_bytes));
  } else {
    absl::StrAppendFormat(
        &out, "DOES NOT FIT: %s needed, %s available (%s): over by %s\n  %s\n",
        Size(summary.peak_bytes), Size(summary.capacity_bytes),
        summary.capacity_source,
        Size(summary.peak_bytes - summary.capacity_bytes), summary.advice);
  }
  return out;
}

nlohmann::json MemoryRowJson(const MemoryRow& r) {
  nlohmann::json parts = nlohmann::json::object();
  for (int k = 0; k < kMemoryKinds; ++k)
    parts[std::string(MemoryKindName(static_cast<MemoryKind>(k)))] = r.parts[k];
  nlohmann::json j = {{"peak_allocated_bytes", r.peak_bytes},
                      {"baseline_bytes", r.baseline_bytes},
                      {"memory_parts", parts},
                      {"memory_device", DeviceName(r.device)},
                      {"peak_node", r.peak_node_id},
                      {"peak_node_name", r.peak_node_name}};
  if (r.recorded_peak_bytes > 0)
    j["recorded_peak_bytes"] = r.recorded_peak_bytes;
  return j;
}

nlohmann::json MemorySummaryJson(const MemorySummary& s) {
  nlohmann::json j = {{"peak_allocated_bytes", s.peak_bytes},
                      {"capacity_bytes", s.capacity_bytes},
                      {"fits", s.fits}};
  if (s.capacity_bytes <= 0) j["fits"] = nullptr;
  if (!s.capacity_source.empty()) j["capacity_source"] = s.capacity_source;
  if (!s.advice.empty()) j["advice"] = s.advice;
  return j;
}

}  // namespace et::sim
