// Unit tests of CollectiveResolver (converter/graph/collective_resolver.h) on
// small hand-made 1.0.1 traces, one rule per test: nested records of one
// collective become one record owned by the outermost call, standalone work
// records fold into the call sharing their tensor, waits are records of their
// own with the sequence number they wait for, the process group comes from a
// name, a (name, desc) pair or a 1.0.2 backend id, and a collective is on the
// host when gloo runs it or its tensors are all in host memory.
#include "converter/graph/collective_resolver.h"

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

const EtNode kRoot = Node(1, 0, "[pytorch|profiler|execution_graph|thread]");

// A c10d call or work record with one 16-float tensor list argument, then
// `extra_values` (with their `extra_types`) after a process-group object.
EtNode Call(uint64_t id, uint64_t parent, const std::string& name,
            int64_t tensor, const std::string& extra_values = "",
            const std::string& extra_types = "") {
  EtNode n = Node(id, parent, name);
  n.inputs =
      "[[" + FloatTensor(tensor, 16) + "], \"<Object>\"" + extra_values + "]";
  n.input_shapes = "[[[16]], []]";
  n.input_types =
      "[\"GenericList[Tensor(float)]\", \"Object\"" + extra_types + "]";
  return n;
}

// record_param_comms of a collective: [tensors, seq, pg, 0, name].
EtNode ParamComms(uint64_t id, uint64_t parent, int64_t tensor, int64_t seq,
                  const std::string& pg_value, const std::string& pg_type,
                  const std::string& collective = "allreduce") {
  EtNode n = Node(id, parent, "record_param_comms");
  n.inputs =
      absl::StrFormat(R"([[%s], %d, %s, 0, "%s"])", FloatTensor(tensor, 16),
                      seq, pg_value, collective);
  n.input_shapes = "[[[16]], [], [], [], []]";
  n.input_types = absl::StrFormat(
      R"(["GenericList[Tensor(float)]", "Int", "%s", "Int", "String"])",
      pg_type);
  return n;
}

// record_param_comms of a wait: [seq, pg, 0, "wait"], no tensors.
EtNode ParamCommsWait(uint64_t id, uint64_t parent, int64_t seq) {
  EtNode n = Node(id, parent, "record_param_comms");
  n.inputs = absl::StrFormat(R"([%d, ["0", "default_pg"], 0, "wait"])", seq);
  n.input_shapes = "[[], [[], []], [], []]";
  n.input_types = R"(["Int", "Tuple[String,String]", "Int", "String"])";
  return n;
}

class CollectiveResolverTest : public ::testing::Test {
 protected:
  void Resolve(const std::vector<EtNode>& nodes,
               const std::vector<ProcessGroup>& groups = {}) {
    ops_.Parse(::testing::UnitTest::GetInstance()->current_test_info()->name(),
               nodes);
    const absl::Status s = comms_.Resolve(ops_.table(), groups, ops_.text());
    ASSERT_TRUE(s.ok()) << s;
  }
  const CommRecord& RecordOf(uint64_t id) {
    const int32_t r = comms_.record_of(ops_.Op(id));
    EXPECT_GE(r, 0) << id;
    return comms_.records()[r < 0 ? 0 : r];
  }

  ParsedOps ops_;
  CollectiveResolver comms_;
};

TEST_F(CollectiveResolverTest, NestedRecordsAreOneCollectiveOwnedByTheCall) {
  Resolve({kRoot, Call(2, 1, "c10d::allreduce_", 100),
           ParamComms(3, 2, 100, 7, R"(["0", "default_pg"])",
                      "Tuple[String,String]"),
           Call(4, 3, "nccl:all_reduce", 100)});
  ASSERT_EQ(comms_.records().size(), 1u);
  const CommRecord& r = comms_.records()[0];
  EXPECT_EQ(r.owner, ops_.Op(2));
  EXPECT_EQ(r.members, (std::vector<uint32_t>{ops_.Op(3), ops_.Op(4)}));
  EXPECT_TRUE(comms_.is_owner(ops_.Op(2)));
  EXPECT_FALSE(comms_.is_owner(ops_.Op(4)));
  EXPECT_EQ(comms_.record_of(ops_.Op(4)), 0);
  EXPECT_EQ(comms_.record_of(ops_.Op(1)), -1);
  EXPECT_EQ(r.kind, CommKind::kCollective);
  EXPECT_EQ(r.type, ChakraProtoMsg::ALL_REDUCE);
  EXPECT_EQ(r.size_bytes, 64);  // 16 floats
  EXPECT_EQ(r.dtype, "float32");
  EXPECT_EQ(r.seq, 7);
  EXPECT_EQ(r.pg_name, "0");
}

TEST_F(CollectiveResolverTest, StandaloneWorkRecordFoldsIntoCallSharingTensor) {
  // The gloo work record hangs under the root, not under its call. It shares
  // tensor 100 with the first all-reduce, not the later one (tensor 200).
  Resolve({kRoot, Call(2, 1, "c10d::allreduce_", 100),
           Call(3, 1, "c10d::allreduce_", 200),
           Call(4, 1, "gloo:all_reduce", 100)});
  ASSERT_EQ(comms_.records().size(), 2u);
  EXPECT_EQ(comms_.record_of(ops_.Op(4)), comms_.record_of(ops_.Op(2)));
  EXPECT_EQ(RecordOf(2).members, (std::vector<uint32_t>{ops_.Op(4)}));
  EXPECT_TRUE(RecordOf(3).members.empty());
}

TEST_F(CollectiveResolverTest, WorkRecordOfAnotherTypeStaysAlone) {
  Resolve({kRoot, Call(2, 1, "c10d::allreduce_", 100),
           Call(3, 1, "gloo:broadcast", 100)});
  ASSERT_EQ(comms_.records().size(), 2u);
  EXPECT_TRUE(comms_.is_owner(ops_.Op(3)));
  EXPECT_EQ(RecordOf(3).type, ChakraProtoMsg::BROADCAST);
}

