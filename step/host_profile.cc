// Host costs from a light Kineto trace; see host_profile.h.
#include "step/host_profile.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/gzip_input.h"
#include "nlohmann/json.hpp"
#include "step/light_profiler_cost.h"
#include "step/step_model.h"

namespace et {
namespace {

struct Event {
  std::string name;
  std::string cat;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
};

bool IsLaunchCall(absl::string_view name) {
  return absl::StartsWith(name, "cudaLaunch") ||
         absl::StartsWith(name, "cuLaunch") ||
         absl::StartsWith(name, "cudaMemcpyAsync") ||
         absl::StartsWith(name, "cudaMemsetAsync") ||
         absl::StartsWith(name, "cudaGraphLaunch");
}

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return -1;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// The lower median: of two steps, the cheaper (one-time costs only add).
int64_t LowerMedian(std::vector<int64_t> v) {
  if (v.empty()) return -1;
  const size_t mid = (v.size() - 1) / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  return v[mid];
}

// Sums per kind over a trace's top-level host ops.
struct KindSums {
  std::array<int64_t, kHostOpKinds> ns{};   // inclusive, less launch calls
  std::array<int64_t, kHostOpKinds> ops{};  // cpu_op events in the subtree
  std::vector<int64_t> launch_ns;
  std::array<std::vector<int64_t>, kHostThreadRoles> gaps_ns;
};

// One thread's events, sorted by start (outer first): top-level cpu_ops and
// what nests in them; record_function ranges (user_annotation) are
// transparent.
void AddThread(std::vector<Event> events, KindSums* sums) {
  std::stable_sort(
      events.begin(), events.end(), [](const Event& a, const Event& b) {
        return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.dur_ns > b.dur_ns;
      });
  HostThreadRole role = HostThreadRole::kPython;
  for (const Event& e : events) {
    if (IsAutogradEngineName(e.name)) role = HostThreadRole::kAutograd;
  }
  const Event* top = nullptr;
  int64_t top_end = -1, prev_end = -1, ops = 0, launches = 0, launch_ns = 0;
  auto close = [&]() {
    if (top == nullptr) return;
    const int k = static_cast<int>(ClassifyHostOp(top->name, role, launches));
    sums->ns[k] += std::max<int64_t>(0, top->dur_ns - launch_ns);
    sums->ops[k] += ops;
    if (prev_end >= 0 && top->ts_ns >= prev_end)
      sums->gaps_ns[static_cast<int>(role)].push_back(top->ts_ns - prev_end);
    prev_end = top_end;
    top = nullptr;
  };
  for (const Event& e : events) {
    if (top != nullptr && e.ts_ns >= top_end) close();
    if (top == nullptr) {
      if (e.cat != "cpu_op") continue;  // a launch outside any op: no kind
      top = &e;
      top_end = e.ts_ns + e.dur_ns;
      ops = 1;
      launches = launch_ns = 0;
      continue;
    }
    if (e.cat == "cpu_op") ++ops;
    if (e.cat == "cuda_runtime" || e.cat == "cuda_driver") {
      if (!IsLaunchCall(e.name)) continue;
      ++launches;
      launch_ns += e.dur_ns;
      sums->launch_ns.push_back(e.dur_ns);
    }
  }
  close();
}

int64_t ToNs(const nlohmann::json& v) {
  return v.is_number() ? std::llround(v.get<double>() * 1000.0) : -1;
}

void ReadHostInfo(const nlohmann::json& j, HostProfileResult* r) {
  if (auto it = j.find("deviceProperties");
      it != j.end() && it->is_array() && !it->empty() && (*it)[0].is_object()) {
    auto name = (*it)[0].find("name");
    if (name != (*it)[0].end() && name->is_string())
      r->gpu_name = name->get<std::string>();
  }
  if (auto it = j.find("host_cpu_model"); it != j.end() && it->is_string())
    r->cpu_name = it->get<std::string>();
  if (auto it = j.find("host_cpu_mhz"); it != j.end() && it->is_number())
    r->cpu_mhz = it->get<double>();
}

// The minor page faults a light step paid (examples/record_trace.py's
// `light_page_faults_per_step`); absent or malformed: unknown.
void ReadPageFaults(const nlohmann::json& j, HostTimeModel* m) {
  auto it = j.find("light_page_faults_per_step");
  if (it == j.end() || !it->is_number()) return;
  const double faults = it->get<double>();
  if (std::isfinite(faults) && faults >= 0 && faults < 1e12)
    m->light_page_faults_per_step = faults;
}

// What Kineto would call a legacy profiler's event, which has no category:
// ops are namespaced (`aten::mm`, `autograd::engine::...`) or autograd nodes
// (`AddmmBackward0`); anything else is a record_function range
// (`DistributedDataParallel.forward`, `Optimizer.step#AdamW.step`, the gloo
// thread's `gloo:all_reduce`), which Kineto files as user_annotation.
std::string LegacyCategory(const std::string& name) {
  if (absl::StrContains(name, "::")) return "cpu_op";
  const size_t end = name.find_last_not_of("0123456789");
  if (end != std::string::npos &&
      absl::EndsWith(absl::string_view(name).substr(0, end + 1), "Backward")) {
    return "cpu_op";
  }
  return "user_annotation";
}

// Each thread's events inside a step, for the light profiler's own cost.
std::vector<std::vector<ProfiledOp>> OpsInSteps(
    const std::map<std::string, std::vector<Event>>& threads,
    const std::vector<std::pair<int64_t, int64_t>>& steps) {
  std::vector<std::vector<ProfiledOp>> out;
  for (const auto& [tid, events] : threads) {
    std::vector<ProfiledOp>& ops = out.emplace_back();
    for (const Event& e : events) {
      const bool inside = absl::c_any_of(steps, [&](const auto& step) {
        return e.ts_ns >= step.first && e.ts_ns < step.second;
      });
      if (inside) ops.push_back({e.name, e.cat == "cpu_op", e.ts_ns, e.dur_ns});
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<HostProfileResult> LearnHostProfile(const std::string& path) {
  std::string text;
  if (absl::Status s = ReadFileMaybeGzip(path, &text); !s.ok()) return s;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  // The legacy profiler (PyTorch built without Kineto) writes a bare array of
  // host ops without categories (examples/record_trace.py may wrap it in an
  // object to add its own keys): each of its complete events is a CPU op.
  const bool legacy = j.is_array();
  if (j.is_discarded() ||
      (!legacy && (!j.is_object() || !j.contains("traceEvents") ||
                   !j["traceEvents"].is_array()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": --host-profile: not a Kineto trace (no traceEvents array) nor a "
        "legacy profiler's array"));
  }
  HostProfileResult r;
  if (!legacy) ReadHostInfo(j, &r);
  if (!legacy) ReadPageFaults(j, &r.model);
  std::map<std::string, std::vector<Event>> threads;
  std::vector<std::pair<int64_t, int64_t>> steps;  // [begin, end) per step
  for (const nlohmann::json& e : legacy ? j : j["traceEvents"]) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string cat = e.contains("cat")
                                ? e.value("cat", "")
                                : LegacyCategory(e.value("name", ""));
    if (cat != "cpu_op" && cat != "cuda_runtime" && cat != "cuda_driver" &&
        cat != "user_annotation") {
      continue;
    }
    Event ev{e.value("name", ""), cat, ToNs(e.value("ts", nlohmann::json())),
             ToNs(e.value("dur", nlohmann::json()))};
    if (ev.ts_ns < 0 || ev.dur_ns < 0) continue;
    if (StepNumberOfName(ev.name) >= 0) {
      steps.emplace_back(ev.ts_ns, ev.ts_ns + ev.dur_ns);
      continue;
    }
    const nlohmann::json tid = e.value("tid", nlohmann::json());
    threads[tid.dump()].push_back(std::move(ev));
  }
  r.steps = static_cast<int64_t>(steps.size());
  if (r.steps == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": --host-profile: no ProfilerStep#N in the trace: cannot tell "
        "the training steps from set-up"));
  }
  // Each step on its own: the first step of a profiler session can carry
  // one-time costs (a light trace of the H100 conv net: 8.5 ms, then 4.3
  // and 4.0 ms), so a kind's cost per op is the (lower) median over steps.
  KindSums sums;
  std::array<std::vector<int64_t>, kHostOpKinds> per_step_ns;
  for (const auto& [begin, end] : steps) {
    KindSums step_sums;
    for (const auto& [tid, events] : threads) {
      std::vector<Event> inside;
      for (const Event& e : events) {
        if (e.ts_ns >= begin && e.ts_ns < end) inside.push_back(e);
      }
      AddThread(std::move(inside), &step_sums);
    }
    for (int k = 0; k < kHostOpKinds; ++k) {
      sums.ops[k] += step_sums.ops[k];
      if (step_sums.ops[k] > 0)
        per_step_ns[k].push_back(step_sums.ns[k] / step_sums.ops[k]);
    }
    absl::c_move(step_sums.launch_ns, std::back_inserter(sums.launch_ns));
    for (int role = 0; role < kHostThreadRoles; ++role) {
      absl::c_move(step_sums.gaps_ns[role],
                   std::back_inserter(sums.gaps_ns[role]));
    }
  }
  HostTimeModel& m = r.model;
  // The light profiler's own cost, from a CPU-only light trace where it shows
  // it; on a CUDA run the documented constant, measured there (an op's span
  // holds CUPTI's callbacks too: the H100 conv net's learned cost moved its
  // step from within 5% to +11.6% with the span measure).
  std::optional<LightProfilerCost> own;
  if (sums.launch_ns.empty() && r.gpu_name.empty())
    own = EstimateLightProfilerCost(OpsInSteps(threads, steps));
  if (own.has_value()) {
    m.light_profiler_ns_per_op = own->ns_per_op();
    m.light_profiler_source = DescribeLightProfilerCost(*own);
  }
  for (int k = 0; k < kHostOpKinds; ++k) {
    r.ops += sums.ops[k];
    if (per_step_ns[k].empty()) continue;  // none in the trace: the default
    m.op_ns[k] = std::max<int64_t>(
        m.op_ns[k], LowerMedian(per_step_ns[k]) - m.light_profiler_ns_per_op);
  }
  if (r.ops == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": --host-profile: no host ops inside its steps"));
  }
  if (const int64_t launch = Median(sums.launch_ns); launch >= 0)
    m.launch_ns = std::max<int64_t>(500, launch - kCuptiNsPerLaunch);
  for (int role = 0; role < kHostThreadRoles; ++role) {
    if (const int64_t gap = Median(sums.gaps_ns[role]); gap >= 0)
      m.gap_ns[role] = gap;
  }
  std::vector<int64_t> step_ns;
  for (const auto& [begin, end] : steps) step_ns.push_back(end - begin);
  m.light_step_ns = LowerMedian(step_ns);
  m.light_ops_per_step =
      static_cast<double>(r.ops) / static_cast<double>(r.steps);
  m.source = absl::StrCat("light profile ", path);
  return r;
}

}  // namespace et
