// Point-to-point peers moved to each rank of a --layout job; see peer_remap.h.
#include "scaleout/peer_remap.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace et::scaleout {

absl::StatusOr<int64_t> MovePeer(const ParallelLayout& recorded, int64_t from,
                                 int64_t peer, const ParallelLayout& target,
                                 int64_t rank) {
  for (const int64_t r : {from, peer}) {
    if (r < 0 || r >= recorded.world()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "point-to-point rank %d is outside the recorded %s (%d ranks)", r,
          recorded.ToString(), recorded.world()));
    }
  }
  if (rank < 0 || rank >= target.world()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d is outside %s (%d ranks)", rank,
                        target.ToString(), target.world()));
  }
  int64_t moved = 0;
  for (Dim d : kDims) {
    const int64_t size = target.of(d);
    const int64_t step = recorded.coord(peer, d) - recorded.coord(from, d);
    const int64_t c = ((target.coord(rank, d) + step) % size + size) % size;
    moved += c * target.stride(d);
  }
  return moved;
}

}  // namespace et::scaleout
