// Layout parsing and Megatron's rank placement; see parallel_layout.h.
#include "scaleout/parallel_layout.h"

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/checked_math.h"
#include "base/input_limits.h"

namespace et::scaleout {
namespace {

constexpr size_t kMaxSweepPoints = 64;

absl::StatusOr<Dim> DimByName(absl::string_view name, absl::string_view text) {
  for (Dim d : kDims) {
    if (name == DimName(d)) return d;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "'%s': unknown dimension '%s' (expected dp, tp, pp or ep)", text, name));
}

absl::StatusOr<int64_t> PositiveRanks(absl::string_view value,
                                      absl::string_view text) {
  int64_t v = 0;
  // Digits only: SimpleAtoi also takes "+4" and " 4".
  if (value.empty() || !absl::c_all_of(value, absl::ascii_isdigit) ||
      !absl::SimpleAtoi(value, &v) || v < 1 || v > kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': '%s' is not a rank count in [1, %d]", text, value, kMaxRanks));
  }
  return v;
}

}  // namespace

absl::string_view DimName(Dim dim) {
  switch (dim) {
    case Dim::kTp:
      return "tp";
    case Dim::kEp:
      return "ep";
    case Dim::kDp:
      return "dp";
    case Dim::kPp:
      return "pp";
  }
  return "?";
}

int64_t ParallelLayout::world() const { return DimProduct(size); }

int64_t ParallelLayout::stride(Dim dim) const {
  int64_t s = 1;
  for (Dim d : kDims) {
    if (d == dim) break;
    s *= of(d);
  }
  return s;
}

int64_t ParallelLayout::coord(int64_t rank, Dim dim) const {
  return rank / stride(dim) % of(dim);
}

int64_t ParallelLayout::GroupSize(DimMask mask) const {
  int64_t n = 1;
  for (Dim d : kDims) {
    if (mask & MaskOf(d)) n *= of(d);
  }
  return n;
}

std::vector<int64_t> ParallelLayout::GroupOf(int64_t rank, DimMask mask) const {
  // The group's first member: `rank` with every varied coordinate at 0.
  int64_t base = rank;
  for (Dim d : kDims) {
    if (mask & MaskOf(d)) base -= coord(rank, d) * stride(d);
  }
  std::vector<int64_t> members = {base};
  // Inner dimensions first, so the list comes out ascending.
  for (Dim d : kDims) {
    if (!(mask & MaskOf(d)) || of(d) == 1) continue;
    const size_t n = members.size();
    for (int64_t k = 1; k < of(d); ++k) {
      for (size_t i = 0; i < n; ++i)
        members.push_back(members[i] + k * stride(d));
    }
  }
  return members;
}

DimMask ParallelLayout::NonTrivial() const {
  DimMask mask = 0;
  for (Dim d : kDims) {
    if (of(d) > 1) mask |= MaskOf(d);
  }
  return mask;
}

std::string ParallelLayout::ToString() const {
  std::vector<std::string> parts;
  // Printed as users write it: tp, dp, pp, ep.
  for (Dim d : {Dim::kTp, Dim::kDp, Dim::kPp, Dim::kEp}) {
    if (of(d) > 1) parts.push_back(absl::StrCat(DimName(d), "=", of(d)));
  }
  return parts.empty() ? "dp=1" : absl::StrJoin(parts, ",");
}

absl::StatusOr<ParallelLayout> ParseLayout(absl::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError(
        "empty layout (expected dp=D[,tp=T][,pp=P][,ep=E])");
  }
  ParallelLayout layout;
  DimMask seen = 0;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.first.empty() || kv.second.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s': expected NAME=SIZE items such as dp=64,tp=8, got '%s'", text,
          item));
    }
    absl::StatusOr<Dim> dim = DimByName(kv.first, text);
    if (!dim.ok()) return dim.status();
    if (seen & MaskOf(*dim)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("'%s': %s given twice", text, kv.first));
    }
    seen |= MaskOf(*dim);
    absl::StatusOr<int64_t> n = PositiveRanks(kv.second, text);
    if (!n.ok()) return n.status();
    layout.of(*dim) = *n;
  }
  // DimProduct saturates, so an overflowing product is caught here too.
  if (layout.world() > kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': the world (the product of the sizes) exceeds %d ranks", text,
        kMaxRanks));
  }
  return layout;
}

absl::StatusOr<LayoutSweep> ParseSweep(absl::string_view text) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(text, absl::MaxSplits('=', 1));
  if (kv.first.empty() || kv.second.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "'%s': expected DIM=V1,V2,... such as dp=1,2,4,8", text));
  }
  LayoutSweep sweep;
  absl::StatusOr<Dim> dim = DimByName(kv.first, text);
  if (!dim.ok()) return dim.status();
  sweep.dim = *dim;
  for (absl::string_view v : absl::StrSplit(kv.second, ',')) {
    absl::StatusOr<int64_t> n = PositiveRanks(v, text);
    if (!n.ok()) return n.status();
    sweep.values.push_back(*n);
  }
  if (sweep.values.size() > kMaxSweepPoints) {
    return absl::InvalidArgumentError(
        absl::StrFormat("'%s': %d points; at most %d", text,
                        sweep.values.size(), kMaxSweepPoints));
  }
  return sweep;
}

}  // namespace et::scaleout
