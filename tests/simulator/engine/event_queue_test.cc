// EventQueue (simulator/engine/event_queue.h): events leave in (time, priority,
// insertion) order, so two runs of one input pop the same sequence.
#include "simulator/engine/event_queue.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace et::sim {
namespace {

std::vector<SimEvent> Drain(EventQueue* queue) {
  std::vector<SimEvent> out;
  while (!queue->empty()) out.push_back(queue->Pop());
  return out;
}

TEST(EventQueueTest, StartsEmpty) {
  EventQueue queue;
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.size(), 0u);
}

TEST(EventQueueTest, PopsInTimeOrderWithActorAndNode) {
  EventQueue queue;
  queue.Push(30, 1, /*actor=*/3, /*node=*/300);
  queue.Push(10, 1, 1, 100);
  queue.Push(20, 1, 2, 200);
  queue.Push(-5, 1, 0, 7);  // times are signed integers
  EXPECT_EQ(queue.size(), 4u);
  const std::vector<SimEvent> out = Drain(&queue);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].time_ns, -5);
  EXPECT_EQ(out[1].time_ns, 10);
  EXPECT_EQ(out[1].actor, 1u);
  EXPECT_EQ(out[1].node, 100u);
  EXPECT_EQ(out[2].time_ns, 20);
  EXPECT_EQ(out[3].time_ns, 30);
  EXPECT_EQ(out[3].actor, 3u);
  EXPECT_EQ(out[3].node, 300u);
}

TEST(EventQueueTest, SameTimeOrdersByPriorityLowerFirst) {
  EventQueue queue;
  queue.Push(100, 2, 0, 1);
  queue.Push(100, 0, 0, 2);  // a finish: before anything else at t=100
  queue.Push(100, 1, 0, 3);
  queue.Push(99, 5, 0, 4);  // earlier time wins over any priority
  const std::vector<SimEvent> out = Drain(&queue);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].node, 4u);
  EXPECT_EQ(out[1].node, 2u);
  EXPECT_EQ(out[2].node, 3u);
  EXPECT_EQ(out[3].node, 1u);
}

TEST(EventQueueTest, TiesLeaveInInsertionOrder) {
  EventQueue queue;
  for (uint32_t n = 0; n < 50; ++n) queue.Push(7, 1, n % 3, n);
  const std::vector<SimEvent> out = Drain(&queue);
  ASSERT_EQ(out.size(), 50u);
  for (uint32_t n = 0; n < 50; ++n) {
    EXPECT_EQ(out[n].node, n);
    EXPECT_EQ(out[n].seq, n);
  }
}

// A tie pushed while earlier events are queued (or already popped) still
// leaves after them: the sequence number keeps counting across pops.
TEST(EventQueueTest, TiesPushedLaterLeaveLaterAcrossPops) {
  EventQueue queue;
  queue.Push(5, 1, 0, 1);
  queue.Push(5, 1, 0, 2);
  EXPECT_EQ(queue.Pop().node, 1u);
  queue.Push(5, 1, 0, 3);
  queue.Push(4, 1, 0, 4);
  EXPECT_EQ(queue.top().node, 4u);
  EXPECT_EQ(queue.Pop().node, 4u);
  EXPECT_EQ(queue.Pop().node, 2u);
  EXPECT_EQ(queue.Pop().node, 3u);
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueueTest, TopIsTheNextPop) {
  EventQueue queue;
  queue.Push(3, 0, 0, 30);
  queue.Push(1, 0, 0, 10);
  queue.Push(2, 0, 0, 20);
  while (!queue.empty()) {
    const SimEvent top = queue.top();
    const SimEvent popped = queue.Pop();
    EXPECT_EQ(top.time_ns, popped.time_ns);
    EXPECT_EQ(top.seq, popped.seq);
    EXPECT_EQ(top.node, popped.node);
  }
}

// 10,000 events over few distinct times and priorities (many ties): the pops
// are exactly the pushes stably sorted by (time, priority), on every run.
TEST(EventQueueTest, ManyTiesPopAsAStableSort) {
  std::mt19937 rng(12345);
  std::vector<SimEvent> pushed;
  EventQueue queue;
  for (uint32_t n = 0; n < 10000; ++n) {
    const int64_t time = static_cast<int64_t>(rng() % 64);
    const uint32_t prio = rng() % 3;
    queue.Push(time, prio, n % 8, n);
    pushed.push_back(SimEvent{time, n, n % 8, n, prio});
  }
  std::stable_sort(
      pushed.begin(), pushed.end(), [](const SimEvent& a, const SimEvent& b) {
        return std::tie(a.time_ns, a.prio) < std::tie(b.time_ns, b.prio);
      });
  const std::vector<SimEvent> out = Drain(&queue);
  ASSERT_EQ(out.size(), pushed.size());
  for (size_t k = 0; k < out.size(); ++k) {
    ASSERT_EQ(out[k].node, pushed[k].node) << "pop " << k;
    ASSERT_EQ(out[k].seq, pushed[k].seq) << "pop " << k;
  }
}

}  // namespace
}  // namespace et::sim
