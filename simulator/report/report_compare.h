// et-sim A --compare B: two simulated runs side by side (the same flags, two
// traces: before and after a change): the predicted step and its change, the
// bound side of each, each step's parts (the Overview's, as a mean per step
// of the slowest rank), the op groups whose simulated time moved most,
// appeared or vanished, and the collectives' change. A is "before" (the
// input), B "after" (--compare's); the change is always B minus A. Built from
// the two Reports; text, JSON and the page's Compare tab (html_report.h). Plain
// data.
#ifndef SIMULATOR_REPORT_REPORT_COMPARE_H_
#define SIMULATOR_REPORT_REPORT_COMPARE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "simulator/report/report.h"

namespace et::sim {

// An op group (by name) of the slowest rank in both runs (calls 0: absent).
struct OpMove {
  std::string name;
  int64_t a_calls = 0, b_calls = 0, a_ns = 0, b_ns = 0;
  const char* change = "changed";  // "appeared", "vanished" or "changed"
};

// A collective type and group in both runs, over every rank.
struct CollectiveMove {
  std::string type, group;
  int64_t a_calls = 0, b_calls = 0, a_ns = 0, b_ns = 0;
};

struct ReportComparison {
  std::string a, b;                     // the inputs, as given
  double a_step_us = 0, b_step_us = 0;  // predicted (the slowest rank's mean)
  std::string a_bound, b_bound;         // FormatStepBound, or "unknown"
  std::array<int64_t, kStepParts> a_part_ns{}, b_part_ns{};  // mean per step
  std::vector<OpMove> ops;  // by |b_ns - a_ns|, largest first, then name
  std::vector<CollectiveMove> collectives;  // by type, then group
};

ReportComparison CompareReports(const std::string& a_input, const Report& a,
                                const std::string& b_input, const Report& b);

// "-25.3%" (B against A), "new" where A had none.
std::string ChangeText(int64_t a, int64_t b);

// The text section; `top` op rows.
std::string FormatComparisonText(const ReportComparison& c, size_t top);
// {"a", "b", "a_step_us", ..., "parts": [...], "ops": [...], ...}.
nlohmann::json ComparisonJson(const ReportComparison& c);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_REPORT_COMPARE_H_
