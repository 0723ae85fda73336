// Host-op alignment when Kineto has no record-function ids: equal-start
// siblings ordered by the trace's own issue order, and a global alignment
// where the greedy one loses its place. Uses the generated pair in
// tests/data/generated (make_equal_start_pair.py says how it was made).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "converter/kineto/cpu_op_nesting.h"
#include "converter/kineto/global_aligner.h"
#include "converter/kineto/kineto_link.h"
#include "converter/kineto/sequence_aligner.h"
#include "tests/converter/kineto/kineto_test_loader.h"

namespace et::kineto {
namespace {

using testing::DataPath;
using testing::KinetoEvents;
using testing::LoadEtHostOps;

constexpr char kEt[] = "generated/equal_start_et.json.gz";
constexpr char kKineto[] = "generated/equal_start_kineto.json.gz";
constexpr char kNoOrderKineto[] =
    "generated/equal_start_noorder_kineto.json.gz";

TEST(KinetoAlignmentTest, EqualStartSiblingsKeepTheirIssueOrder) {
  auto trace = KinetoTrace::Load(DataPath(kKineto));
  ASSERT_TRUE(trace.ok()) << trace.status();
  const CpuOpNesting nesting(*trace);
  ASSERT_EQ(nesting.threads().size(), 1u);
  const auto& events = trace->events();
  int same_start = 0;
  const auto& ops = nesting.threads()[0].ops;
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    const KinetoEvent& a = events[ops[i]];
    const KinetoEvent& b = events[ops[i + 1]];
    // Start order follows Ev Idx everywhere, ties included.
    EXPECT_LT(a.ev_idx, b.ev_idx) << "position " << i;
    if (a.ts_ns == b.ts_ns && trace->name(a.name) == "aten::lift_fresh") {
      ++same_start;
      EXPECT_EQ(trace->name(b.name), "aten::detach_");
      // A 0 us op at the start of a sibling is not its child.
      EXPECT_NE(nesting.parent(ops[i + 1]), ops[i]);
      EXPECT_NE(nesting.parent(ops[i]), ops[i + 1]);
    }
  }
  EXPECT_EQ(same_start, 5);
}

TEST(KinetoAlignmentTest, EveryOpGetsTheTimesOfItsOwnTwin) {
  const auto et = LoadEtHostOps(DataPath(kEt));
  ASSERT_FALSE(et.ops.empty());
  auto trace = KinetoTrace::Load(DataPath(kKineto));
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto result = LinkKineto(*trace, et.ops, LinkOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->used_record_function_id);
  ASSERT_EQ(result->per_thread.size(), 1u);
  // 61 blocks, 5 with a same-start pair: nothing may be lost.
  EXPECT_EQ(result->per_thread[0].matched, result->per_thread[0].host_ops);
  // The generator gave each Kineto op the ET id of its twin as `External id`.
  std::map<int64_t, std::pair<int64_t, int64_t>> truth;  // id -> (ts, dur)
  for (const auto& e : KinetoEvents(DataPath(kKineto))) {
    truth[e["args"]["External id"].get<int64_t>()] = {
        e["ts"].get<int64_t>() * 1000, e["dur"].get<int64_t>() * 1000};
  }
  ASSERT_EQ(result->timings.size(),
            static_cast<size_t>(result->per_thread[0].host_ops));
  for (const HostTiming& t : result->timings) {
    ASSERT_TRUE(truth.count(t.et_id)) << t.et_id;
    EXPECT_EQ(t.start_ns, truth[t.et_id].first) << "node " << t.et_id;
    EXPECT_EQ(t.dur_ns, truth[t.et_id].second) << "node " << t.et_id;
  }
}

TEST(KinetoAlignmentTest, WithoutIssueOrderNoBlockTakesAnotherBlocksTimes) {
  // Equal starts are now ordered longer first, so the 5 same-start pairs are
  // swapped; a greedy alignment resynchronised one block late after each.
  const auto et = LoadEtHostOps(DataPath(kEt));
  auto trace = KinetoTrace::Load(DataPath(kNoOrderKineto));
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto result = LinkKineto(*trace, et.ops, LinkOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->per_thread.size(), 1u);
  // A swapped pair can keep only one of its two ops.
  EXPECT_GE(result->per_thread[0].matched, result->per_thread[0].host_ops - 5);
  std::map<int64_t, int64_t> start;  // ET id -> its twin's start
  for (const auto& e : KinetoEvents(DataPath(kNoOrderKineto))) {
    if (e["args"].contains("External id")) {
      start[e["args"]["External id"].get<int64_t>()] =
          e["ts"].get<int64_t>() * 1000;
    }
  }
  int64_t wrong = 0;
  for (const HostTiming& t : result->timings) {
    // A swapped lift_fresh/detach_ pair shares one start: either twin is
    // right.
    wrong += t.start_ns != start[t.et_id];
  }
  EXPECT_EQ(wrong, 0);
}

TEST(KinetoAlignmentTest, GlobalAlignmentSkipsOneSidedOpsOnBothSides) {
  // a: x y z w v, b: q x z w k v r (q, k, r Kineto-only; y ET-only).
  const std::vector<uint32_t> a = {1, 2, 3, 4, 5};
  const std::vector<uint32_t> b = {9, 1, 3, 4, 8, 5, 7};
  std::vector<int32_t> a_to_b;
  EXPECT_EQ(AlignGlobal(a, b, 0, 7, 16, &a_to_b), 4);
  EXPECT_EQ(a_to_b, (std::vector<int32_t>{1, -1, 2, 3, 5}));
  // Too many one-sided ops for the budget: no answer, not a wrong one.
  EXPECT_EQ(AlignGlobal(a, b, 0, 7, 1, &a_to_b), -1);
  // kNoName matches nothing, not even itself.
  const std::vector<uint32_t> none = {kNoName};
  EXPECT_EQ(AlignGlobal(none, none, 0, 1, 4, &a_to_b), 0);
}

}  // namespace
}  // namespace et::kineto
