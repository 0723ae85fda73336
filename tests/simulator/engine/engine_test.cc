// Engine semantics on hand-built graphs and on reference Chakra traces:
// dependencies, resources, overlap, rendezvous, deadlock reports, rank
// symmetry, what-if scaling.
#include "simulator/engine/engine.h"

#include <algorithm>
#include <memory>

#include "gtest/gtest.h"
#include "model/process_group.h"
#include "simulator/comm/collective_cost_model.h"
#include "simulator/report/report.h"
#include "simulator/simulation.h"
#include "tests/simulator/sim_test_graphs.h"

namespace et::sim {
namespace {

using testing::Collective;
using testing::Compute;
using testing::MakeGraph;

struct Run {
  std::vector<std::unique_ptr<NodeModel>> models;
  std::vector<std::unique_ptr<RankProgram>> programs;
  std::vector<RankClass> classes;
  absl::StatusOr<SimResult> result = absl::UnknownError("not run");
};

// Runs `graphs[r]` on rank r (each its own class) on a one-level topology.
std::unique_ptr<Run> Simulate(const std::vector<const Graph*>& graphs,
                              SimOptions options, int64_t world = 0,
                              bool keep_host_time = false) {
  // Scheduling is tested on the recorded times; the host-time model has its
  // own tests (tests/step/step_model_test.cc).
  if (!keep_host_time) options.host_time = HostTimeMode::kRecorded;
  // Expected times below are the alpha-beta formulas on a 1 B/ns link (the
  // NCCL model, now the default, has its own tests).
  options.comm_model = CommModel::kAlphaBeta;
  auto run = std::make_unique<Run>();
  auto compute = ComputeCostModel::Create(options);
  EXPECT_TRUE(compute.ok()) << compute.status();
  for (size_t r = 0; r < graphs.size(); ++r) {
    run->models.push_back(
        std::make_unique<NodeModel>(NodeModel::FromGraph(*graphs[r])));
    auto p = CompileRankProgram(*run->models.back(), options, *compute);
    EXPECT_TRUE(p.ok()) << p.status();
    run->programs.push_back(std::make_unique<RankProgram>(std::move(*p)));
    run->classes.push_back(
        {run->programs.back().get(), {static_cast<int64_t>(r)}, 1.0});
  }
  if (world > 0) {  // one class of `world` ranks
    run->classes.resize(1);
    run->classes[0].ranks.clear();
    for (int64_t r = 0; r < world; ++r) run->classes[0].ranks.push_back(r);
  }
  CommEnvironment comm;
  comm.topology.dims.push_back(
      {LinkKind::kFullyConnected, 0, 1, 1000});  // 1 B/ns
  comm.topology =
      *FitTopology(comm.topology, world > 0 ? world : graphs.size());
  run->result = RunSimulation(run->classes, world > 0 ? world : graphs.size(),
                              options, comm);
  return run;
}

TEST(EngineTest, ChainAndParallelThreads) {
  // 1 -> 2 on tid 0; 3 independent on another thread (tid 1).
  std::vector<ChakraProtoMsg::Node> nodes = {
      Compute(1, 10, {}), Compute(2, 20, {1}), Compute(3, 25, {})};
  SetInt64(nodes[2].mutable_attr(), attr::kTid, 1);
  Graph g = MakeGraph(nodes);
  auto run = Simulate({&g}, SimOptions());
  ASSERT_TRUE(run->result.ok()) << run->result.status();
  const ClassTimeline& tl = run->result->timelines[0];
  EXPECT_EQ(tl.finish_ns[1], 30000);
  EXPECT_EQ(tl.start_ns[2], 0);  // other thread: runs at once
  Report r = BuildReport(run->classes, *run->result, 1);
  EXPECT_EQ(r.step_ns, 30000);
  EXPECT_EQ(r.ranks[0].compute_ns, 30000);
  // Critical path: op1 then op2.
  ASSERT_EQ(r.critical_path.size(), 2u);
  EXPECT_EQ(r.critical_path[0].node_id, 1u);
  EXPECT_EQ(r.critical_path[1].node_id, 2u);
}

TEST(EngineTest, SameResourceIssuesLowestIdFirst) {
  // Two ready ops on one thread: id 2 before id 5, whatever the input order.
  Graph g = MakeGraph({Compute(5, 10, {}), Compute(2, 7, {})});
  auto run = Simulate({&g}, SimOptions());
  ASSERT_TRUE(run->result.ok());
  const ClassTimeline& tl = run->result->timelines[0];
  EXPECT_EQ(tl.start_ns[*g.Find(2)], 0);
  EXPECT_EQ(tl.start_ns[*g.Find(5)], 7000);
}

TEST(EngineTest, QueuedGpuOpsStartTheRecordedGapApart) {
  // Host op 1 (10 us) launches GPU ops 2 (20 us) and 3 (5 us) on one stream:
  // 3 waits only for the stream, so it starts the front end's gap after 2.
  // GPU op 5, launched by host op 4 long after the stream went idle, starts
  // when it is ready.
  ChakraProtoMsg::GlobalMetadata meta;
  SetDouble(meta.mutable_attr(), attr::kGpuQueuedGapUs, 1.5);
  Graph g = Graph::Build(meta, {Compute(1, 10, {}), Compute(2, 20, {1}, true),
                                Compute(3, 5, {1}, true), Compute(4, 100, {1}),
                                Compute(5, 5, {4}, true)});
  auto run = Simulate({&g}, SimOptions());
  ASSERT_TRUE(run->result.ok()) << run->result.status();
  const ClassTimeline& tl = run->result->timelines[0];
  EXPECT_EQ(tl.start_ns[*g.Find(2)], 10000);
  EXPECT_EQ(tl.start_ns[*g.Find(3)], 31500);   // 20 us after 10, + 1.5
  EXPECT_EQ(tl.start_ns[*g.Find(5)], 110000);  // idle stream: no gap
  // Without the measured gap, queued ops run back to back.
  Graph plain = MakeGraph({Compute(1, 10, {}), Compute(2, 20, {1}, true),
                           Compute(3, 5, {1}, true)});
  auto back_to_back = Simulate({&plain}, SimOptions());
  ASSERT_TRUE(back_to_back->result.ok());
  EXPECT_EQ(back_to_back->result->timelines[0].start_ns[*plain.Find(3)], 30000);
}

TEST(EngineTest, CommunicationOverlapsComputeAndExposedIsCounted) {
  // GPU op 1 (10 us) -> all-reduce 2 of 1000 B over 2 ranks; GPU op 3 (4 us)
  // independent. Cost: ring 2*1*1000 + 2*1/2*1000/1 = 3000 ns.
  Graph g = MakeGraph({Compute(1, 10, {}, true),
                       Collective(2, ChakraProtoMsg::ALL_REDUCE, 1000, {1}),
                       Compute(3, 4, {}, true)});
  auto run = Simulate({&g, &g}, SimOptions());
  ASSERT_TRUE(run->result.ok()) << run->result.status();
  Report r = BuildReport(run->classes, *run->result, 2);
  // Stream 7 runs op1 [0,10us) then op3 [10,14us); the collective runs [10,
  // 13us).
  EXPECT_EQ(r.step_ns, 14000);
  EXPECT_EQ(r.ranks[0].comm_ns, 3000);
  EXPECT_EQ(r.ranks[0].exposed_comm_ns, 0);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].calls, 1);  // one instance, both ranks in it
  EXPECT_EQ(r.collectives[0].group_size, 2);
}