TEST_F(CollectiveResolverTest, ACallTakesOneWorkRecord) {
  // The second work record finds the call already has one.
  Resolve({kRoot, Call(2, 1, "c10d::allreduce_", 100),
           Call(3, 1, "gloo:all_reduce", 100),
           Call(4, 1, "gloo:all_reduce", 100)});
  ASSERT_EQ(comms_.records().size(), 2u);
  EXPECT_EQ(comms_.record_of(ops_.Op(3)), comms_.record_of(ops_.Op(2)));
  EXPECT_TRUE(comms_.is_owner(ops_.Op(4)));
}

// The same call on a host tensor.
EtNode OnCpu(EtNode n) {
  for (size_t pos; (pos = n.inputs.find("cuda:0")) != std::string::npos;)
    n.inputs.replace(pos, 6, "cpu");
  return n;
}

TEST_F(CollectiveResolverTest,
       OnHostWhenGlooRunsItOrItsTensorsAreInHostMemory) {
  Resolve({kRoot, Call(2, 1, "c10d::allreduce_", 100),
           Call(3, 2, "nccl:all_reduce", 100),
           Call(4, 1, "c10d::allreduce_", 200),
           Call(5, 4, "gloo:all_reduce", 200),
           OnCpu(Call(6, 1, "c10d::broadcast_", 300))});
  ASSERT_EQ(comms_.records().size(), 3u);
  EXPECT_FALSE(RecordOf(2).on_host);  // NCCL on a device tensor
  EXPECT_TRUE(RecordOf(4).on_host);   // gloo's record, whatever the tensor
  EXPECT_TRUE(RecordOf(6).on_host);   // host tensors only
}

TEST_F(CollectiveResolverTest, WaitIsItsOwnRecordWithTheSeqItWaitsFor) {
  Resolve({kRoot,
           ParamComms(2, 1, 100, 7, R"(["0", "default_pg"])",
                      "Tuple[String,String]"),
           ParamCommsWait(3, 1, 7)});
  ASSERT_EQ(comms_.records().size(), 2u);
  const CommRecord& collective = RecordOf(2);
  const CommRecord& wait = RecordOf(3);
  EXPECT_EQ(collective.kind, CommKind::kCollective);
  EXPECT_EQ(collective.seq, 7);
  EXPECT_EQ(collective.size_bytes, 64);
  EXPECT_EQ(wait.kind, CommKind::kWait);
  EXPECT_EQ(wait.seq, 7);
  EXPECT_EQ(wait.pg_name, "0");
  // A wait moves no data.
  EXPECT_EQ(wait.size_bytes, -1);
  EXPECT_EQ(wait.dtype, "");
}

TEST_F(CollectiveResolverTest, ProcessGroupFromBackendIdOrName) {
  ProcessGroup tp;
  tp.name = "3";
  tp.backend_id = 12345;
  Resolve({kRoot, ParamComms(2, 1, 100, 7, "12345", "Int"),
           ParamComms(3, 1, 200, 8, R"("5")", "String"),
           ParamComms(4, 1, 300, 9, "999", "Int")},
          {tp});
  ASSERT_EQ(comms_.records().size(), 3u);
  EXPECT_EQ(RecordOf(2).pg_name, "3");  // 1.0.2 backend id -> group name
  EXPECT_EQ(RecordOf(3).pg_name, "5");  // the name itself
  EXPECT_EQ(RecordOf(4).pg_name, "");   // an id no group has
  EXPECT_EQ(RecordOf(4).seq, 9);
}

TEST_F(CollectiveResolverTest, PeerTagAndRootFromC10dArguments) {
  Resolve({kRoot, Call(2, 1, "c10d::send", 100, ", 3, 7", R"(, "Int", "Int")"),
           Call(3, 1, "c10d::broadcast_", 200, ", 2, 0", R"(, "Int", "Int")"),
           Call(4, 1, "c10d::reduce_", 300, ", 0, 1", R"(, "Int", "Int")")});
  ASSERT_EQ(comms_.records().size(), 3u);
  EXPECT_EQ(RecordOf(2).kind, CommKind::kSend);
  EXPECT_EQ(RecordOf(2).peer, 3);
  EXPECT_EQ(RecordOf(2).tag, 7);
  EXPECT_EQ(RecordOf(3).root, 2);  // broadcast_(tensors, pg, root, ...)
  EXPECT_EQ(RecordOf(4).root, 1);  // reduce_(tensors, pg, op, root, ...)
  EXPECT_EQ(RecordOf(4).peer, -1);
}

TEST(NcclKernelNameTest, ParsesTheCollectiveOfAKernelName) {
  EXPECT_TRUE(IsNcclKernelName("ncclDevKernel_AllGather_RING_LL"));
  EXPECT_TRUE(IsNcclKernelName("ncclKernel_AllReduce_RING_LL_Sum_float"));
  EXPECT_FALSE(IsNcclKernelName("gemm_kernel"));
  auto ag = ParseNcclKernelName("ncclDevKernel_AllGather_RING_LL");
  ASSERT_TRUE(ag.has_value());
  EXPECT_EQ(ag->type, ChakraProtoMsg::ALL_GATHER);
  auto p2p = ParseNcclKernelName("ncclDevKernel_SendRecv");
  ASSERT_TRUE(p2p.has_value());
  EXPECT_EQ(p2p->kind, CommKind::kSend);
  EXPECT_FALSE(ParseNcclKernelName("cutlass_gemm").has_value());
}

}  // namespace
}  // namespace et::convert
