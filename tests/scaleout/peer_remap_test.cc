// Point-to-point peers moved onto a --layout job (scaleout/peer_remap.h): the
// same steps along every dimension from the rank's own coordinates, wrapped.
#include "scaleout/peer_remap.h"

#include "gtest/gtest.h"

namespace et::scaleout {
namespace {

TEST(PeerRemapTest, PipelineSendStaysInItsReplica) {
  // Recorded pp=2 (ranks 0 and 1): stage 0 sends to 1. On pp=2,dp=4 the
  // stages are 4 ranks apart; replica d of stage 0 sends to 4 + d.
  const ParallelLayout recorded = *ParseLayout("pp=2");
  const ParallelLayout job = *ParseLayout("pp=2,dp=4");
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(*MovePeer(recorded, 0, 1, job, d), 4 + d);
    // Stage 1 receives from stage 0 of its replica.
    EXPECT_EQ(*MovePeer(recorded, 1, 0, job, 4 + d), d);
    // Stage 0's program run on stage 1 (rank symmetry) wraps to stage 0.
    EXPECT_EQ(*MovePeer(recorded, 0, 1, job, 4 + d), d);
  }
}

TEST(PeerRemapTest, TensorAndPipelineTogether) {
  // Recorded tp=2,pp=2 (pp stride 2): rank 3 (tp 1, stage 1) receives from
  // rank 1 (tp 1, stage 0). On tp=2,dp=3,pp=2 (pp stride 6), rank 11 (tp 1,
  // dp 2, stage 1) receives from rank 5 (tp 1, dp 2, stage 0).
  const ParallelLayout recorded = *ParseLayout("tp=2,pp=2");
  const ParallelLayout job = *ParseLayout("tp=2,dp=3,pp=2");
  EXPECT_EQ(*MovePeer(recorded, 3, 1, job, 11), 5);
  EXPECT_EQ(*MovePeer(recorded, 1, 3, job, 5), 11);
  EXPECT_EQ(*MovePeer(recorded, 1, 3, job, 0), 6);
}

TEST(PeerRemapTest, RanksOutsideTheirWorldsAreErrors) {
  const ParallelLayout recorded = *ParseLayout("pp=2");
  const ParallelLayout job = *ParseLayout("pp=2,dp=4");
  EXPECT_FALSE(MovePeer(recorded, 0, 2, job, 0).ok());
  EXPECT_FALSE(MovePeer(recorded, -1, 1, job, 0).ok());
  EXPECT_FALSE(MovePeer(recorded, 0, 1, job, 8).ok());
  EXPECT_EQ(MovePeer(recorded, 0, 2, job, 0).status().message(),
            "point-to-point rank 2 is outside the recorded pp=2 (2 ranks)");
}

}  // namespace
}  // namespace et::scaleout