TEST(EngineTest, CollectiveWaitsForTheSlowestMember) {
  Graph fast =
      MakeGraph({Compute(1, 10, {}),
                 Collective(2, ChakraProtoMsg::ALL_REDUCE, 1000, {1})});
  Graph slow =
      MakeGraph({Compute(1, 50, {}),
                 Collective(2, ChakraProtoMsg::ALL_REDUCE, 1000, {1})});
  auto run = Simulate({&fast, &slow}, SimOptions());
  ASSERT_TRUE(run->result.ok());
  // Both finish at 50 us + 3000 ns.
  EXPECT_EQ(run->result->timelines[0].finish_ns[1], 53000);
  EXPECT_EQ(run->result->timelines[1].finish_ns[1], 53000);
  EXPECT_EQ(run->result->collectives[0].max_wait_ns, 40000);
}

TEST(EngineTest, MissingCollectiveIsADeadlockNamingRanksAndNode) {
  Graph with =
      MakeGraph({Compute(1, 10, {}),
                 Collective(42, ChakraProtoMsg::ALL_REDUCE, 1000, {1})});
  Graph without = MakeGraph({Compute(1, 10, {})});
  auto run = Simulate({&with, &with, &without}, SimOptions());
  ASSERT_FALSE(run->result.ok());
  const std::string msg(run->result.status().message());
  EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0 (node 42)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("never issued by rank(s) 2"), std::string::npos) << msg;
}

