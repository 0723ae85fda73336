// Unit tests of KeepPlan (converter/graph/keep_plan.h), the
// operator-granularity policy: which ops become nodes, which are folded into
// which node, which are containers and who stands in for them, callers, steps
// and host-op counts. The trace is a small 1.0.1 ET written here and read by
// the converter's own parse stages, so the plan sees exactly the OpTable a
// conversion would.
#include "converter/graph/keep_plan.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "converter/common/trace_text_source.h"
#include "converter/et/et_node_parser.h"
#include "converter/et/pipelined_parse.h"
#include "converter/graph/collective_resolver.h"
#include "converter/graph/op_table.h"
#include "gtest/gtest.h"

namespace et::convert {
namespace {

struct Op {
  uint64_t id;
  uint64_t parent;
  std::string name;
  int64_t tid = 1;
};

// The call tree (ids are start order, as PyTorch numbers them):
//   1 [pytorch|profiler|execution_graph|thread]   profiler root
//     2 ProfilerStep#3                            container (kOther)
//       3 aten::linear                            GEMM: folds 4, 5
//         4 aten::t
//         5 aten::addmm
//       6 c10d::allreduce_                        collective call: folds 7
//         7 gloo:all_reduce
//       9 MyBlock                                 container: stands in 11
//         10 aten::relu
//         11 aten::add
//   8 autograd::engine::evaluate_function: X      tid 2, outside step 3's tree
//                                                 but started inside it (id 8)
//   12 aten::mul                                  after the step: no step
const std::vector<Op>& Ops() {
  static const auto* ops = new std::vector<Op>{
      {1, 0, "[pytorch|profiler|execution_graph|thread]"},
      {2, 1, "ProfilerStep#3"},
      {3, 2, "aten::linear"},
      {4, 3, "aten::t"},
      {5, 3, "aten::addmm"},
      {6, 2, "c10d::allreduce_"},
      {7, 6, "gloo:all_reduce"},
      {8, 0, "autograd::engine::evaluate_function: X", 2},
      {9, 2, "MyBlock"},
      {10, 9, "aten::relu"},
      {11, 9, "aten::add"},
      {12, 1, "aten::mul"},
  };
  return *ops;
}

std::string TraceJson() {
  std::vector<std::string> nodes;
  for (const Op& op : Ops()) {
    // The collective's records share tensor 100 and carry the c10d call's
    // positional arguments; the other ops need none.
    const bool comm = op.id == 6 || op.id == 7;
    nodes.push_back(absl::StrFormat(
        R"({"name": "%s", "id": %d, "parent": %d, "tid": %d, "op_schema": "",)"
        R"( "inputs": %s, "input_shapes": %s, "input_types": %s,)"
        R"( "outputs": [], "output_shapes": [], "output_types": []})",
        op.name, op.id, op.parent, op.tid,
        comm ? R"([[[100, 101, 0, 16, 4, "cpu"]], "<Object>", -1])" : "[]",
        comm ? "[[[16]], [], []]" : "[]",
        comm ? R"(["GenericList[Tensor(float)]", "Object", "Int"])" : "[]"));
  }
  return absl::StrFormat(R"({"schema": "1.0.1", "pid": 1, "nodes": [%s]})",
                         absl::StrJoin(nodes, ",\n"));
}

class KeepPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per process: ctest runs each test of this binary in its own, at once.
    path_ = ::testing::TempDir() + "/keep_plan_test." +
            std::to_string(getpid()) + ".json";
    std::ofstream(path_) << TraceJson();
    auto pool = std::make_unique<StringPool>();
    EtNodeParser parser(path_, pool.get());
    ParsedTrace parsed;
    ASSERT_TRUE(ParseTracePipelined(
                    path_, &parser, &text_, [](int64_t) {},
                    [](const auto&) { return absl::OkStatus(); }, &parsed)
                    .ok());
    table_.set_pool(std::move(pool));
    ASSERT_TRUE(
        table_.Build(path_, std::move(parsed.ops), std::move(parsed.tensors))
            .ok());
    ASSERT_TRUE(comms_.Resolve(table_, {}, &text_).ok());
  }

  // The op index of ET id `id`.
  uint32_t Op(uint64_t id) const {
    auto i = table_.Find(id);
    EXPECT_TRUE(i.has_value()) << id;
    return i.value_or(kNoOp);
  }
  // The ET id of the op standing in for `id`, or 0 when none does.
  uint64_t StandIn(const KeepPlan& plan, uint64_t id) const {
    const uint32_t s = plan.stand_in(Op(id));
    return s == kNoOp ? 0 : table_.op(s).id;
  }
  uint64_t Caller(const KeepPlan& plan, uint64_t id) const {
    const uint32_t c = plan.caller(Op(id));
    return c == kNoOp ? 0 : table_.op(c).id;
  }
  std::vector<uint64_t> NodeIds(const KeepPlan& plan) const {
    std::vector<uint64_t> ids;
    for (uint32_t i = 0; i < table_.size(); ++i) {
      if (plan.is_node(i)) ids.push_back(table_.op(i).id);
    }
    return ids;
  }

  std::string path_;
  TraceTextSource text_;
  OpTable table_;
  CollectiveResolver comms_;
};

TEST_F(KeepPlanTest, SimulationKeepsCostedOpsCollectiveCallsAndLeaves) {
  KeepPlan plan;
  plan.Build(table_, comms_, Granularity::kSimulation);
  // Not nodes: the profiler root (1), the containers (2, 9), the GEMM's
  // children (4, 5) and the collective's work record (7).
  EXPECT_EQ(NodeIds(plan), (std::vector<uint64_t>{3, 6, 8, 10, 11, 12}));
}

