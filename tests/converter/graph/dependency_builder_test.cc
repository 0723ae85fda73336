// Unit tests of DependencyBuilder (converter/graph/dependency_builder.h) on
// small hand-made 1.0.1 traces, one rule per test: control deps on the caller
// and the previous node of the thread (or GPU stream), a wait on the collective
// it waits for, data deps on the last writer that has ended, deps redirected to
// the node standing in for a folded op, linked-trace deps on absent ids
// counted, and a cycle through linked-trace deps named in the error.
#include "converter/graph/dependency_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/converter/graph/op_table_test_util.h"

namespace et::convert {
namespace {

using testing::EtNode;
using testing::FloatTensor;
using testing::Node;
using testing::ParsedOps;
using Ids = std::vector<uint64_t>;

const EtNode kRoot = Node(1, 0, "[pytorch|profiler|execution_graph|thread]");

// An op reading tensor `in` and writing tensor `out` (0: none).
EtNode Op(uint64_t id, uint64_t parent, const std::string& name, int64_t in,
          int64_t out) {
  EtNode n = Node(id, parent, name);
  if (in != 0) {
    n.inputs = "[" + FloatTensor(in, 16) + "]";
    n.input_shapes = "[[16]]";
    n.input_types = R"x(["Tensor(float)"])x";
  }
  if (out != 0) {
    n.outputs = "[" + FloatTensor(out, 16) + "]";
    n.output_shapes = "[[16]]";
    n.output_types = R"x(["Tensor(float)"])x";
  }
  return n;
}

// record_param_comms of a collective ([tensors, seq, pg, 0, name]) or of a
// wait ([seq, pg, 0, "wait"]).
EtNode ParamComms(uint64_t id, int64_t seq, bool wait) {
  EtNode n = Node(id, 1, "record_param_comms");
  if (wait) {
    n.inputs = absl::StrFormat(R"([%d, ["0", "default_pg"], 0, "wait"])", seq);
    n.input_shapes = "[[], [[], []], [], []]";
    n.input_types = R"(["Int", "Tuple[String,String]", "Int", "String"])";
  } else {
    n.inputs =
        absl::StrFormat(R"([[%s], %d, ["0", "default_pg"], 0, "allreduce"])",
                        FloatTensor(100 + seq, 16), seq);
    n.input_shapes = "[[[16]], [], [[], []], [], []]";
    n.input_types =
        R"(["GenericList[Tensor(float)]", "Int", "Tuple[String,String]",)"
        R"( "Int", "String"])";
  }
  return n;
}

class DependencyBuilderTest : public ::testing::Test {
 protected:
  absl::Status Build(const std::vector<EtNode>& nodes,
                     Granularity granularity = Granularity::kSimulation) {
    ops_.Parse(::testing::UnitTest::GetInstance()->current_test_info()->name(),
               nodes);
    EXPECT_TRUE(comms_.Resolve(ops_.table(), {}, ops_.text()).ok());
    plan_.Build(ops_.table(), comms_, granularity);
    return builder_.Build(ops_.path(), ops_.table(), comms_, plan_, &deps_);
  }
  const Ids& Ctrl(uint64_t id) { return deps_[ops_.Op(id)].ctrl; }
  const Ids& Data(uint64_t id) { return deps_[ops_.Op(id)].data; }