TEST(EngineTest, AstraModeRunsOneCpuOpAtATime) {
  std::vector<ChakraProtoMsg::Node> nodes = {Compute(1, 10, {}),
                                             Compute(2, 10, {})};
  SetInt64(nodes[1].mutable_attr(), attr::kTid, 2);
  Graph g = MakeGraph(nodes);
  auto stream = Simulate({&g}, SimOptions());
  ASSERT_TRUE(stream->result.ok());
  EXPECT_EQ(BuildReport(stream->classes, *stream->result, 1).step_ns, 10000);
  SimOptions astra;
  astra.scheduling = SchedulingMode::kAstraCompat;
  auto serial = Simulate({&g}, astra);
  ASSERT_TRUE(serial->result.ok());
  EXPECT_EQ(BuildReport(serial->classes, *serial->result, 1).step_ns, 20000);
}

// A GPU rank of the kind ASTRA-sim stalled on: a host-side 4-byte
// collective (its call on the CPU thread) and a 64 MiB NCCL one on stream 7,
// each after its own compute, `host_us` and `kernel_us` long. `chained`: the
// NCCL collective depends on the host-side one, as et-convert now writes the
// collectives of one group (recorded call order).
Graph HostAndNcclCollectives(int64_t host_us, int64_t kernel_us,
                             const std::string& host_pg, bool chained) {
  std::vector<ChakraProtoMsg::Node> nodes = {
      Compute(1, host_us, {}),
      Collective(2, ChakraProtoMsg::ALL_REDUCE, 4, {1}, host_pg),
      Compute(3, kernel_us, {}, /*gpu=*/true),
      Collective(4, ChakraProtoMsg::ALL_REDUCE, 64 << 20, {3}, "0")};
  SetBool(nodes[1].mutable_attr(), attr::kCommOnHost, true);
  SetInt64(nodes[3].mutable_attr(), attr::kStream, 7);
  if (chained) {
    nodes[3].add_ctrl_deps(2);
    nodes[3].add_data_deps(2);
  }
  // Two groups of both ranks: the default group "0" and a second one, "1".
  std::vector<ProcessGroup> groups(2);
  groups[0].name = "0";
  groups[1].name = "1";
  for (ProcessGroup& g : groups) g.ranks = {0, 1};
  ChakraProtoMsg::GlobalMetadata metadata;
  EncodeProcessGroups(groups, metadata.mutable_attr());
  return Graph::Build(metadata, std::move(nodes));
}

// ASTRA-sim issues the lowest ready id, one collective in flight per rank. On
// rank 0 the NCCL collective is ready first, on rank 1 the host-side one:
// unchained, the ranks issue the group's collectives in different orders,
// which et-sim's astra schedule reports (ASTRA-sim pairs them by issue order
// and never finishes); chained in recorded order, both run to the end.
TEST(EngineTest, AstraModeReportsCollectivesIssuedInDifferentOrders) {
  SimOptions astra;
  astra.scheduling = SchedulingMode::kAstraCompat;
  Graph r0 = HostAndNcclCollectives(30, 10, "0", false);
  Graph r1 = HostAndNcclCollectives(10, 30, "0", false);
  auto unchained = Simulate({&r0, &r1}, astra);
  ASSERT_FALSE(unchained->result.ok());
  const std::string msg(unchained->result.status().message());
  EXPECT_NE(msg.find("collective #0 on group '0': rank 0 issued ALL_REDUCE of "
                     "67108864 bytes (node 4), rank 1 issued ALL_REDUCE of 4 "
                     "bytes (node 2): the ranks issue this group's collectives "
                     "in different orders"),
            std::string::npos)
      << msg;
  Graph c0 = HostAndNcclCollectives(30, 10, "0", true);
  Graph c1 = HostAndNcclCollectives(10, 30, "0", true);
  EXPECT_TRUE(Simulate({&c0, &c1}, astra)->result.ok());
  EXPECT_TRUE(Simulate({&c0, &c1}, SimOptions())->result.ok());
}

// The same on two groups: ASTRA-sim's one collective in flight per rank makes
// it a deadlock (each rank holds its slot waiting for the other), which the
// astra schedule shows; et-sim's default schedule runs each group on its own
// channel, as NCCL runs each communicator on its own stream.
TEST(EngineTest, AstraModeDeadlocksOnCrossGroupOrder) {
  Graph r0 = HostAndNcclCollectives(30, 10, "1", false);
  Graph r1 = HostAndNcclCollectives(10, 30, "1", false);
  SimOptions astra;
  astra.scheduling = SchedulingMode::kAstraCompat;
  auto stalled = Simulate({&r0, &r1}, astra);
  ASSERT_FALSE(stalled->result.ok());
  EXPECT_NE(stalled->result.status().message().find("deadlock"),
            std::string::npos)
      << stalled->result.status();
  EXPECT_TRUE(Simulate({&r0, &r1}, SimOptions())->result.ok());
}

