// Compute time by iteration phase; see phase_breakdown.h.
#include "simulator/report/phase_breakdown.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace et::sim {
namespace {

constexpr std::array<const char*, 4> kPhaseNames = {
    "forward and other", "backward", "gradient accumulation", "optimizer"};

size_t PhaseOf(NodeRole role) {
  switch (role) {
    case NodeRole::kBackward:
      return 1;
    case NodeRole::kGradAccumulation:
      return 2;
    case NodeRole::kOptimizer:
      return 3;
    case NodeRole::kOther:
      break;
  }
  return 0;
}

}  // namespace

std::vector<PhaseRow> PhaseBreakdown(const RankProgram& p,
                                     const ClassTimeline& tl) {
  std::array<PhaseRow, kPhaseNames.size()> rows;
  int64_t total = 0;
  bool stamped = false;
  for (size_t i = 0; i < p.kind.size(); ++i) {
    if (p.kind[i] != SimOpKind::kCompute || tl.finish_ns[i] < 0) continue;
    NodeRole role = p.graph->role(i);
    const int64_t launcher = p.steps.launcher(i);
    if (role == NodeRole::kOther && launcher >= 0)
      role = p.graph->role(static_cast<NodeIndex>(launcher));
    const size_t k = PhaseOf(role);
    stamped |= k != 0;
    const int64_t ns = tl.finish_ns[i] - tl.start_ns[i];
    ++rows[k].ops;
    rows[k].total_ns += ns;
    total += ns;
  }
  if (!stamped) return {};
  std::vector<PhaseRow> out;
  for (size_t k = 0; k < rows.size(); ++k) {
    rows[k].phase = kPhaseNames[k];
    rows[k].share =
        total > 0 ? static_cast<double>(rows[k].total_ns) / total : 0;
    out.push_back(rows[k]);
  }
  return out;
}

std::string FormatPhases(const std::vector<PhaseRow>& rows) {
  if (rows.empty()) return "";
  std::vector<std::string> parts;
  for (const PhaseRow& r : rows) {
    parts.push_back(absl::StrFormat("%s %.3f ms (%.0f%%, %d ops)", r.phase,
                                    r.total_ns / 1e6, 100 * r.share, r.ops));
  }
  return absl::StrCat(
      "compute of the slowest rank by phase, as simulated (every step): ",
      absl::StrJoin(parts, ", "), "\n");
}

nlohmann::json PhasesJson(const std::vector<PhaseRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const PhaseRow& r : rows) {
    j.push_back({{"phase", r.phase},
                 {"ops", r.ops},
                 {"total_ns", r.total_ns},
                 {"share", r.share}});
  }
  return j;
}

}  // namespace et::sim
