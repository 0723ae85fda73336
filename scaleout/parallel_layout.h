// A parallel layout (`dp=D[,tp=T][,pp=P][,ep=E]`), the world it spans, and
// where each rank sits in it: Megatron's placement, tensor parallelism
// innermost (its groups fill a node first), then expert, then data, with
// pipeline stages outermost. Pure values; cheap to copy.
#ifndef SCALEOUT_PARALLEL_LAYOUT_H_
#define SCALEOUT_PARALLEL_LAYOUT_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace et::scaleout {

// The dimensions in placement order, innermost first.
enum class Dim : int { kTp = 0, kEp = 1, kDp = 2, kPp = 3 };
inline constexpr int kDimCount = 4;
inline constexpr std::array<Dim, kDimCount> kDims = {Dim::kTp, Dim::kEp,
                                                     Dim::kDp, Dim::kPp};

// "tp", "ep", "dp", "pp".
absl::string_view DimName(Dim dim);

// A set of dimensions (a group varies these and holds the others fixed).
using DimMask = unsigned;
inline constexpr DimMask MaskOf(Dim dim) { return 1u << static_cast<int>(dim); }

struct ParallelLayout {
  std::array<int64_t, kDimCount> size = {1, 1, 1, 1};

  int64_t of(Dim dim) const { return size[static_cast<int>(dim)]; }
  int64_t& of(Dim dim) { return size[static_cast<int>(dim)]; }
  // Ranks in the job: the product of the sizes.
  int64_t world() const;
  // Ranks between neighbours along `dim`: the product of the inner sizes.
  int64_t stride(Dim dim) const;
  // `rank`'s index along `dim`.
  int64_t coord(int64_t rank, Dim dim) const;
  // Ranks in a group varying `mask`: the product of those sizes.
  int64_t GroupSize(DimMask mask) const;
  // The members of `rank`'s group varying `mask`, ascending.
  std::vector<int64_t> GroupOf(int64_t rank, DimMask mask) const;
  // The dimensions larger than 1.
  DimMask NonTrivial() const;
  // "tp=8,dp=4" (dimensions of 1 left out; "dp=1" when all are).
  std::string ToString() const;

  bool operator==(const ParallelLayout& o) const { return size == o.size; }
  bool operator!=(const ParallelLayout& o) const { return size != o.size; }
};

// Parses `dp=D[,tp=T][,pp=P][,ep=E]` in any order (each at most once, each a
// positive integer, the world at most base/input_limits.h's kMaxRanks). Errors
// are one line quoting the text; the caller names the flag.
absl::StatusOr<ParallelLayout> ParseLayout(absl::string_view text);

// "dp=1,2,4": the dimension swept and its values (positive, at most
// kMaxRanks, at most 64 points).
struct LayoutSweep {
  Dim dim = Dim::kDp;
  std::vector<int64_t> values;
};
absl::StatusOr<LayoutSweep> ParseSweep(absl::string_view text);

}  // namespace et::scaleout

#endif  // SCALEOUT_PARALLEL_LAYOUT_H_
