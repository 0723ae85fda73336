// Point-to-point peers on a --layout job. A recorded send or receive names
// its peer by global rank in the recorded job (comm_dst / comm_src); on a job
// with more data-parallel replicas that rank is some other replica's, or
// another stage of replica 0. Every rank of the new job runs the recorded
// rank's program (rank symmetry), so it talks to the rank the same number of
// steps away along every dimension: a pipeline send in dp replica r goes to
// the next stage of replica r. Steps wrap within each dimension's size (the
// last stage's program run as stage 0 talks to the last stage).
#ifndef SCALEOUT_PEER_REMAP_H_
#define SCALEOUT_PEER_REMAP_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "scaleout/parallel_layout.h"

namespace et::scaleout {

// The peer of `rank` on `target` for a message that recorded rank `from`
// exchanged with recorded rank `peer` on `recorded`. Errors (one line):
// `from` or `peer` outside the recorded world, `rank` outside the target's.
absl::StatusOr<int64_t> MovePeer(const ParallelLayout& recorded, int64_t from,
                                 int64_t peer, const ParallelLayout& target,
                                 int64_t rank);

}  // namespace et::scaleout

#endif  // SCALEOUT_PEER_REMAP_H_