// ASTRA-sim replays each compute node for its recorded duration, whatever
// et-sim's host-time model would make of it. In the default (unprofiled) mode
// that model once cut the 30 us host op to a 1.5 us dispatch, so both ranks
// issued the host-side collective first and the astra schedule ran to the
// end, while ASTRA-sim itself stalled on the same graph written to files
// ("unreleased nodes" on both ranks, docs/astra-sim.md).
TEST(EngineTest, AstraModeCostsNodesAsAstraSimInEveryHostTimeMode) {
  for (HostTimeMode mode :
       {HostTimeMode::kUnprofiled, HostTimeMode::kRecorded}) {
    SCOPED_TRACE(HostTimeModeName(mode));
    SimOptions astra;
    astra.scheduling = SchedulingMode::kAstraCompat;
    astra.host_time = mode;
    Graph r0 = HostAndNcclCollectives(30, 10, "1", false);
    Graph r1 = HostAndNcclCollectives(10, 30, "1", false);
    auto stalled = Simulate({&r0, &r1}, astra, 0, /*keep_host_time=*/true);
    ASSERT_FALSE(stalled->result.ok());
    EXPECT_NE(stalled->result.status().message().find("deadlock"),
              std::string::npos)
        << stalled->result.status();
    Graph c0 = HostAndNcclCollectives(30, 10, "0", true);
    Graph c1 = HostAndNcclCollectives(10, 30, "0", true);
    auto chained = Simulate({&c0, &c1}, astra, 0, /*keep_host_time=*/true);
    ASSERT_TRUE(chained->result.ok()) << chained->result.status();
    // The 30 us host op ends before the host-side collective starts on rank 0.
    EXPECT_EQ(chained->result->timelines[0].finish_ns[0], 30000);
  }
}

// ASTRA-sim replays a broadcast for its recorded duration (in whole us), on
// the collective slot, without waiting for its peers ("TODO: implement
// broadcast"); so does the astra schedule. The default one rendezvouses it.
TEST(EngineTest, AstraModeReplaysBroadcastsForTheirRecordedTime) {
  auto rank = [](int64_t us) {
    std::vector<ChakraProtoMsg::Node> nodes = {
        Collective(1, ChakraProtoMsg::BROADCAST, 4, {}), Compute(2, 10, {1})};
    nodes[0].set_duration_micros(us);
    return MakeGraph(nodes);
  };
  Graph r0 = rank(20), r1 = rank(7250);
  SimOptions astra;
  astra.scheduling = SchedulingMode::kAstraCompat;
  auto run = Simulate({&r0, &r1}, astra);
  ASSERT_TRUE(run->result.ok()) << run->result.status();
  EXPECT_EQ(run->result->timelines[0].finish_ns[0], 20000);
  EXPECT_EQ(run->result->timelines[1].finish_ns[0], 7250000);
  EXPECT_EQ(run->result->timelines[0].finish_ns[1], 30000);
  auto together = Simulate({&r0, &r1}, SimOptions());
  ASSERT_TRUE(together->result.ok()) << together->result.status();
  EXPECT_EQ(together->result->timelines[0].finish_ns[0],
            together->result->timelines[1].finish_ns[0]);
}

TEST(EngineTest, RankSymmetryMatchesPerRankSimulation) {
  Graph g = MakeGraph({Compute(1, 10, {}, true),
                       Collective(2, ChakraProtoMsg::ALL_REDUCE, 1 << 20, {1}),
                       Compute(3, 5, {2}, true)});
  auto symmetric = Simulate({&g}, SimOptions(), /*world=*/8);
  auto separate = Simulate({&g, &g, &g, &g, &g, &g, &g, &g}, SimOptions());
  ASSERT_TRUE(symmetric->result.ok());
  ASSERT_TRUE(separate->result.ok());
  EXPECT_EQ(BuildReport(symmetric->classes, *symmetric->result, 8).step_ns,
            BuildReport(separate->classes, *separate->result, 8).step_ns);
  EXPECT_LT(symmetric->result->events, separate->result->events);
}

TEST(EngineTest, StragglerAndComputeScale) {
  Graph g = MakeGraph({Compute(1, 10, {}),
                       Collective(2, ChakraProtoMsg::ALL_REDUCE, 1000, {1})});
  SimOptions options;
  options.compute_scale = 2.0;  // 10 us -> 5 us
  auto run = Simulate({&g, &g}, options);
  ASSERT_TRUE(run->result.ok());
  EXPECT_EQ(run->result->timelines[0].finish_ns[0], 5000);
}

