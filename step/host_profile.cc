// Host costs from a light Kineto trace; see host_profile.h.
#include "step/host_profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/gzip_input.h"
#include "nlohmann/json.hpp"
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

}  // namespace

absl::StatusOr<HostProfileResult> LearnHostProfile(const std::string& path) {
  std::string text;
  if (absl::Status s = ReadFileMaybeGzip(path, &text); !s.ok()) return s;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("traceEvents") ||
      !j["traceEvents"].is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": --host-profile: not a Kineto trace (no traceEvents array)"));
  }
  HostProfileResult r;
  ReadHostInfo(j, &r);
  std::map<std::string, std::vector<Event>> threads;
  int64_t step_begin = -1, step_end = -1;
  for (const nlohmann::json& e : j["traceEvents"]) {
    if (!e.is_object() || e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat != "cpu_op" && cat != "cuda_runtime" && cat != "cuda_driver" &&
        cat != "user_annotation") {
      continue;
    }
    Event ev{e.value("name", ""), cat, ToNs(e.value("ts", nlohmann::json())),
             ToNs(e.value("dur", nlohmann::json()))};
    if (ev.ts_ns < 0 || ev.dur_ns < 0) continue;
    if (StepNumberOfName(ev.name) >= 0) {
      ++r.steps;
      step_begin = step_begin < 0 ? ev.ts_ns : std::min(step_begin, ev.ts_ns);
      step_end = std::max(step_end, ev.ts_ns + ev.dur_ns);
      continue;
    }
    const nlohmann::json tid = e.value("tid", nlohmann::json());
    threads[tid.dump()].push_back(std::move(ev));
  }
  if (r.steps == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": --host-profile: no ProfilerStep#N in the trace: cannot tell "
        "the training steps from set-up"));
  }
  KindSums sums;
  for (auto& [tid, events] : threads) {
    std::vector<Event> inside;
    for (Event& e : events) {
      if (e.ts_ns >= step_begin && e.ts_ns < step_end)
        inside.push_back(std::move(e));
    }
    AddThread(std::move(inside), &sums);
  }
  HostTimeModel& m = r.model;
  for (int k = 0; k < kHostOpKinds; ++k) {
    r.ops += sums.ops[k];
    if (sums.ops[k] == 0) continue;  // none in the trace: the default stays
    m.op_ns[k] = std::max<int64_t>(
        100, sums.ns[k] / sums.ops[k] - kLightProfilerNsPerOp);
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
  m.source = absl::StrCat("light profile ", path);
  return r;
}

}  // namespace et
