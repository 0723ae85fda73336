// Host op kinds and thread roles; see host_cost.h.
#include "step/host_cost.h"

#include <cmath>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "proto/attr_names.h"

namespace et {

absl::string_view HostOpKindName(HostOpKind kind) {
  switch (kind) {
    case HostOpKind::kDispatch:
      return "dispatch";
    case HostOpKind::kLaunch:
      return "launch";
    case HostOpKind::kAutograd:
      return "autograd";
    case HostOpKind::kOptimizer:
      return "optimizer";
  }
  return "dispatch";
}

absl::string_view HostThreadRoleName(HostThreadRole role) {
  return role == HostThreadRole::kAutograd ? "autograd" : "python";
}

bool IsAutogradEngineName(absl::string_view name) {
  if (absl::StartsWith(name, "autograd::engine::")) return true;
  // An autograd node's name: CamelCase ending in "Backward" and its number.
  while (!name.empty() && absl::ascii_isdigit(name.back()))
    name.remove_suffix(1);
  return absl::EndsWith(name, "Backward") &&
         name.find("::") == absl::string_view::npos;
}

bool ComputesNothing(absl::string_view name) {
  static constexpr absl::string_view kNames[] = {"aten::_reshape_alias",
                                                 "aten::_unsafe_view",
                                                 "aten::alias",
                                                 "aten::as_strided",
                                                 "aten::chunk",
                                                 "aten::detach",
                                                 "aten::empty",
                                                 "aten::empty_like",
                                                 "aten::empty_strided",
                                                 "aten::expand",
                                                 "aten::expand_as",
                                                 "aten::lift_fresh",
                                                 "aten::narrow",
                                                 "aten::permute",
                                                 "aten::reshape",
                                                 "aten::resolve_conj",
                                                 "aten::resolve_neg",
                                                 "aten::select",
                                                 "aten::slice",
                                                 "aten::split",
                                                 "aten::squeeze",
                                                 "aten::t",
                                                 "aten::transpose",
                                                 "aten::unbind",
                                                 "aten::unsqueeze",
                                                 "aten::view",
                                                 "detach"};
  return absl::c_binary_search(kNames, name);
}

HostOpKind ClassifyHostOp(absl::string_view name, HostThreadRole role,
                          int64_t launches) {
  if (absl::StartsWith(name, "aten::_foreach_") ||
      absl::StartsWith(name, "Optimizer.")) {
    return HostOpKind::kOptimizer;
  }
  if (role == HostThreadRole::kAutograd) return HostOpKind::kAutograd;
  return launches > 0 ? HostOpKind::kLaunch : HostOpKind::kDispatch;
}

void SetHostTimeModel(const HostTimeModel& model, AttrList* attrs) {
  SetInt64List(attrs, attr::kHostCostOpNs,
               std::vector<int64_t>(model.op_ns.begin(), model.op_ns.end()));
  SetInt64(attrs, attr::kHostCostLaunchNs, model.launch_ns);
  SetInt64List(attrs, attr::kHostCostGapNs,
               std::vector<int64_t>(model.gap_ns.begin(), model.gap_ns.end()));
  SetString(attrs, attr::kHostCostSource, model.source);
  if (model.light_step_ns > 0 && model.light_ops_per_step > 0) {
    SetInt64(attrs, attr::kHostCostLightStepNs, model.light_step_ns);
    SetDouble(attrs, attr::kHostCostLightOpsPerStep, model.light_ops_per_step);
    SetInt64(attrs, attr::kHostCostLightProfilerNs,
             model.light_profiler_ns_per_op);
    SetString(attrs, attr::kHostCostLightProfilerSource,
              model.light_profiler_source);
    if (model.light_page_faults_per_step >= 0)
      SetDouble(attrs, attr::kHostCostLightPageFaultsPerStep,
                model.light_page_faults_per_step);
    if (model.probe_full_over_light_ns > 0)
      SetInt64(attrs, attr::kHostCostProbeFullOverLightNs,
               model.probe_full_over_light_ns);
  }
}

std::optional<HostTimeModel> GetHostTimeModel(const AttrList& attrs) {
  const std::optional<std::vector<int64_t>> ops =
      GetIntList(attrs, attr::kHostCostOpNs);
  const std::optional<int64_t> launch = GetInt(attrs, attr::kHostCostLaunchNs);
  const std::optional<std::vector<int64_t>> gaps =
      GetIntList(attrs, attr::kHostCostGapNs);
  if (!ops || !launch || !gaps || ops->size() != kHostOpKinds ||
      gaps->size() != kHostThreadRoles || *launch < 0) {
    return std::nullopt;
  }
  HostTimeModel m;
  for (int k = 0; k < kHostOpKinds; ++k) {
    if ((*ops)[k] < 0) return std::nullopt;
    m.op_ns[k] = (*ops)[k];
  }
  for (int r = 0; r < kHostThreadRoles; ++r) {
    if ((*gaps)[r] < 0) return std::nullopt;
    m.gap_ns[r] = (*gaps)[r];
  }
  m.launch_ns = *launch;
  // The light step is optional (.et files written before it have none); a
  // negative or absurd value is a hostile file, read as absent.
  const int64_t light_step =
      GetInt(attrs, attr::kHostCostLightStepNs).value_or(0);
  const double light_ops =
      GetDouble(attrs, attr::kHostCostLightOpsPerStep).value_or(0);
  const int64_t light_cost =
      GetInt(attrs, attr::kHostCostLightProfilerNs).value_or(-1);
  if (light_step > 0 && light_ops > 0 && light_ops < 1e9 && light_cost >= 0 &&
      light_cost < 1000000) {
    m.light_step_ns = light_step;
    m.light_ops_per_step = light_ops;
    m.light_profiler_ns_per_op = light_cost;
    m.light_profiler_source =
        GetString(attrs, attr::kHostCostLightProfilerSource).value_or("stored");
    const double faults =
        GetDouble(attrs, attr::kHostCostLightPageFaultsPerStep).value_or(-1);
    if (std::isfinite(faults) && faults >= 0 && faults < 1e12)
      m.light_page_faults_per_step = faults;
    const int64_t probe =
        GetInt(attrs, attr::kHostCostProbeFullOverLightNs).value_or(0);
    if (probe > 0 && probe < 1000000) m.probe_full_over_light_ns = probe;
  }
  m.source =
      absl::StrCat(GetString(attrs, attr::kHostCostSource).value_or("learned"),
                   ", stored in the .et by et-convert");
  return m;
}

}  // namespace et
