// The replay's issue order on a real GPU recording (tests/data/h100/mlp1024,
// converted with its Kineto trace): a backend that runs in real time issues
// ops one by one in plan order, so a kernel must come when its launcher
// launched it in the recording, not after every host op that could go first.
// Ordered by id alone, every kernel (ids after the host ops) came after all
// host ops: the CUDA replay ran all three steps' host time before the first
// kernel (+8% to +97% against the true step on the H100).
#include <algorithm>
#include <map>
#include <string>

#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "replay/replay_plan.h"
#include "replay_test_graphs.h"

namespace et::replay {
namespace {

absl::StatusOr<ReplayPlan> Mlp1024Plan() {
  convert::ConvertOptions options;
  options.kineto_path =
      std::string(ET_TEST_DATA) + "/h100/mlp1024_kineto.json.gz";
  const std::string out = testing::TempEtPath("issue_order_mlp1024.et");
  auto summary = convert::ConvertFile(
      std::string(ET_TEST_DATA) + "/h100/mlp1024_et.json.gz", out, options);
  if (!summary.ok()) return summary.status();
  auto graph = LoadGraph(out);
  if (!graph.ok()) return graph.status();
  return BuildReplayPlan(NodeModel::FromGraph(*graph), PlanOptions{});
}

bool OnDevice(const ReplayPlan& plan, const ReplayOp& op) {
  return plan.queues[op.queue].kind == ReplayQueueKind::kDeviceStream;
}

TEST(IssueOrderTest, KernelsAreIssuedWhenTheirLauncherLaunchedThem) {
  auto plan = Mlp1024Plan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Host ops by recorded start: where the first one starting after a time is.
  std::map<int64_t, size_t> host_position_by_start;
  for (size_t i = 0; i < plan->ops.size(); ++i) {
    const ReplayOp& op = plan->ops[i];
    if (!OnDevice(*plan, op) && op.recorded_start_ns >= 0)
      host_position_by_start.emplace(op.recorded_start_ns, i);
  }
  int kernels_checked = 0;
  for (size_t i = 0; i < plan->ops.size(); ++i) {
    const ReplayOp& op = plan->ops[i];
    if (!OnDevice(*plan, op)) continue;
    for (uint32_t w : plan->waits(i)) {
      const ReplayOp& launcher = plan->ops[w];
      if (OnDevice(*plan, launcher) || launcher.recorded_start_ns < 0) continue;
      // Every host op that started after the launcher ended comes later.
      const int64_t launcher_end =
          launcher.recorded_start_ns + launcher.recorded_ns;
      auto later = host_position_by_start.upper_bound(launcher_end);
      if (later != host_position_by_start.end()) {
        EXPECT_LT(i, later->second)
            << "node " << op.node_id << " is issued after host node "
            << plan->ops[later->second].node_id
            << ", which started after its launcher " << launcher.node_id
            << " ended";
      }
      ++kernels_checked;
    }
  }
  EXPECT_GT(kernels_checked, 50);
}

TEST(IssueOrderTest, EachStreamIssuesInRecordedOrder) {
  auto plan = Mlp1024Plan();
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::map<int, int64_t> last_start_by_queue;
  int device_ops = 0;
  for (const ReplayOp& op : plan->ops) {
    if (!OnDevice(*plan, op) || op.recorded_start_ns < 0) continue;
    auto [it, first] =
        last_start_by_queue.emplace(op.queue, op.recorded_start_ns);
    if (!first) {
      EXPECT_GE(op.recorded_start_ns, it->second) << "node " << op.node_id;
      it->second = op.recorded_start_ns;
    }
    ++device_ops;
  }
  EXPECT_GT(device_ops, 50);
}

}  // namespace
}  // namespace et::replay
