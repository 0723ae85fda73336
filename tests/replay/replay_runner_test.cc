// The replay loop's contract with a backend whose per-op timing stretches the
// run (a GPU: an event on each side of each kernel): the warm-up and timed
// iterations time the step alone, one more iteration times every op, and the
// report takes the step from the first and op times from the second.
#include "replay/replay_runner.h"

#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "replay/replay_report.h"
#include "replay_test_graphs.h"
#include "test_world.h"

namespace et::replay {
namespace {

// Times each op `op_ns` long when asked to time every op, and only the step's
// end (nothing per op) otherwise; remembers the modes it was asked for.
class ModeRecordingBackend : public DeviceBackend {
 public:
  explicit ModeRecordingBackend(bool stretches) : stretches_(stretches) {}
  std::string Describe() const override { return "mode recorder"; }
  absl::Status Prepare(const ReplayPlan& plan, const StoragePlan&) override {
    ops_ = plan.ops.size();
    return absl::OkStatus();
  }
  absl::Status BeginIteration(IterationTimingMode mode) override {
    modes.push_back(mode);
    return absl::OkStatus();
  }
  absl::Status Issue(size_t) override { return absl::OkStatus(); }
  absl::Status EndIteration(IterationTiming* timing) override {
    timing->ops.assign(ops_, OpTiming{});
    const bool every_op = modes.back() == IterationTimingMode::kEveryOp;
    for (size_t i = 0; i < ops_; ++i) {
      timing->ops[i] = every_op ? OpTiming{int64_t(i) * 7000, 7000}
                                : OpTiming{int64_t(i + 1) * 5000, 0};
    }
    timing->total_ns = int64_t(ops_) * (every_op ? 7000 : 5000);
    return absl::OkStatus();
  }
  bool OpTimingStretchesRun() const override { return stretches_; }

  std::vector<IterationTimingMode> modes;

 private:
  bool stretches_;
  size_t ops_ = 0;
};

ReplayPlan ChainPlan() {
  std::vector<ChakraProtoMsg::Node> nodes = {
      testing::CompNode(1, "k1", 10, {}, /*host=*/false, 7),
      testing::CompNode(2, "k2", 10, {1}, /*host=*/false, 7),
      testing::CompNode(3, "k3", 10, {2}, /*host=*/false, 7)};
  auto plan = BuildReplayPlan(
      NodeModel::FromGraph(Graph::Build(testing::Metadata(), nodes)),
      PlanOptions{});
  EXPECT_TRUE(plan.ok()) << plan.status();
  return *std::move(plan);
}

TEST(ReplayRunnerTest, StretchingBackendTimesStepAndOpsApart) {
  ASSERT_NE(testing::World(), nullptr);
  const ReplayPlan plan = ChainPlan();
  ModeRecordingBackend backend(/*stretches=*/true);
  ASSERT_TRUE(backend.Prepare(plan, StoragePlan{}).ok());
  RunOptions options;
  options.warmup_iterations = 1;
  options.timed_iterations = 2;
  auto timings = RunReplay(plan, &backend, *testing::World(), options);
  ASSERT_TRUE(timings.ok()) << timings.status();
  using M = IterationTimingMode;
  EXPECT_EQ(backend.modes,
            (std::vector<M>{M::kStep, M::kStep, M::kStep, M::kEveryOp}));
  ASSERT_EQ(timings->steps.size(), 2u);
  ASSERT_EQ(timings->ops.size(), 1u);
  const ReplayReport report = BuildReport(plan, *timings, 1);
  EXPECT_EQ(report.op_timing_iterations, 1);
  EXPECT_DOUBLE_EQ(report.mean_iteration_us, 15.0);  // 3 ops x 5 us, kStep
  ASSERT_EQ(report.ops.size(), 3u);
  for (const OpStat& s : report.ops) EXPECT_EQ(s.mean_ns, 7000);  // kEveryOp
}

TEST(ReplayRunnerTest, InStepTimingOrAFreeTimerTimesEveryIteration) {
  ASSERT_NE(testing::World(), nullptr);
  const ReplayPlan plan = ChainPlan();
  for (bool stretches : {false, true}) {
    ModeRecordingBackend backend(stretches);
    ASSERT_TRUE(backend.Prepare(plan, StoragePlan{}).ok());
    RunOptions options;
    options.warmup_iterations = 0;
    options.timed_iterations = 2;
    options.separate_op_timing = !stretches;  // stretching: --op-timing in-step
    auto timings = RunReplay(plan, &backend, *testing::World(), options);
    ASSERT_TRUE(timings.ok()) << timings.status();
    EXPECT_EQ(backend.modes, (std::vector<IterationTimingMode>(
                                 2, IterationTimingMode::kEveryOp)));
    EXPECT_TRUE(timings->ops.empty());
    EXPECT_EQ(&timings->op_iterations(), &timings->steps);
  }
}

}  // namespace
}  // namespace et::replay
