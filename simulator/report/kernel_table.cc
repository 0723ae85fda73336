// Recorded beside predicted and the GPU kernel table; see kernel_table.h.
#include "simulator/report/kernel_table.h"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace et::sim {
namespace {

bool ContainsAny(absl::string_view text,
                 std::initializer_list<absl::string_view> words) {
  for (absl::string_view w : words)
    if (absl::StrContains(text, w)) return true;
  return false;
}

// cuBLAS's Hopper kernels name their operand types after the architecture:
// "nvjet_sm90_tst_...": t bf16, h fp16, e/q fp8 (tensor cores); s fp32.
std::optional<bool> NvjetUsesTensorCores(absl::string_view lower) {
  const size_t at = lower.find("nvjet_sm");
  if (at == absl::string_view::npos) return std::nullopt;
  const size_t types = lower.find('_', at + 8);
  if (types == absl::string_view::npos || types + 1 >= lower.size())
    return false;
  const char a = lower[types + 1];
  return a == 't' || a == 'h' || a == 'e' || a == 'q';
}

}  // namespace

bool UsesTensorCores(absl::string_view kernel_name) {
  const std::string lower = absl::AsciiStrToLower(kernel_name);
  // The instruction or CUTLASS's operator class named outright.
  if (ContainsAny(lower, {"tensorop", "hmma", "wgmma", "imma", "s1688",
                          "s16816", "h1688", "h16816", "i8816"}))
    return true;
  // Scalar FMA GEMMs: CUTLASS's SIMT class, cuBLAS's "ffma" xmma kernels.
  if (ContainsAny(lower, {"simt", "ffma", "dfma", "hfma", "gemv"}))
    return false;
  if (std::optional<bool> nvjet = NvjetUsesTensorCores(lower)) return *nvjet;
  // A matrix-multiply kernel (GEMM, cuDNN's implicit-GEMM convolutions,
  // flash attention) over a type only tensor cores multiply fast.
  return ContainsAny(lower,
                     {"gemm", "xmma", "fprop", "dgrad", "wgrad", "flash"}) &&
         ContainsAny(lower, {"bf16", "f16", "half", "bfloat16", "tf32", "e4m3",
                             "e5m2", "int8"});
}

std::optional<int64_t> RecordedDurationNs(const RankProgram& p, size_t i) {
  const NodeModel& g = *p.graph;
  const NodeIndex n = static_cast<NodeIndex>(i);
  if (g.start_ns(n) < 0 || g.synthesized(n)) return std::nullopt;
  if (!p.resource_is_host[p.resource[i]] && !p.device_target.empty())
    return std::nullopt;
  return g.duration_ns(n);
}

std::string PageName(absl::string_view name, size_t max_chars) {
  if (name.size() <= max_chars) return std::string(name);
  return absl::StrCat(name.substr(0, max_chars), "...");
}

std::string RecordedMsText(const RecordedTime& t) {
  if (t.calls == 0) return "-";
  return absl::StrFormat("%.3f", t.recorded_ns / 1e6);
}

std::string RecordedErrorText(const RecordedTime& t) {
  if (t.calls == 0 || t.recorded_ns <= 0) return "-";
  return absl::StrFormat(
      "%+.1f%%", 100.0 * static_cast<double>(t.predicted_ns - t.recorded_ns) /
                     static_cast<double>(t.recorded_ns));
}

std::string TensorCoreSummary(const Report& r) {
  int64_t all = 0, tc = 0;
  for (const KernelRow& k : r.kernels) {
    all += k.total_ns;
    if (k.tensor_cores) tc += k.total_ns;
  }
  return absl::StrFormat(
      "tensor cores: %.3f ms of %.3f ms kernel time (%.1f%%), %d of %d "
      "kernel names",
      tc / 1e6, all / 1e6, all > 0 ? 100.0 * tc / all : 0.0,
      std::count_if(r.kernels.begin(), r.kernels.end(),
                    [](const KernelRow& k) { return k.tensor_cores; }),
      r.kernels.size());
}

std::string FormatKernelTableText(const Report& r, size_t top) {
  if (r.kernels.empty()) return "";
  std::string out = absl::StrCat(
      "\nGPU kernels of the slowest rank, as simulated (", TensorCoreSummary(r),
      "; tc: from the kernel's name, docs/html-report.md):\n",
      "kernel                                              calls   total_ms  "
      "  mean_us  share  tc   rec_calls   rec_ms   error\n");
  for (size_t i = 0; i < r.kernels.size() && i < top; ++i) {
    const KernelRow& k = r.kernels[i];
    absl::StrAppendFormat(
        &out, "%-50.50s %6d %10.3f %10.2f %5.1f%% %-3s %10d %8s %7s\n", k.name,
        k.calls, k.total_ns / 1e6, k.total_ns / 1e3 / k.calls, k.share * 100,
        k.tensor_cores ? "yes" : "no", k.recorded.calls,
        RecordedMsText(k.recorded), RecordedErrorText(k.recorded));
  }
  return out;
}

nlohmann::json RecordedJson(const RecordedTime& t) {
  return {{"recorded_calls", t.calls},
          {"recorded_ns", t.recorded_ns},
          {"predicted_of_recorded_ns", t.predicted_ns}};
}

nlohmann::json KernelTableJson(const Report& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const KernelRow& k : r.kernels) {
    nlohmann::json row = {{"name", k.name},
                          {"calls", k.calls},
                          {"total_ns", k.total_ns},
                          {"share", k.share},
                          {"tensor_cores", k.tensor_cores}};
    row.update(RecordedJson(k.recorded));
    out.push_back(std::move(row));
  }
  return out;
}

void DropRecordedTimes(const std::string& why, Report* r) {
  for (OpRow& o : r->ops) o.recorded = {};
  for (KernelRow& k : r->kernels) k.recorded = {};
  r->recorded_none = why;
}

}  // namespace et::sim
