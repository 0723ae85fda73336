// Two simulated runs side by side; see report_compare.h.
#include "simulator/report/report_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace et::sim {
namespace {

std::string BoundText(const Report& r) {
  return r.step.bound ? FormatStepBound(*r.step.bound) : "unknown";
}

// Each part's mean over the steps of the slowest rank.
std::array<int64_t, kStepParts> MeanParts(const Report& r) {
  std::array<int64_t, kStepParts> mean{};
  if (r.breakdown.empty()) return mean;
  for (const StepBreakdown& b : r.breakdown)
    for (int k = 0; k < kStepParts; ++k) mean[k] += b.part_ns[k];
  for (int64_t& ns : mean) ns /= static_cast<int64_t>(r.breakdown.size());
  return mean;
}

std::string SignedMs(int64_t ns) { return absl::StrFormat("%+.3f", ns / 1e6); }

}  // namespace

std::string ChangeText(int64_t a, int64_t b) {
  if (a <= 0) return b > 0 ? "new" : "-";
  return absl::StrFormat(
      "%+.1f%%", 100.0 * static_cast<double>(b - a) / static_cast<double>(a));
}

ReportComparison CompareReports(const std::string& a_input, const Report& a,
                                const std::string& b_input, const Report& b) {
  ReportComparison c;
  c.a = a_input;
  c.b = b_input;
  c.a_step_us = a.step.predicted_us;
  c.b_step_us = b.step.predicted_us;
  c.a_bound = BoundText(a);
  c.b_bound = BoundText(b);
  c.a_part_ns = MeanParts(a);
  c.b_part_ns = MeanParts(b);
  std::map<std::string, OpMove> ops;
  for (const OpRow& o : a.ops) {
    OpMove& m = ops[o.name];
    m.name = o.name;
    m.a_calls = o.calls;
    m.a_ns = o.total_ns;
  }
  for (const OpRow& o : b.ops) {
    OpMove& m = ops[o.name];
    m.name = o.name;
    m.b_calls = o.calls;
    m.b_ns = o.total_ns;
  }
  for (auto& [name, m] : ops) {
    m.change = m.a_calls == 0   ? "appeared"
               : m.b_calls == 0 ? "vanished"
                                : "changed";
    c.ops.push_back(m);
  }
  std::stable_sort(
      c.ops.begin(), c.ops.end(), [](const OpMove& x, const OpMove& y) {
        return std::llabs(x.b_ns - x.a_ns) > std::llabs(y.b_ns - y.a_ns);
      });
  std::map<std::pair<std::string, std::string>, CollectiveMove> colls;
  for (const CollectiveRow& row : a.collectives) {
    CollectiveMove& m = colls[{row.type, row.group}];
    m.a_calls += row.calls;
    m.a_ns += row.total_ns;
  }
  for (const CollectiveRow& row : b.collectives) {
    CollectiveMove& m = colls[{row.type, row.group}];
    m.b_calls += row.calls;
    m.b_ns += row.total_ns;
  }
  for (auto& [key, m] : colls) {
    m.type = key.first;
    m.group = key.second;
    c.collectives.push_back(m);
  }
  return c;
}

std::string FormatComparisonText(const ReportComparison& c, size_t top) {
  std::string out = absl::StrFormat(
      "\ncompared with %s (simulated with the same flags; change: it against "
      "%s):\nstep: %.3f ms -> %.3f ms (%s)\nbound before: %s\nbound after: "
      "%s\n\nper step of the slowest rank   before_ms   after_ms  change_ms  "
      "change\n",
      c.b, c.a, c.a_step_us / 1e3, c.b_step_us / 1e3,
      ChangeText(std::llround(c.a_step_us * 1e3),
                 std::llround(c.b_step_us * 1e3)),
      c.a_bound, c.b_bound);
  for (int k = 0; k < kStepParts; ++k) {
    const int64_t a = c.a_part_ns[k], b = c.b_part_ns[k];
    absl::StrAppendFormat(&out, "%-28s %11.3f %10.3f %10s %7s\n",
                          StepPartName(static_cast<StepPart>(k)), a / 1e6,
                          b / 1e6, SignedMs(b - a), ChangeText(a, b));
  }
  absl::StrAppend(&out,
                  "\nops that moved most (slowest rank, as simulated):\n"
                  "op                             change    before_calls "
                  "before_ms  after_calls   after_ms  change_ms\n");
  for (size_t i = 0; i < c.ops.size() && i < top; ++i) {
    const OpMove& m = c.ops[i];
    absl::StrAppendFormat(&out, "%-30.30s %-9s %12d %9.3f %12d %10.3f %10s\n",
                          m.name, m.change, m.a_calls, m.a_ns / 1e6, m.b_calls,
                          m.b_ns / 1e6, SignedMs(m.b_ns - m.a_ns));
  }
  if (!c.collectives.empty()) {
    absl::StrAppend(&out,
                    "\ncollectives compared  group   before_calls before_ms  "
                    "after_calls   after_ms  change_ms\n");
    for (const CollectiveMove& m : c.collectives) {
      absl::StrAppendFormat(&out, "%-20s %-7s %12d %9.3f %12d %10.3f %10s\n",
                            m.type, m.group, m.a_calls, m.a_ns / 1e6, m.b_calls,
                            m.b_ns / 1e6, SignedMs(m.b_ns - m.a_ns));
    }
  }
  return out;
}

nlohmann::json ComparisonJson(const ReportComparison& c) {
  nlohmann::json j = {{"before", c.a},
                      {"after", c.b},
                      {"before_step_us", c.a_step_us},
                      {"after_step_us", c.b_step_us},
                      {"before_bound", c.a_bound},
                      {"after_bound", c.b_bound}};
  j["parts"] = nlohmann::json::array();
  for (int k = 0; k < kStepParts; ++k) {
    j["parts"].push_back({{"part", StepPartName(static_cast<StepPart>(k))},
                          {"before_ns", c.a_part_ns[k]},
                          {"after_ns", c.b_part_ns[k]}});
  }
  j["ops"] = nlohmann::json::array();
  for (const OpMove& m : c.ops) {
    j["ops"].push_back({{"name", m.name},
                        {"change", m.change},
                        {"before_calls", m.a_calls},
                        {"before_ns", m.a_ns},
                        {"after_calls", m.b_calls},
                        {"after_ns", m.b_ns}});
  }
  j["collectives"] = nlohmann::json::array();
  for (const CollectiveMove& m : c.collectives) {
    j["collectives"].push_back({{"type", m.type},
                                {"group", m.group},
                                {"before_calls", m.a_calls},
                                {"before_ns", m.a_ns},
                                {"after_calls", m.b_calls},
                                {"after_ns", m.b_ns}});
  }
  return j;
}

}  // namespace et::sim
