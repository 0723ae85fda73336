// CollectiveRendezvous (simulator/engine/collective_rendezvous.h): an instance
// completes when its last required member arrives, with every arrival in
// arrival order; keys that differ never meet; what is still waiting is listed
// in key order (deterministic, for deadlock messages).
#include "simulator/engine/collective_rendezvous.h"

#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace et::sim {
namespace {

RendezvousKey Collective(int64_t group, int64_t seq) {
  return RendezvousKey{0, group, 0, seq};
}
RendezvousKey PointToPoint(int64_t src, int64_t dst, int64_t seq) {
  return RendezvousKey{1, src, dst, seq};
}
RendezvousArrival At(uint32_t actor, uint32_t node, int64_t issue_ns) {
  return RendezvousArrival{actor, node, issue_ns};
}

TEST(CollectiveRendezvousTest, CompletesWhenTheLastMemberArrives) {
  CollectiveRendezvous rendezvous;
  std::vector<RendezvousArrival> complete;
  const RendezvousKey key = Collective(/*group=*/5, /*seq=*/0);
  EXPECT_FALSE(rendezvous.Arrive(key, 3, At(2, 20, 300), &complete));
  EXPECT_TRUE(complete.empty());
  EXPECT_FALSE(rendezvous.Arrive(key, 3, At(0, 10, 100), &complete));
  EXPECT_TRUE(complete.empty());
  ASSERT_TRUE(rendezvous.Arrive(key, 3, At(1, 11, 200), &complete));
  ASSERT_EQ(complete.size(), 3u);
  // Arrival order, not actor order.
  EXPECT_EQ(complete[0].actor, 2u);
  EXPECT_EQ(complete[0].node, 20u);
  EXPECT_EQ(complete[0].issue_ns, 300);
  EXPECT_EQ(complete[1].actor, 0u);
  EXPECT_EQ(complete[2].actor, 1u);
  EXPECT_EQ(complete[2].issue_ns, 200);
  EXPECT_TRUE(rendezvous.PendingInstances().empty());
}

TEST(CollectiveRendezvousTest, OneRequiredMemberCompletesAtOnce) {
  CollectiveRendezvous rendezvous;
  std::vector<RendezvousArrival> complete = {At(9, 9, 9)};  // stale: cleared
  ASSERT_TRUE(rendezvous.Arrive(Collective(1, 0), 1, At(4, 40, 7), &complete));
  ASSERT_EQ(complete.size(), 1u);
  EXPECT_EQ(complete[0].actor, 4u);
  ASSERT_TRUE(rendezvous.Arrive(Collective(1, 1), 0, At(4, 41, 8), &complete));
  ASSERT_EQ(complete.size(), 1u);
  EXPECT_EQ(complete[0].node, 41u);
  EXPECT_TRUE(rendezvous.PendingInstances().empty());
}

// A completed instance is forgotten: the same key starts a fresh one.
TEST(CollectiveRendezvousTest, ACompletedKeyStartsAfresh) {
  CollectiveRendezvous rendezvous;
  std::vector<RendezvousArrival> complete;
  const RendezvousKey key = PointToPoint(0, 1, 0);
  EXPECT_FALSE(rendezvous.Arrive(key, 2, At(0, 1, 0), &complete));
  EXPECT_TRUE(rendezvous.Arrive(key, 2, At(1, 2, 0), &complete));
  EXPECT_FALSE(rendezvous.Arrive(key, 2, At(0, 3, 5), &complete));
  const auto pending = rendezvous.PendingInstances();
  ASSERT_EQ(pending.size(), 1u);
  ASSERT_EQ(pending[0].arrived.size(), 1u);
  EXPECT_EQ(pending[0].arrived[0].node, 3u);
}

// Matching is by key alone: another group, use of a group, direction or kind
// is another instance, whatever the nodes are. (Whether the members agree on
// type and size is the engine's check, not the rendezvous'.)
TEST(CollectiveRendezvousTest, DifferentKeysNeverMeet) {
  CollectiveRendezvous rendezvous;
  std::vector<RendezvousArrival> complete;
  const std::vector<RendezvousKey> keys = {
      Collective(1, 0),          Collective(2, 0),      Collective(1, 1),
      PointToPoint(0, 1, 0),     PointToPoint(1, 0, 0), PointToPoint(0, 1, 1),
      RendezvousKey{1, 2, 0, 0},  // Collective(2, 0)'s numbers, kind 1
  };
  for (size_t k = 0; k < keys.size(); ++k) {
    EXPECT_FALSE(rendezvous.Arrive(
        keys[k], 2, At(static_cast<uint32_t>(k), 0, 0), &complete))
        << k;
  }
  EXPECT_EQ(rendezvous.PendingInstances().size(), keys.size());
}

TEST(CollectiveRendezvousTest, PendingInstancesAreInKeyOrder) {
  CollectiveRendezvous rendezvous;
  std::vector<RendezvousArrival> complete;
  // Pushed out of order, many keys so that hash order would show.
  for (int64_t seq = 20; seq-- > 0;) {
    rendezvous.Arrive(PointToPoint(3, 1, seq), 2, At(3, 0, seq), &complete);
    rendezvous.Arrive(Collective(seq % 4, seq), 4, At(0, 0, seq), &complete);
  }
  rendezvous.Arrive(Collective(0, 0), 4, At(1, 0, 0), &complete);
  const auto pending = rendezvous.PendingInstances();
  ASSERT_EQ(pending.size(), 40u);
  for (size_t k = 1; k < pending.size(); ++k) {
    const RendezvousKey& x = pending[k - 1].key;
    const RendezvousKey& y = pending[k].key;
    EXPECT_TRUE(std::tie(x.kind, x.a, x.b, x.seq) <
                std::tie(y.kind, y.a, y.b, y.seq))
        << k;
  }
  // The first is Collective(0, 0): two of its four members came, in order.
  EXPECT_EQ(pending[0].key, Collective(0, 0));
  EXPECT_EQ(pending[0].required, 4u);
  ASSERT_EQ(pending[0].arrived.size(), 2u);
  EXPECT_EQ(pending[0].arrived[0].actor, 0u);
  EXPECT_EQ(pending[0].arrived[1].actor, 1u);
}

}  // namespace
}  // namespace et::sim
