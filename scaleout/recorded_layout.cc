// Recorded-layout detection and checking; see recorded_layout.h.
#include "scaleout/recorded_layout.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace et::scaleout {
namespace {

// The members of `g` in a world of `world` ranks (empty list: every rank).
std::vector<int64_t> MembersOf(const ProcessGroup& g, int64_t world) {
  if (!g.ranks.empty()) {
    std::vector<int64_t> r = g.ranks;
    std::sort(r.begin(), r.end());
    return r;
  }
  std::vector<int64_t> all(std::max<int64_t>(g.MemberCount(world), 1));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return all;
}

std::string Describe(const ProcessGroup& g) {
  return g.desc.empty() || g.desc == "undefined"
             ? absl::StrFormat("group '%s'", g.name)
             : absl::StrFormat("group '%s' (%s)", g.name, g.desc);
}

// The dimension set whose group of `members.front()` is exactly `members`,
// or nullopt.
std::optional<DimMask> FitMask(const ParallelLayout& layout,
                               const std::vector<int64_t>& members) {
  if (members.back() >= layout.world()) return std::nullopt;
  for (DimMask mask = 0; mask < (1u << kDimCount); ++mask) {
    // Only dimensions that change something, so each set is tried once.
    if ((mask & layout.NonTrivial()) != mask) continue;
    if (layout.GroupSize(mask) != static_cast<int64_t>(members.size()))
      continue;
    if (layout.GroupOf(members.front(), mask) == members) return mask;
  }
  return std::nullopt;
}

// Megatron's embedding groups join the first and last pipeline stage: no
// dimension set makes them, and they keep their recorded ranks.
bool SaysKept(const ProcessGroup& g) {
  return absl::StrContains(absl::AsciiStrToLower(g.desc), "embedding");
}

bool IsSingleDim(DimMask mask) { return mask != 0 && (mask & (mask - 1)) == 0; }

Dim OnlyDim(DimMask mask) {
  for (Dim d : kDims) {
    if (mask == MaskOf(d)) return d;
  }
  return Dim::kDp;
}

// Ranks in arithmetic progression: the step between neighbours, else 0.
int64_t StrideOf(const std::vector<int64_t>& members) {
  if (members.size() < 2) return 0;
  const int64_t step = members[1] - members[0];
  for (size_t i = 2; i < members.size(); ++i) {
    if (members[i] - members[i - 1] != step) return 0;
  }
  return step;
}

// The layout the groups imply: named groups first, then unnamed ones by
// stride (Megatron's placement: tp stride 1, dp stride tp*ep, pp stride
// tp*ep*dp); data parallelism is whatever the world leaves.
absl::StatusOr<ParallelLayout> InferLayout(
    const std::vector<ProcessGroup>& groups,
    const std::vector<std::vector<int64_t>>& members, int64_t world) {
  ParallelLayout layout;
  std::array<std::string, kDimCount> from;
  auto set = [&](Dim d, int64_t n, const ProcessGroup& g) -> absl::Status {
    std::string& f = from[static_cast<int>(d)];
    if (!f.empty() && layout.of(d) != n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the trace's %s and %s are both %s groups but have %d and %d ranks",
          f, Describe(g), DimName(d), layout.of(d), n));
    }
    layout.of(d) = n;
    f = Describe(g);
    return absl::OkStatus();
  };
  std::vector<size_t> unnamed;
  for (size_t i = 0; i < groups.size(); ++i) {
    const int64_t n = static_cast<int64_t>(members[i].size());
    const DimMask role = RoleFromDescription(groups[i]);
    // A group of every rank spans the whole layout; only its name can say
    // which dimension that is (a TP8 trace of 8 ranks).
    if (n >= world && !IsSingleDim(role)) continue;
    if (IsSingleDim(role)) {
      absl::Status s = set(OnlyDim(role), n, groups[i]);
      if (!s.ok()) return s;
    } else if (role == 0) {
      unnamed.push_back(i);
    }
  }
  for (size_t i : unnamed) {
    const int64_t stride = StrideOf(members[i]);
    const int64_t n = static_cast<int64_t>(members[i].size());
    for (Dim d : {Dim::kTp, Dim::kDp, Dim::kPp}) {
      if (!from[static_cast<int>(d)].empty()) continue;
      if (stride != layout.stride(d)) continue;
      absl::Status s = set(d, n, groups[i]);
      if (!s.ok()) return s;
      break;
    }
  }
  if (from[static_cast<int>(Dim::kDp)].empty()) {
    const int64_t rest = layout.world();
    if (world % rest != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the trace's groups (%s) do not divide its world of %d ranks",
          layout.ToString(), world));
    }
    layout.of(Dim::kDp) = world / rest;
  }
  return layout;
}

}  // namespace