  ParsedOps ops_;
  CollectiveResolver comms_;
  KeepPlan plan_;
  DependencyBuilder builder_;
  std::vector<NodeDeps> deps_;
};

TEST_F(DependencyBuilderTest, CtrlDepsOnCallerAndPreviousOpOfTheThread) {
  // kAll: 2 calls 3; 4 follows 3 on thread 1; 5 runs on thread 2.
  EtNode other_thread = Op(5, 1, "aten::sub", 0, 0);
  other_thread.tid = 2;
  ASSERT_TRUE(
      Build({kRoot, Op(2, 1, "MyBlock", 0, 0), Op(3, 2, "aten::relu", 0, 0),
             Op(4, 1, "aten::add", 0, 0), other_thread},
            Granularity::kAll)
          .ok());
  EXPECT_EQ(Ctrl(3), (Ids{2}));     // caller; also the thread's previous op
  EXPECT_EQ(Ctrl(4), (Ids{1, 3}));  // caller (the root node in kAll), issue
  EXPECT_EQ(Ctrl(5), (Ids{1}));     // only its caller: thread 2 is new
}

TEST_F(DependencyBuilderTest, DataDepOnTheLastWriterOnly) {
  // 2 writes t100, 3 reads and rewrites it, 4 reads it: 4 needs only 3.
  ASSERT_TRUE(
      Build({kRoot, Op(2, 1, "aten::relu", 0, 100),
             Op(3, 1, "aten::add", 100, 100), Op(4, 1, "aten::mul", 100, 0)})
          .ok());
  EXPECT_EQ(Data(3), (Ids{2}));
  EXPECT_EQ(Data(4), (Ids{3}));
  EXPECT_EQ(builder_.stats().unresolved, 0);
}

TEST_F(DependencyBuilderTest, OutputsArePublishedWhenTheSubtreeEnds) {
  // MyBlock (2) writes t100; its child 3 reads t100 while 2 is still running,
  // so it does not depend on 2; 4, after the block, does.
  ASSERT_TRUE(
      Build({kRoot, Op(2, 1, "MyBlock", 0, 100), Op(3, 2, "aten::relu", 100, 0),
             Op(4, 1, "aten::mul", 100, 0)},
            Granularity::kAll)
          .ok());
  EXPECT_TRUE(Data(3).empty());
  EXPECT_EQ(Data(4), (Ids{2}));
}

TEST_F(DependencyBuilderTest, DepOnAFoldedOpPointsAtItsStandIn) {
  // aten::linear (2) is one node with aten::addmm (3) folded into it: relu's
  // data dep on addmm's output is a dep on linear.
  ASSERT_TRUE(
      Build({kRoot, Op(2, 1, "aten::linear", 0, 0),
             Op(3, 2, "aten::addmm", 0, 100), Op(4, 1, "aten::relu", 100, 0)})
          .ok());
  ASSERT_FALSE(plan_.is_node(ops_.Op(3)));
  EXPECT_EQ(Data(4), (Ids{2}));
  EXPECT_EQ(Ctrl(4), (Ids{2}));  // issue order, also through the stand-in
}

TEST_F(DependencyBuilderTest, WaitDependsOnTheCollectiveWithItsSeq) {
  // Waits 4 (seq 7) and 5 (seq 8): only 4 has a collective to wait for.
  ASSERT_TRUE(
      Build({kRoot, ParamComms(2, 7, false), Op(3, 1, "aten::relu", 0, 0),
             ParamComms(4, 7, true), ParamComms(5, 8, true)})
          .ok());
  EXPECT_EQ(Ctrl(4), (Ids{2, 3}));  // the collective, and issue order
  EXPECT_EQ(Ctrl(5), (Ids{4}));     // issue order only
}

TEST_F(DependencyBuilderTest, GpuNodesFollowTheirStream) {
  // Kernels 3 and 5 share stream 7; 6 runs on stream 8.
  EtNode k3 = Op(3, 2, "k3", 0, 0), k5 = Op(5, 4, "k5", 0, 0),
         k6 = Op(6, 4, "k6", 0, 0);
  k3.extra = k5.extra = R"("stream": 7)";
  k6.extra = R"("stream": 8)";
  ASSERT_TRUE(Build({kRoot, Op(2, 1, "aten::relu", 0, 0), k3,
                     Op(4, 1, "aten::add", 0, 0), k5, k6})
                  .ok());
  EXPECT_EQ(Ctrl(3), (Ids{2}));     // launcher
  EXPECT_EQ(Ctrl(5), (Ids{3, 4}));  // previous on stream 7, launcher
  EXPECT_EQ(Ctrl(6), (Ids{4}));     // first on stream 8
  EXPECT_EQ(Ctrl(4), (Ids{2}));     // a kernel is not in thread order
}

TEST_F(DependencyBuilderTest, LinkedDepOnAnAbsentIdIsCounted) {
  EtNode n = Op(3, 1, "aten::add", 0, 0);
  n.extra = R"("sync_dep": [99])";
  ASSERT_TRUE(Build({kRoot, Op(2, 1, "aten::relu", 0, 0), n}).ok());
  EXPECT_EQ(builder_.stats().missing_targets, 1);
  EXPECT_EQ(builder_.stats().unresolved, 1);
  EXPECT_EQ(Ctrl(3), (Ids{2}));
}

TEST_F(DependencyBuilderTest, CycleThroughLinkedDepsIsNamed) {
  // 3 follows 2 on the thread, and 2 claims to wait for 3.
  EtNode n = Op(2, 1, "aten::relu", 0, 0);
  n.extra = R"("inter_thread_dep": [3])";
  const absl::Status s = Build({kRoot, n, Op(3, 1, "aten::add", 0, 0)});
  ASSERT_FALSE(s.ok());
  const std::string message(s.message());
  EXPECT_NE(message.find(ops_.path()), std::string::npos) << message;
  EXPECT_NE(message.find("dependency cycle through nodes"), std::string::npos)
      << message;
  EXPECT_TRUE(message.find("2 <- 3") != std::string::npos ||
              message.find("3 <- 2") != std::string::npos)
      << message;
}

TEST_F(DependencyBuilderTest, ForwardLinkedDepWithoutCycleIsAccepted) {
  // 2 on thread 1 waits for 3 on thread 2: forward in ids, but acyclic.
  EtNode n = Op(2, 1, "aten::relu", 0, 0);
  n.extra = R"("inter_thread_dep": [3])";
  EtNode other = Op(3, 1, "aten::add", 0, 0);
  other.tid = 2;
  ASSERT_TRUE(Build({kRoot, n, other}).ok());
  EXPECT_EQ(Ctrl(2), (Ids{3}));
}

}  // namespace
}  // namespace et::convert
