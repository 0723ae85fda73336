// Unit tests of MatchHostOps (converter/kineto/host_op_matcher.h) on small
// hand-made Kineto traces, one rule per test: record-function ids first (and
// when they are not ids), per-thread alignment by name and order, the
// placement of later threads next to the first thread's iteration, the rescue
// of leftover ops on other threads, equal-start siblings in issue order, and
// ops with no (or an ambiguous) twin.
#include "converter/kineto/host_op_matcher.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "converter/kineto/cpu_op_nesting.h"
#include "tests/converter/kineto/kineto_events_test_util.h"

namespace et::kineto {
namespace {

using testing::CpuOp;
using testing::EventAt;
using testing::ParseEvents;

// ET host op `et_id` named `name` on ET thread `tid`, at position `order` of
// the ET's global order (its rf_id when it has one).
HostOpView Op(uint64_t et_id, absl::string_view name, int64_t tid,
              int64_t order, int64_t rf_id = -1) {
  HostOpView op;
  op.et_id = et_id;
  op.name = name;
  op.tid = tid;
  op.order = order;
  op.rf_id = rf_id;
  return op;
}

std::string Rf(int64_t id) {
  return absl::StrFormat(R"("Record function id": %d)", id);
}

HostMatch Match(const KinetoTrace& trace, const std::vector<HostOpView>& ops) {
  CpuOpNesting nesting(trace);
  return MatchHostOps(trace, nesting, ops, LinkOptions());
}

TEST(HostOpMatcherTest, RecordFunctionIdsMatchDirectlyWhenNamesAgree) {
  const KinetoTrace trace = ParseEvents({
      CpuOp("aten::mm", 1, 100, 10, Rf(7)),
      CpuOp("aten::relu", 1, 200, 10, Rf(8)),
      CpuOp("aten::add", 1, 300, 10, Rf(9)),
  });
  // Listed out of time order; op 3's id names an op of another name.
  const std::vector<HostOpView> ops = {Op(1, "aten::add", 1, 9, 9),
                                       Op(2, "aten::mm", 1, 7, 7),
                                       Op(3, "aten::sigmoid", 1, 8, 8)};
  const HostMatch m = Match(trace, ops);
  EXPECT_TRUE(m.used_record_function_id);
  EXPECT_EQ(m.twin[0], EventAt(trace, "aten::add", 300));
  EXPECT_EQ(m.twin[1], EventAt(trace, "aten::mm", 100));
  EXPECT_EQ(m.twin[2], -1);
  ASSERT_EQ(m.per_thread.size(), 1u);
  EXPECT_EQ(m.per_thread[0].host_ops, 3);
  EXPECT_EQ(m.per_thread[0].matched, 2);
  EXPECT_EQ(m.per_thread[0].kineto_tid, 1);
}

TEST(HostOpMatcherTest, AllZeroRecordFunctionIdsAreNotIds) {
  // Old profilers write "Record function id": 0 on every op.
  const KinetoTrace trace = ParseEvents({
      CpuOp("aten::mm", 1, 100, 10, Rf(0)),
      CpuOp("aten::relu", 1, 200, 10, Rf(0)),
      CpuOp("aten::add", 1, 300, 10, Rf(0)),
  });
  const std::vector<HostOpView> ops = {Op(1, "aten::mm", 1, 1, 0),
                                       Op(2, "aten::relu", 1, 2, 0),
                                       Op(3, "aten::add", 1, 3, 0)};
  const HostMatch m = Match(trace, ops);
  EXPECT_FALSE(m.used_record_function_id);
  EXPECT_EQ(m.twin[0], EventAt(trace, "aten::mm", 100));
  EXPECT_EQ(m.twin[1], EventAt(trace, "aten::relu", 200));
  EXPECT_EQ(m.twin[2], EventAt(trace, "aten::add", 300));
}

TEST(HostOpMatcherTest, AmbiguousRecordFunctionIdsFallBackToAlignment) {
  // Ids 5, 5, 6: fewer than 90% distinct. Used as ids, op 2 would get op 1's
  // twin's name and no match.
  const KinetoTrace trace = ParseEvents({
      CpuOp("aten::mm", 1, 100, 10, Rf(5)),
      CpuOp("aten::relu", 1, 200, 10, Rf(5)),
      CpuOp("aten::add", 1, 300, 10, Rf(6)),
  });
  const std::vector<HostOpView> ops = {Op(1, "aten::mm", 1, 1, 5),
                                       Op(2, "aten::relu", 1, 2, 5),
                                       Op(3, "aten::add", 1, 3, 6)};
  const HostMatch m = Match(trace, ops);
  EXPECT_FALSE(m.used_record_function_id);
  EXPECT_EQ(m.twin[1], EventAt(trace, "aten::relu", 200));
  ASSERT_EQ(m.per_thread.size(), 1u);
  EXPECT_EQ(m.per_thread[0].matched, 3);
}

TEST(HostOpMatcherTest, RecordFunctionIdsOfAnotherRunFallBackToAlignment) {
  // Distinct ids, but none of the ET's: under half matched by id.
  const KinetoTrace trace = ParseEvents({
      CpuOp("aten::mm", 1, 100, 10, Rf(100)),
      CpuOp("aten::relu", 1, 200, 10, Rf(101)),
      CpuOp("aten::add", 1, 300, 10, Rf(102)),
  });
  const std::vector<HostOpView> ops = {Op(1, "aten::mm", 1, 1, 1),
                                       Op(2, "aten::relu", 1, 2, 2),
                                       Op(3, "aten::add", 1, 3, 3)};
  const HostMatch m = Match(trace, ops);
  EXPECT_FALSE(m.used_record_function_id);
  EXPECT_EQ(m.twin[0], EventAt(trace, "aten::mm", 100));
  EXPECT_EQ(m.twin[2], EventAt(trace, "aten::add", 300));
}

TEST(HostOpMatcherTest, EtRootsAreNotConsidered) {
  const KinetoTrace trace = ParseEvents({
      CpuOp("aten::mm", 1, 100, 10),
      CpuOp("aten::add", 1, 200, 10),
  });
  const std::vector<HostOpView> ops = {
      Op(1, "[pytorch|profiler|execution_trace|thread]", 1, 1),
      Op(2, "aten::mm", 1, 2), Op(3, "aten::add", 1, 3)};
  const HostMatch m = Match(trace, ops);
  EXPECT_EQ(m.considered, (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_EQ(m.twin[0], -1);
  ASSERT_EQ(m.per_thread.size(), 1u);
  EXPECT_EQ(m.per_thread[0].host_ops, 2);
  EXPECT_EQ(m.per_thread[0].matched, 2);
}

TEST(HostOpMatcherTest, AlignmentSkipsOneSidedOps) {
  // Kineto has an op the ET lacks (aten::empty) and lacks one it has
  // (aten::sigmoid): the rest still pair up by name and order.
  const KinetoTrace trace = ParseEvents({
      CpuOp("aten::mm", 7, 100, 10),
      CpuOp("aten::empty", 7, 150, 10),
      CpuOp("aten::relu", 7, 200, 10),
      CpuOp("aten::add", 7, 300, 10),
  });
  const std::vector<HostOpView> ops = {
      Op(1, "aten::mm", 1, 1), Op(2, "aten::relu", 1, 2),
      Op(3, "aten::sigmoid", 1, 3), Op(4, "aten::add", 1, 4)};
  const HostMatch m = Match(trace, ops);
  EXPECT_EQ(m.twin[0], EventAt(trace, "aten::mm", 100));
  EXPECT_EQ(m.twin[1], EventAt(trace, "aten::relu", 200));
  EXPECT_EQ(m.twin[2], -1);
  EXPECT_EQ(m.twin[3], EventAt(trace, "aten::add", 300));
  ASSERT_EQ(m.per_thread.size(), 1u);
  EXPECT_EQ(m.per_thread[0].kineto_tid, 7);
  EXPECT_EQ(m.per_thread[0].matched, 3);
  EXPECT_EQ(m.per_thread[0].host_ops, 4);
}

TEST(HostOpMatcherTest, EqualStartSiblingsFollowIssueOrderNotDuration) {
  // Two aten::empty started in the same microsecond: the 0 us one was issued
  // first (External id 2), the 2 us one second; the file lists the 2 us one
  // first. The ET's first empty is the 0 us one. Ordered by duration (longer
  // first) they would swap, and each would get the other's timing.
  const KinetoTrace trace = ParseEvents({
      CpuOp("aten::ones", 1, 90, 5, R"("External id": 1)"),
      CpuOp("aten::empty", 1, 100, 2, R"("External id": 3)"),
      CpuOp("aten::empty", 1, 100, 0, R"("External id": 2)"),
      CpuOp("aten::mul", 1, 110, 5, R"("External id": 4)"),
  });
  constexpr int32_t kEmpty2us = 1, kEmpty0us = 2;  // event indices (file order)
  ASSERT_EQ(trace.events()[kEmpty0us].dur_ns, 0);
  const std::vector<HostOpView> ops = {
      Op(1, "aten::ones", 1, 1), Op(2, "aten::empty", 1, 2),
      Op(3, "aten::empty", 1, 3), Op(4, "aten::mul", 1, 4)};
  const HostMatch m = Match(trace, ops);
  EXPECT_EQ(m.twin[1], kEmpty0us);
  EXPECT_EQ(m.twin[2], kEmpty2us);
  ASSERT_EQ(m.per_thread.size(), 1u);
  EXPECT_EQ(m.per_thread[0].matched, 4);
}

// Two iterations of a forward thread (A, B, C) on Kineto thread 10, and the
// backward thread's (X, Y) on thread 20 three times: once left over from the
// iteration before the first.
std::vector<std::string> TwoIterations(bool first_complete) {
  std::vector<std::string> events = {CpuOp("A", 10, 100, 5)};
  if (first_complete) events.push_back(CpuOp("B", 10, 110, 5));
  for (const std::string& e :
       {CpuOp("C", 10, 120, 5), CpuOp("A", 10, 1000, 5),
        CpuOp("B", 10, 1010, 5), CpuOp("C", 10, 1020, 5), CpuOp("X", 20, 50, 5),
        CpuOp("Y", 20, 60, 5), CpuOp("X", 20, 500, 5), CpuOp("Y", 20, 510, 5),
        CpuOp("X", 20, 1500, 5), CpuOp("Y", 20, 1510, 5)}) {
    events.push_back(e);
  }
  return events;
}

// The ET's one iteration: forward ops first in the ET's global order.
std::vector<HostOpView> OneIteration() {
  return {Op(1, "A", 1, 1), Op(2, "B", 1, 2), Op(3, "C", 1, 3),
          Op(4, "X", 2, 4), Op(5, "Y", 2, 5)};
}

TEST(HostOpMatcherTest, LaterThreadSitsAfterTheFirstThreadsIteration) {
  // Both forward iterations match fully; the backward thread must follow the
  // chosen one (X at 500, not the earlier X at 50 of the previous iteration),
  // and of the two assignments the more compact one (the first) wins.
  const KinetoTrace trace = ParseEvents(TwoIterations(true));
  const HostMatch m = Match(trace, OneIteration());
  EXPECT_EQ(m.twin[0], EventAt(trace, "A", 100));
  EXPECT_EQ(m.twin[2], EventAt(trace, "C", 120));
  EXPECT_EQ(m.twin[3], EventAt(trace, "X", 500));
  EXPECT_EQ(m.twin[4], EventAt(trace, "Y", 510));
  ASSERT_EQ(m.per_thread.size(), 2u);
  EXPECT_EQ(m.per_thread[0].kineto_tid, 10);
  EXPECT_EQ(m.per_thread[1].kineto_tid, 20);
  EXPECT_EQ(m.per_thread[1].matched, 2);
}

TEST(HostOpMatcherTest, IncompleteIterationLosesToACompleteOne) {
  // The first forward iteration lacks B: the second matches more, and the
  // backward thread follows it to X at 1500.
  const KinetoTrace trace = ParseEvents(TwoIterations(false));
  const HostMatch m = Match(trace, OneIteration());
  EXPECT_EQ(m.twin[0], EventAt(trace, "A", 1000));
  EXPECT_EQ(m.twin[1], EventAt(trace, "B", 1010));
  EXPECT_EQ(m.twin[3], EventAt(trace, "X", 1500));
  EXPECT_EQ(m.per_thread[0].matched, 3);
}

TEST(HostOpMatcherTest, LeftoverOpsAreRescuedOnOtherThreadsInsideTheWindow) {
  // gloo collectives: the ET files them under the main thread, Kineto under a
  // worker thread (30). The first takes the worker's op after its predecessor
  // (A at 100), not the earlier one at 50; the second has none left inside
  // the window (which ends with B at 205).
  const KinetoTrace trace = ParseEvents({
      CpuOp("A", 10, 100, 5),
      CpuOp("B", 10, 200, 5),
      CpuOp("gloo:all_reduce", 30, 50, 5),
      CpuOp("gloo:all_reduce", 30, 150, 5),
      CpuOp("gloo:all_reduce", 30, 300, 5),
  });
  const std::vector<HostOpView> ops = {
      Op(1, "A", 1, 1), Op(2, "gloo:all_reduce", 1, 2), Op(3, "B", 1, 3),
      Op(4, "gloo:all_reduce", 1, 4)};
  const HostMatch m = Match(trace, ops);
  EXPECT_FALSE(m.used_record_function_id);
  EXPECT_EQ(m.twin[0], EventAt(trace, "A", 100));
  EXPECT_EQ(m.twin[1], EventAt(trace, "gloo:all_reduce", 150));
  EXPECT_EQ(m.twin[2], EventAt(trace, "B", 200));
  EXPECT_EQ(m.twin[3], -1);
  ASSERT_EQ(m.per_thread.size(), 1u);
  EXPECT_EQ(m.per_thread[0].kineto_tid, 10);
  EXPECT_EQ(m.per_thread[0].matched, 3);
}

TEST(HostOpMatcherTest, NoKinetoOpsMeansNoTwins) {
  const KinetoTrace trace = ParseEvents({CpuOp("aten::other", 1, 10, 1)});
  const std::vector<HostOpView> ops = {Op(1, "aten::mm", 1, 1),
                                       Op(2, "aten::add", 1, 2)};
  const HostMatch m = Match(trace, ops);
  EXPECT_EQ(m.twin, (std::vector<int32_t>{-1, -1}));
  ASSERT_EQ(m.per_thread.size(), 1u);
  EXPECT_EQ(m.per_thread[0].matched, 0);
  EXPECT_EQ(m.per_thread[0].kineto_tid, -1);
}

}  // namespace
}  // namespace et::kineto