TEST(EngineTest, FeederTraceWithCyclicCtrlDepsRunsOnDataDeps) {
  SimInput input{std::string(ET_TEST_DATA) + "/chakra/feeder_tests_chakra.0.et",
                 0};
  SimOptions options;
  options.world_size = 8;
  auto sim = Simulation::Run(input, options);
  ASSERT_TRUE(sim.ok()) << sim.status();
  const Report& r = (*sim)->report();
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("ctrl_deps are cyclic"), std::string::npos);
  EXPECT_NE(r.notes[0].find("1277 deps"), std::string::npos);
  EXPECT_GT(r.step_ns, 0);
  EXPECT_EQ(r.classes, 1);
}

// A message of `bytes` between ranks 0 and 1 (tag 0): a COMM_SEND_NODE to
// `peer` or a COMM_RECV_NODE from it.
ChakraProtoMsg::Node Message(uint64_t id, bool send, int32_t peer,
                             int64_t bytes, std::vector<uint64_t> deps) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name(send ? "send" : "recv");
  n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE
                  : ChakraProtoMsg::COMM_RECV_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  SetInt64(n.mutable_attr(), attr::kCommSize, bytes);
  SetInt32(n.mutable_attr(), send ? attr::kCommDst : attr::kCommSrc, peer);
  SetInt32(n.mutable_attr(), attr::kCommTag, 0);
  return n;
}

int64_t RankFinishNs(const Run& run, size_t rank) {
  int64_t last = 0;
  for (int64_t f : run.result->timelines[rank].finish_ns)
    last = std::max(last, f);
  return last;
}

// ASTRA-sim sends at once, whether or not the receive is posted
// (CongestionUnawareNetworkApi::sim_send): the send ends when its message
// arrives, the receive then or when issued if the message is already there.
// Rank 0 sends after 1 us, rank 1 receives after `recv_after_us`; then each
// computes 5 us. The message costs 2 us (1 us latency + 1000 B at 1 B/ns).
TEST(EngineTest, AstraModeSendsWithoutWaitingForTheReceive) {
  auto pair = [](int64_t recv_after_us) {
    std::vector<Graph> g;
    g.push_back(MakeGraph({Compute(1, 1, {}), Message(2, true, 1, 1000, {1}),
                           Compute(3, 5, {2})}));
    g.push_back(
        MakeGraph({Compute(1, recv_after_us, {}),
                   Message(2, false, 0, 1000, {1}), Compute(3, 5, {2})}));
    return g;
  };
  SimOptions astra;
  astra.scheduling = SchedulingMode::kAstraCompat;
  const std::vector<Graph> late = pair(50);
  auto run = Simulate({&late[0], &late[1]}, astra);
  ASSERT_TRUE(run->result.ok()) << run->result.status();
  EXPECT_EQ(RankFinishNs(*run, 0), 1000 + 2000 + 5000);  // not held till 50 us
  EXPECT_EQ(RankFinishNs(*run, 1), 50000 + 5000);  // the message was there
  const std::vector<Graph> early = pair(0);        // the receive waits for it
  run = Simulate({&early[0], &early[1]}, astra);
  ASSERT_TRUE(run->result.ok()) << run->result.status();
  EXPECT_EQ(RankFinishNs(*run, 1), 1000 + 2000 + 5000);
  // et-sim's own schedule keeps the rendezvous: the send waits for the
  // receive (gloo's send returns once the peer has it).
  run = Simulate({&late[0], &late[1]}, SimOptions());
  ASSERT_TRUE(run->result.ok());
  EXPECT_EQ(RankFinishNs(*run, 0), 50000 + 2000 + 5000);
}

TEST(EngineTest, ModelParallelMlpPairsRanks) {
  // mlp_mp.{0,1}.et: the reference text converter's 2-NPU model-parallel MLP.
  SimInput input{std::string(ET_TEST_DATA) + "/chakra/mlp_mp.%d.et", 2};
  auto sim = Simulation::Run(input, SimOptions());
  ASSERT_TRUE(sim.ok()) << sim.status();
  const Report& r = (*sim)->report();
  ASSERT_EQ(r.ranks.size(), 2u);
  EXPECT_EQ(r.ranks[0].step_ns,
            r.ranks[1].step_ns);  // the same program on both
  EXPECT_GT(r.ranks[0].compute_ns, r.ranks[0].comm_ns);
}

}  // namespace
}  // namespace et::sim