TEST_F(KeepPlanTest, FoldedOpsStandInAsTheNodeThatCarriesTheirTime) {
  KeepPlan plan;
  plan.Build(table_, comms_, Granularity::kSimulation);
  EXPECT_EQ(StandIn(plan, 4), 3u);    // aten::t under aten::linear
  EXPECT_EQ(StandIn(plan, 5), 3u);    // aten::addmm under aten::linear
  EXPECT_EQ(StandIn(plan, 7), 6u);    // the gloo record under its c10d call
  EXPECT_EQ(StandIn(plan, 10), 10u);  // nodes stand for themselves
  // A container is represented by the last host node of its subtree.
  EXPECT_EQ(StandIn(plan, 9), 11u);
  EXPECT_EQ(StandIn(plan, 2), 11u);
  // Nothing stands in for the profiler root: deps on it are counted, not
  // written.
  EXPECT_EQ(StandIn(plan, 1), 0u);
  EXPECT_EQ(plan.skipped(),
            (std::map<std::string, int64_t>{
                {"child of an op that carries its cost, folded into it", 2},
                {"container, its time is carried by its children", 2},
                {"profiler root", 1},
                {"record of a collective, folded into its call", 1},
            }));
}

TEST_F(KeepPlanTest, CallersSkipContainersAndRoots) {
  KeepPlan plan;
  plan.Build(table_, comms_, Granularity::kSimulation);
  // 10's parent 9 and grandparent 2 are containers, 1 is the root: no caller.
  EXPECT_EQ(Caller(plan, 10), 0u);
  EXPECT_EQ(Caller(plan, 3), 0u);
  // A folded op's caller is the node it is folded into.
  EXPECT_EQ(Caller(plan, 5), 3u);
  EXPECT_EQ(Caller(plan, 7), 6u);
}

TEST_F(KeepPlanTest, HostOpsCountWhatEachNodeStandsFor) {
  KeepPlan plan;
  plan.Build(table_, comms_, Granularity::kSimulation);
  EXPECT_EQ(plan.host_ops(Op(3)), 3u);  // itself, aten::t, aten::addmm
  EXPECT_EQ(plan.host_ops(Op(6)), 2u);  // the call and its work record
  // aten::add stands in for both containers above it.
  EXPECT_EQ(plan.host_ops(Op(11)), 3u);
  EXPECT_EQ(plan.host_ops(Op(10)), 1u);
  EXPECT_EQ(plan.host_ops(Op(9)), 0u);  // not a node
  EXPECT_EQ(plan.host_ops(Op(1)), 0u);  // the profiler root counts for nobody
}

TEST_F(KeepPlanTest, StepsComeFromTheSpanOrFromTheIdRange) {
  KeepPlan plan;
  plan.Build(table_, comms_, Granularity::kSimulation);
  EXPECT_EQ(plan.step(Op(2)), 3);
  EXPECT_EQ(plan.step(Op(5)), 3);
  EXPECT_EQ(plan.step(Op(10)), 3);
  // Another thread's op is not under the span but started while it was open.
  EXPECT_EQ(plan.step(Op(8)), 3);
  EXPECT_EQ(plan.step(Op(12)), -1);  // started after the span's last op
  EXPECT_EQ(plan.step(Op(1)), -1);
}

TEST_F(KeepPlanTest, KindsComeFromTheOpName) {
  KeepPlan plan;
  plan.Build(table_, comms_, Granularity::kSimulation);
  EXPECT_EQ(plan.kind(Op(3)), OpKind::kGemm);
  EXPECT_EQ(plan.kind(Op(5)), OpKind::kGemm);
  EXPECT_EQ(plan.kind(Op(4)), OpKind::kView);
  EXPECT_EQ(plan.kind(Op(9)), OpKind::kOther);
}

TEST_F(KeepPlanTest, AllKeepsEveryOpAndFoldsNothing) {
  KeepPlan plan;
  plan.Build(table_, comms_, Granularity::kAll);
  std::vector<uint64_t> all;
  for (const auto& op : Ops()) all.push_back(op.id);
  EXPECT_EQ(NodeIds(plan), all);
  EXPECT_TRUE(plan.skipped().empty());
  EXPECT_EQ(StandIn(plan, 4), 4u);
  EXPECT_EQ(Caller(plan, 4), 3u);
  EXPECT_EQ(Caller(plan, 10), 9u);
  EXPECT_EQ(Caller(plan, 2), 1u);
  EXPECT_EQ(plan.host_ops(Op(3)), 1u);  // nothing folded into it
  EXPECT_EQ(plan.host_ops(Op(1)),
            1u);  // here the root is a node like any other
}

TEST(KeepPlanNamesTest, ProfilerRootsAndProcessGroupInit) {
  EXPECT_TRUE(IsProfilerRootName("[pytorch|profiler|execution_graph|thread]"));
  EXPECT_TRUE(IsProfilerRootName("[pytorch|profiler|execution_trace|process]"));
  EXPECT_FALSE(IsProfilerRootName("pytorch|profiler"));
  EXPECT_TRUE(IsProcessGroupInitName("## process_group:init ##"));
  EXPECT_FALSE(IsProcessGroupInitName("## process_group:init"));
}

}  // namespace
}  // namespace et::convert