DimMask RoleFromDescription(const ProcessGroup& group) {
  const std::string text = absl::AsciiStrToLower(group.desc);
  std::vector<std::string> tokens =
      absl::StrSplit(text, absl::ByAnyChar("_- :./"), absl::SkipEmpty());
  auto has = [&](absl::string_view word) {
    return std::find(tokens.begin(), tokens.end(), word) != tokens.end();
  };
  const bool expert = has("expert") || has("moe") || has("ep");
  if (expert && (has("data") || has("dp"))) return 0;  // expert-data groups
  if (has("embedding")) return 0;  // first and last stage: kept as recorded
  DimMask mask = 0;
  if (has("tensor") || has("tp")) mask |= MaskOf(Dim::kTp);
  if (has("pipeline") || has("pp")) mask |= MaskOf(Dim::kPp);
  if (expert) mask |= MaskOf(Dim::kEp);
  if (has("data") || has("dp")) mask |= MaskOf(Dim::kDp);
  return mask;
}

absl::StatusOr<RecordedLayout> DetectRecordedLayout(
    const std::vector<ProcessGroup>& groups, int64_t recorded_world,
    const std::optional<ParallelLayout>& given) {
  int64_t world = recorded_world;
  for (const ProcessGroup& g : groups) {
    for (int64_t r : g.ranks) world = std::max(world, r + 1);
    if (g.ranks.empty()) world = std::max(world, g.size);
  }
  std::vector<std::vector<int64_t>> members;
  for (const ProcessGroup& g : groups) members.push_back(MembersOf(g, world));
  RecordedLayout out;
  if (given) {
    if (world > 0 && given->world() != world) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--recorded-layout %s spans %d ranks, but the trace was recorded on "
          "%d",
          given->ToString(), given->world(), world));
    }
    out.layout = *given;
    out.source = "--recorded-layout";  // checked against the groups
  } else {
    if (world <= 0) world = 1;
    absl::StatusOr<ParallelLayout> inferred =
        InferLayout(groups, members, world);
    if (!inferred.ok()) return inferred.status();
    out.layout = *inferred;
    out.source = !groups.empty() ? "from the trace's process groups"
                 : world == 1
                     ? "a one-rank trace"
                     : absl::StrFormat(
                           "the recorded world of %d ranks without process "
                           "groups: data-parallel",
                           world);
  }
  out.all_ranks_mask = out.layout.NonTrivial();
  const std::string what =
      given ? absl::StrCat("--recorded-layout ", given->ToString())
            : absl::StrCat("the recorded layout ", out.layout.ToString());
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupRole role{groups[i].name};
    const DimMask named = RoleFromDescription(groups[i]);
    std::optional<DimMask> fit = FitMask(out.layout, members[i]);
    // A named group of a dimension the recorded layout has at size 1 (a TP8
    // run's DATA_PARALLEL_GROUP of one rank) fits the empty set; it still
    // varies its dimension, and becomes that dimension's group on a new job.
    if (fit && *fit == 0 && IsSingleDim(named) &&
        (named & out.layout.NonTrivial()) == 0) {
      fit = named;
    }
    if (fit) {
      role.mask = *fit;
      if (IsSingleDim(named) && *fit != named && *fit != out.all_ranks_mask) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: the trace's %s has %d ranks, a %s group of that layout %d",
            what, Describe(groups[i]), members[i].size(),
            DimName(OnlyDim(named)), out.layout.of(OnlyDim(named))));
      }
    } else if ((named != 0 || given) && !SaysKept(groups[i])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the trace's %s (%d ranks from %d) is no group of that layout: "
          "its dimensions do not divide it",
          what, Describe(groups[i]), members[i].size(), members[i].front()));
    } else {
      role.kept = true;
    }
    out.roles.push_back(std::move(role));
  }
  return out;
}

absl::Status CheckGradientGroups(
    const RecordedLayout& recorded, const std::vector<ProcessGroup>& groups,
    const std::map<std::string, int64_t>& gradient_collectives) {
  const int64_t world = recorded.layout.world();
  for (const auto& [name, count] : gradient_collectives) {
    DimMask mask = recorded.all_ranks_mask;
    std::string what = absl::StrFormat("every rank (%d)", world);
    for (size_t i = 0; i < groups.size() && i < recorded.roles.size(); ++i) {
      if (groups[i].name != name || name.empty()) continue;
      mask = recorded.roles[i].kept ? 0 : recorded.roles[i].mask;
      const int64_t n = groups[i].MemberCount(world);
      what = absl::StrFormat("%s of %d ranks", Describe(groups[i]), n);
    }
    if ((mask & MaskOf(Dim::kDp)) != 0) continue;
    std::vector<std::string> dims;
    for (Dim d : kDims) {
      if ((mask & MaskOf(d)) != 0) dims.push_back(std::string(DimName(d)));
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "--recorded-layout %s: the trace's %d gradient all-reduces (DDP's "
        "buckets, issued from AccumulateGrad) run on %s, which that layout "
        "makes %s, not dp: the trace shows data parallelism there",
        recorded.layout.ToString(), count, what,
        dims.empty() ? std::string("no dimension") : absl::StrJoin(dims, "+")));
  }
  return absl::OkStatus();
}

}  // namespace et::scaleout
