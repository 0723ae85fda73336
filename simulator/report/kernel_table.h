// Recorded beside predicted: each op group's and GPU kernel's recorded
// duration (the calls the trace timed) next to their simulated time and the
// error; and the GPU kernel table (calls, time, share of kernel time, tensor
// cores) with the rule that reads tensor-core use off a kernel's name. Text
// and JSON for report.cc; the page formats the same cells (html_tabs.cc).
#ifndef SIMULATOR_REPORT_KERNEL_TABLE_H_
#define SIMULATOR_REPORT_KERNEL_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "simulator/engine/rank_program.h"
#include "simulator/report/report.h"

namespace et::sim {

// Whether a GPU kernel runs on tensor cores, from its name alone (the trace
// has no other sign): see docs/html-report.md, "Tensor cores".
bool UsesTensorCores(absl::string_view kernel_name);

// Node `i`'s recorded duration, when it is a truth for its simulated time:
// the trace timed it (a recorded start), et-sim did not make it, and a GPU
// op was not scaled to another device (--device). Else nullopt.
std::optional<int64_t> RecordedDurationNs(const RankProgram& program, size_t i);

// The cells of a row: recorded ms ("%.3f", "-" when no call was timed) and
// the error of the timed calls' simulated time against it ("%+.1f%%", "-").
std::string RecordedMsText(const RecordedTime& t);
std::string RecordedErrorText(const RecordedTime& t);

// A name as a page's table shows it: at most `max_chars` characters, then
// "..." (C++ kernel names run to kilobytes; --json has them whole).
std::string PageName(absl::string_view name, size_t max_chars = 160);

// The text section (nothing without kernels): `top` rows, names cut to 50.
std::string FormatKernelTableText(const Report& report, size_t top);
// "Tensor cores: 1.234 ms of 5.678 ms kernel time (21.7%)": the summary line
// of the table (text and page).
std::string TensorCoreSummary(const Report& report);

// {"recorded_calls", "recorded_ns", "predicted_of_recorded_ns"}.
nlohmann::json RecordedJson(const RecordedTime& t);
// [{"name", "calls", "total_ns", "share", "tensor_cores", recorded...}].
nlohmann::json KernelTableJson(const Report& report);

// Forgets every recorded time: the graph simulated is not the recorded one
// (a tensor-parallel split divided its durations). `why` is said instead.
void DropRecordedTimes(const std::string& why, Report* report);

}  // namespace et::sim

#endif  // SIMULATOR_REPORT_KERNEL_TABLE_H_
