// Host op kinds and thread roles; see host_cost.h.
#include "step/host_cost.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

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

HostOpKind ClassifyHostOp(absl::string_view name, HostThreadRole role,
                          int64_t launches) {
  if (absl::StartsWith(name, "aten::_foreach_") ||
      absl::StartsWith(name, "Optimizer.")) {
    return HostOpKind::kOptimizer;
  }
  if (role == HostThreadRole::kAutograd) return HostOpKind::kAutograd;
  return launches > 0 ? HostOpKind::kLaunch : HostOpKind::kDispatch;
}

}  // namespace et
