// The Ops, Memory and Distributed tabs; see html_sections.h.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/html_page.h"
#include "base/svg_chart.h"
#include "simulator/report/html_sections.h"
#include "simulator/report/kernel_table.h"
#include "step/storage_lives.h"

namespace et::sim {
namespace {

std::string Ms(int64_t ns) { return absl::StrFormat("%.3f", ns / 1e6); }

const char* const kRankColors[] = {"#4e79a7", "#f28e2b", "#e15759",
                                   "#76b7b2", "#59a14f", "#edc948",
                                   "#b07aa1", "#ff9da7", "#9c755f"};

std::string CollectivesTable(const Report& r, size_t max_rows) {
  HtmlTable t;
  t.id = "collectives";
  t.header = {"collective", "group",   "ranks",   "bytes", "calls",
              "total ms",   "mean us", "wait ms", "share"};
  t.numeric = {false, false, true, true, true, true, true, true, true};
  for (size_t i = 0; i < r.collectives.size() && i < max_rows; ++i) {
    const CollectiveRow& c = r.collectives[i];
    t.rows.push_back({c.synthesized ? c.type + "*" : c.type, c.group,
                      absl::StrCat(c.group_size), absl::StrCat(c.bytes),
                      absl::StrCat(c.calls), Ms(c.total_ns),
                      absl::StrFormat("%.2f", c.total_ns / 1e3 / c.calls),
                      Ms(c.wait_ns), absl::StrFormat("%.1f%%", c.share * 100)});
  }
  std::string out = RenderHtmlTable(t);
  if (std::any_of(r.collectives.begin(), r.collectives.end(),
                  [](const CollectiveRow& c) { return c.synthesized; }))
    absl::StrAppend(&out,
                    "<p class=\"why\">* synthesized by et-sim "
                    "(--dp-sync), not in the trace</p>");
  return out;
}

// The GPU kernel table, with its tensor-core summary; nothing without kernels.
std::string KernelsHtml(const Report& r, size_t max_rows) {
  if (r.kernels.empty()) return "";
  HtmlTable t;
  t.id = "kernels";
  t.header = {"kernel",         "calls",       "total ms",
              "mean us",        "share",       "tensor cores",
              "recorded calls", "recorded ms", "error"};
  t.numeric = {false, true, true, true, true, false, true, true, true};
  for (size_t i = 0; i < r.kernels.size() && i < max_rows; ++i) {
    const KernelRow& k = r.kernels[i];
    t.rows.push_back(
        {PageName(k.name), absl::StrCat(k.calls), Ms(k.total_ns),
         absl::StrFormat("%.2f", k.total_ns / 1e3 / k.calls),
         absl::StrFormat("%.1f%%", k.share * 100),
         k.tensor_cores ? "yes" : "no", absl::StrCat(k.recorded.calls),
         RecordedMsText(k.recorded), RecordedErrorText(k.recorded)});
  }
  return absl::StrCat(
      "<h2>GPU kernels of the slowest rank</h2><p id=\"tensor-cores\">",
      HtmlEscape(TensorCoreSummary(r)),
      "</p><p class=\"why\">Share: of all kernel time, as simulated "
      "(memcpy and memset apart). Tensor cores: read from the kernel's name "
      "(docs/html-report.md, \"Tensor cores\"). Names past 160 characters "
      "are cut (--json has them whole).</p>",
      RenderHtmlTable(t));
}

}  // namespace

std::string OpsSection(const Report& r, size_t max_rows) {
  HtmlTable t;
  t.id = "ops";
  t.header = {"op",    "calls",          "total ms",    "mean us",
              "share", "recorded calls", "recorded ms", "error"};
  t.numeric = {false, true, true, true, true, true, true, true};
  for (size_t i = 0; i < r.ops.size() && i < max_rows; ++i) {
    const OpRow& o = r.ops[i];
    t.rows.push_back({PageName(o.name), absl::StrCat(o.calls), Ms(o.total_ns),
                      absl::StrFormat("%.2f", o.total_ns / 1e3 / o.calls),
                      absl::StrFormat("%.1f%%", o.share * 100),
                      absl::StrCat(o.recorded.calls),
                      RecordedMsText(o.recorded),
                      RecordedErrorText(o.recorded)});
  }
  std::string out = absl::StrFormat(
      "<h2>Top ops of the slowest rank, as simulated, beside their recorded "
      "times</h2><p>Host time %s; share of all compute time; %d op names%s. "
      "<i>Recorded</i>: the calls the trace timed, their recorded time, and "
      "the error of the same calls' simulated time against it (%s). Names "
      "past 160 characters are cut. Click a header to sort.</p>",
      HostTimeModeName(r.step.host_time), r.ops.size(),
      r.ops.size() > max_rows ? absl::StrFormat(", the first %d", max_rows)
                              : "",
      r.recorded_none.empty()
          ? std::string("\"-\": no call of that name was timed, or a GPU op "
                        "was scaled to another device")
          : HtmlEscape(absl::StrCat("none here: ", r.recorded_none)));
  if (r.step.host_time == HostTimeMode::kUnprofiled && r.recorded_none.empty())
    absl::StrAppend(
        &out,
        "<p class=\"why\">Host time unprofiled: a host op's simulated time "
        "leaves out the profiler's cost that its recorded time holds "
        "(docs/step-model.md), so host ops read below their recording; "
        "--host-time recorded compares the run as recorded.</p>");
  absl::StrAppend(&out, RenderHtmlTable(t), KernelsHtml(r, max_rows));
  if (!r.breakdown.empty()) {
    int64_t kernel = 0, memcpy = 0, memset = 0;
    for (const StepBreakdown& b : r.breakdown) {
      kernel += b.part_ns[static_cast<int>(StepPart::kKernel)];
      memcpy += b.part_ns[static_cast<int>(StepPart::kMemcpy)];
      memset += b.part_ns[static_cast<int>(StepPart::kMemset)];
    }
    absl::StrAppendFormat(
        &out,
        "<h2>GPU work</h2><p id=\"gpu-work\">Over the %d steps of the slowest "
        "rank: kernels %s ms, memcpy %s ms, memset %s ms (the step parts of "
        "the Overview, summed).</p>",
        r.breakdown.size(), Ms(kernel), Ms(memcpy), Ms(memset));
  }
  return out;
}

std::string MemorySection(const Report& r) {
  if (!r.memory) {
    std::string why = "the memory model did not run (--no-memory)";
    for (const std::string& n : r.notes)
      if (n.find("memory:") != std::string::npos) why = n;
    return absl::StrCat("<p id=\"memory-none\">No memory prediction: ",
                        HtmlEscape(why), "</p>");
  }
  const MemorySummary& m = *r.memory;
  std::string out =
      "<h2>Predicted peak against capacity</h2><p id=\"memory-verdict\">";
  if (m.capacity_bytes <= 0) {
    absl::StrAppend(&out, "Peak ", MemorySizeText(m.peak_bytes),
                    "; capacity: unknown for host memory "
                    "(--device-memory-gib to check a size).");
  } else if (m.fits) {
    absl::StrAppendFormat(
        &out, "Fits: %s of %s (%s), %.0f%%.", MemorySizeText(m.peak_bytes),
        MemorySizeText(m.capacity_bytes), HtmlEscape(m.capacity_source),
        100.0 * static_cast<double>(m.peak_bytes) /
            static_cast<double>(m.capacity_bytes));
  } else {
    absl::StrAppendFormat(
        &out,
        "<b>Does not fit</b>: %s needed, %s available (%s): over by %s. %s",
        MemorySizeText(m.peak_bytes), MemorySizeText(m.capacity_bytes),
        HtmlEscape(m.capacity_source),
        MemorySizeText(m.peak_bytes - m.capacity_bytes), HtmlEscape(m.advice));
  }
  absl::StrAppend(&out, "</p>");
  LineChart chart;
  chart.x_label = "ops in trace order";
  chart.unit = "MiB";
  // Capacity far above the peak would flatten the curve: drawn only when
  // within 1.5x of it, else said.
  std::string off_chart;
  if (m.capacity_bytes > 0 && m.capacity_bytes <= m.peak_bytes * 3 / 2) {
    chart.limit = static_cast<double>(m.capacity_bytes) / (1 << 20);
    chart.limit_label =
        absl::StrCat("capacity ", MemorySizeText(m.capacity_bytes));
  } else if (m.capacity_bytes > 0) {
    off_chart =
        absl::StrCat(" The capacity, ", MemorySizeText(m.capacity_bytes),
                     ", is far above the curve and not drawn.");
  }
  HtmlTable t;
  t.id = "memory";
  t.header = {"ranks", "device", "peak", "at node", "held before"};
  for (int k = 0; k < kMemoryKinds; ++k)
    t.header.push_back(std::string(MemoryKindName(static_cast<MemoryKind>(k))));
  t.header.push_back("recorded peak");
  // Sizes stay on one line (right-aligned, as numbers).
  t.numeric.assign(t.header.size(), true);
  t.numeric[0] = t.numeric[1] = t.numeric[3] = false;
  t.numeric.back() = false;
  size_t shown = 0;
  for (const RankStats& s : r.ranks) {
    if (!s.memory) continue;
    const MemoryRow& row = *s.memory;
    if (shown < 9) {
      chart.series.push_back({RanksLabel(s.ranks), kRankColors[shown]});
      std::vector<std::pair<double, double>> points;
      for (const auto& [node, bytes] : row.curve)
        points.push_back({static_cast<double>(node),
                          static_cast<double>(bytes) / (1 << 20)});
      chart.points.push_back(std::move(points));
    }
    ++shown;
    std::vector<std::string> cells = {
        RanksLabel(s.ranks),
        row.device < 0 ? "host" : absl::StrCat("cuda:", row.device),
        MemorySizeText(row.peak_bytes),
        absl::StrCat(row.peak_node_id, " (", row.peak_node_name, ")"),
        MemorySizeText(row.baseline_bytes)};
    for (int k = 0; k < kMemoryKinds; ++k)
      cells.push_back(MemorySizeText(row.parts[k]));
    if (row.recorded_peak_bytes > 0) {
      cells.push_back(absl::StrFormat(
          "%s (error %+.1f%%)", MemorySizeText(row.recorded_peak_bytes),
          100.0 *
              static_cast<double>(row.peak_bytes - row.recorded_peak_bytes) /
              static_cast<double>(row.recorded_peak_bytes)));
    } else {
      cells.push_back(row.at_layout ? "none (a layout that was not run)"
                                    : "none recorded");
    }
    t.rows.push_back(std::move(cells));
  }
  absl::StrAppend(
      &out,
      "<h2>Allocated bytes through the step, per rank</h2><p "
      "class=\"why\">The memory model's curve (docs/memory-model.md) "
      "in node order; each point the largest of its stretch of "
      "nodes, so the peak is kept.",
      HtmlEscape(off_chart), "</p>", LegendHtml(chart.series),
      LineChartSvg(chart), "<h2>The peak and what holds it</h2>",
      RenderHtmlTable(t));
  return out;
}

std::string DistributedSection(const Report& r, size_t max_rows) {
  HtmlTable t;
  t.id = "ranks";
  t.header = {"ranks",   "graph ms",        "compute ms",
              "comm ms", "exposed comm ms", "idle ms"};
  t.numeric = {false, true, true, true, true, true};
  StackedBars chart;
  chart.unit = "ms";
  chart.series = {
      {"compute", "#59a14f"}, {"exposed comm", "#e15759"}, {"idle", "#bab0ac"}};
  const RankStats* slowest = nullptr;
  const RankStats* fastest = nullptr;
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankStats& s = r.ranks[i];
    if (!slowest || s.step_ns > slowest->step_ns) slowest = &s;
    if (!fastest || s.step_ns < fastest->step_ns) fastest = &s;
    if (i >= max_rows) continue;
    const std::string label = RanksLabel(s.ranks);
    t.rows.push_back({label, Ms(s.step_ns), Ms(s.compute_ns), Ms(s.comm_ns),
                      Ms(s.exposed_comm_ns), Ms(s.idle_ns)});
    if (i < 64) {
      chart.labels.push_back(label);
      chart.values.push_back(
          {s.compute_ns / 1e6, s.exposed_comm_ns / 1e6, s.idle_ns / 1e6});
    }
  }
  std::string out = absl::StrFormat(
      "<h2>Per rank, over the whole graph (%d steps)</h2>", r.step.steps);
  if (slowest) {
    absl::StrAppendFormat(
        &out,
        "<p id=\"slowest\">Slowest: %s, graph %s ms (fastest %s, %s ms): "
        "compute %s ms, exposed communication %s ms, idle %s ms; on its "
        "critical path collectives wait %s ms for other ranks and the host "
        "spends %s ms between ops.</p>",
        HtmlEscape(RanksLabel(slowest->ranks)), Ms(slowest->step_ns),
        HtmlEscape(RanksLabel(fastest->ranks)), Ms(fastest->step_ns),
        Ms(slowest->compute_ns), Ms(slowest->exposed_comm_ns),
        Ms(slowest->idle_ns), Ms(r.critical_path_waits.rendezvous_ns),
        Ms(r.critical_path_waits.host_gap_ns));
  }
  absl::StrAppend(
      &out, LegendHtml(chart.series), StackedBarsSvg(chart), RenderHtmlTable(t),
      "<h2>Collectives, by type, group and size</h2>",
      r.collectives.empty() ? std::string("<p>No collective ran.</p>")
                            : CollectivesTable(r, max_rows));
  return out;
}

}  // namespace et::sim
