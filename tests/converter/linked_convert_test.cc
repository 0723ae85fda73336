// et-convert --kineto on the real host/device pairs, and multi-rank conversion
// with the cross-rank collective check.
#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/gzip_input.h"
#include "converter/converter.h"
#include "converter/cross_rank_check.h"
#include "converter/graph/graph_digest.h"
#include "converter/multi_rank.h"
#include "gtest/gtest.h"
#include "model/graph_validation.h"
#include "nlohmann/json.hpp"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

using ChakraProtoMsg::Node;

absl::StatusOr<Converted> Linked(const std::string& et,
                                 const std::string& kineto) {
  ConvertOptions options;
  options.kineto_path = DataPath(kineto);
  return ConvertAndLoad(et, options);
}

bool IsGpu(const Node& n) { return GetBool(n, attr::kIsGpuOp).value_or(false); }

TEST(LinkedConvertTest,
     SimpleAddKernelsAreLinkedWithStreamsDurationsAndLaunchers) {
  auto c = Linked("hta/simple_add_et.json.gz", "hta/simple_add_kineto.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->summary.gpu_ops, 4);
  EXPECT_EQ(c->summary.orphan_gpu_ops, 0);
  EXPECT_EQ(c->summary.kineto_host_ops_matched, c->summary.kineto_host_ops);
  std::vector<NodeIndex> gpu;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    if (IsGpu(c->graph.node(i))) gpu.push_back(i);
  }
  ASSERT_EQ(gpu.size(), 4u);
  for (size_t k = 0; k < gpu.size(); ++k) {
    const Node& n = c->graph.node(gpu[k]);
    EXPECT_FALSE(GetBool(n, attr::kIsCpuOp).value_or(true));
    EXPECT_EQ(GetInt(n, attr::kStream), 7);
    EXPECT_GT(GetInt(n, attr::kDurationNs).value_or(0), 0);
    // Launched by a host node, and after the previous kernel on its stream.
    bool launched = false, ordered = k == 0;
    for (NodeIndex d : c->graph.ctrl_deps(gpu[k])) {
      const Node& dep = c->graph.node(d);
      // The launcher is the nearest node around the launch: aten::rand (its
      // uniform_ is folded into it) or aten::add.
      if (!IsGpu(dep) &&
          (dep.name() == "aten::rand" || dep.name() == "aten::add")) {
        launched = true;
      }
      if (k > 0 && d == gpu[k - 1]) ordered = true;
    }
    EXPECT_TRUE(launched) << n.name();
    EXPECT_TRUE(ordered) << n.name();
  }
  // cudaDeviceSynchronize: some host node waits for a GPU node.
  bool host_waits_for_gpu = false;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    if (IsGpu(c->graph.node(i))) continue;
    for (NodeIndex d : c->graph.ctrl_deps(i))
      host_waits_for_gpu |= IsGpu(c->graph.node(d));
  }
  EXPECT_TRUE(host_waits_for_gpu);
  EXPECT_TRUE(ValidateGraph(c->graph).ok());
}

TEST(LinkedConvertTest, ResnetHostOpsMatchAndEveryKernelHasALauncher) {
  auto c =
      Linked("param/resnet_et.1.0.1.json.gz", "param/resnet_kineto.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_GT(c->summary.kineto_host_ops, 1000);
  EXPECT_GE(c->summary.kineto_host_ops_matched,
            c->summary.kineto_host_ops * 99 / 100);
  EXPECT_GT(c->summary.gpu_ops, 300);
  EXPECT_EQ(c->summary.orphan_gpu_ops, 0);
  int gpu = 0;
  for (NodeIndex i = 0; i < c->graph.size(); ++i) {
    if (!IsGpu(c->graph.node(i))) continue;
    ++gpu;
    bool launched = false;
    for (NodeIndex d : c->graph.ctrl_deps(i))
      launched |= !IsGpu(c->graph.node(d));
    EXPECT_TRUE(launched) << c->graph.node(i).id();
  }
  EXPECT_EQ(gpu, c->summary.gpu_ops);
  // Host nodes now carry measured times.
  int timed = 0, host = 0;
  for (const Node& n : c->graph.nodes()) {
    if (IsGpu(n)) continue;
    ++host;
    timed += GetInt(n, attr::kDurationNs).has_value();
  }
  EXPECT_GE(timed, host * 99 / 100);
  EXPECT_TRUE(ValidateGraph(c->graph).ok());
}

// The replay runs a linked trace's GEMM kernels through cuBLAS, so each GEMM
// op's kernel must carry the op's shapes. resnet's one training step has one
// fc layer: addmm forward (x[128, 512] W^T[512, 1000]) and two mm backward; its
// convolutions' sgemm kernels are cuDNN's and keep no shapes.
TEST(LinkedConvertTest, GemmKernelsCarryTheirLaunchersShapes) {
  auto c =
      Linked("param/resnet_et.1.0.1.json.gz", "param/resnet_kineto.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<std::pair<std::string, std::string>> io;  // (io_op, shapes)
  int sgemm_kernels = 0;
  for (const Node& n : c->graph.nodes()) {
    if (!IsGpu(n)) continue;
    sgemm_kernels += n.name().find("sgemm") != std::string::npos;
    auto io_op = GetString(n, attr::kIoOp);
    if (!io_op) {
      EXPECT_EQ(n.inputs().shapes(), "") << n.id();
      continue;
    }
    io.emplace_back(*io_op, n.inputs().shapes());
    EXPECT_EQ(GetString(n, attr::kOpKind).value_or(""), "gemm") << n.id();
    EXPECT_EQ(GetInt(n, attr::kNumOps).value_or(0), 2 * 128 * 512 * 1000);
    EXPECT_NE(n.inputs().types().find("Tensor(float)"), std::string::npos);
  }
  std::sort(io.begin(), io.end());
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"aten::addmm", "[[1000],[128,512],[512,1000],[],[]]"},
      {"aten::mm", "[[1000,128],[128,512]]"},
      {"aten::mm", "[[128,1000],[1000,512]]"}};
  EXPECT_EQ(io, expected);
  EXPECT_GT(sgemm_kernels, 3);  // the convolutions' are left alone
}

// The profiled step is ProfilerStep#N's start to #N+1's start (the CPU span
// leaves out what runs between spans); the last step lasts at least its span.
TEST(LinkedConvertTest, StepTimesInMetadataAreTheProfiledStepPeriods) {
  auto c = Linked("recorded/mlp_steps_et.json.gz",
                  "recorded/mlp_steps_trace.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  // The spans, read independently from the trace JSON (a bare event array).
  std::string text;
  ASSERT_TRUE(
      ReadFileMaybeGzip(DataPath("recorded/mlp_steps_trace.json.gz"), &text)
          .ok());
  nlohmann::json doc = nlohmann::json::parse(text);
  const nlohmann::json& events = doc.is_array() ? doc : doc["traceEvents"];
  std::vector<std::pair<double, double>> spans_us;  // (ts, dur)
  for (const auto& e : events) {
    if (e.value("name", "").rfind("ProfilerStep#", 0) == 0 &&
        e.contains("dur")) {
      spans_us.push_back({e["ts"].get<double>(), e["dur"].get<double>()});
    }
  }
  ASSERT_EQ(spans_us.size(), 3u);
  std::sort(spans_us.begin(), spans_us.end());
  auto recorded = GetDoubleList(c->graph.metadata().attr(), attr::kStepTimesUs);
  ASSERT_TRUE(recorded.has_value());
  ASSERT_EQ(recorded->size(), spans_us.size());
  const std::vector<double>& got = *recorded;
  for (size_t k = 0; k + 1 < got.size(); ++k)
    EXPECT_NEAR(got[k], spans_us[k + 1].first - spans_us[k].first, 0.01);
  EXPECT_GE(got.back(), spans_us.back().second - 0.001);
  auto measured = GetDouble(c->graph.metadata().attr(), attr::kMeasuredStepUs);
  ASSERT_TRUE(measured.has_value());
  EXPECT_NE(
      std::find_if(got.begin(), got.end(),
                   [&](double v) { return std::abs(v - *measured) < 0.001; }),
      got.end());
}

TEST(LinkedConvertTest, CpuOnlyPairGetsDurationsAndNoKernels) {
  auto c = Linked("pytorch-1.13-cpu/nn_demo_et.json.gz",
                  "pytorch-1.13-cpu/nn_demo_trace.json.gz");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->summary.gpu_ops, 0);
  EXPECT_GE(c->summary.kineto_host_ops_matched,
            c->summary.kineto_host_ops * 99 / 100);
  int timed = 0;
  for (const Node& n : c->graph.nodes())
    timed +=
        n.duration_micros() > 0 || GetInt(n, attr::kDurationNs).value_or(0) > 0;
  EXPECT_GE(timed, static_cast<int>(c->graph.size()) * 9 / 10);
}

TEST(LinkedConvertTest, MalformedKinetoIsAClearError) {
  std::string text;
  ASSERT_TRUE(
      ReadFileMaybeGzip(DataPath("hta/simple_add_kineto.json.gz"), &text).ok());
  const std::string cut = TempOut("cut_kineto.json");
  std::ofstream(cut) << text.substr(0, text.size() / 2);
  ConvertOptions options;
  options.kineto_path = cut;
  const std::string out = TempOut("cut.et");
  auto r = ConvertFile(DataPath("hta/simple_add_et.json.gz"), out, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find(cut), std::string::npos)
      << r.status();
  EXPECT_FALSE(std::ifstream(out).good());
}

TEST(MultiRankTest, DdpRanksConvertInParallelAndAgreeAcrossRanks) {
  auto jobs = JobsFromPattern(
      DataPath("pytorch-1.13-cpu/ddp_mlp_et_r%d.json.gz"), TempOut("ddp.%d.et"),
      DataPath("pytorch-1.13-cpu/ddp_mlp_trace_r%d.json.gz"), 4);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  auto results = ConvertRanks(*jobs, {}, 2);
  auto written = PublishRankOutputs(&results);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_TRUE(*written);
  std::vector<RankTrace> traces;
  for (const auto& r : results) {
    ASSERT_TRUE(r.summary.ok()) << r.summary.status();
    EXPECT_EQ(r.summary->collectives_by_type.at("ALL_REDUCE"), 3);
    traces.push_back({r.job.rank, r.job.output});
  }
  auto mismatches = CheckCollectivesAcrossRanks(traces);
  ASSERT_TRUE(mismatches.ok()) << mismatches.status();
  EXPECT_TRUE(mismatches->empty()) << (*mismatches)[0];
  // Any subset of agreeing ranks agrees too.
  auto same_group = CheckCollectivesAcrossRanks({{0, TempOut("ddp.0.et")},
                                                 {1, TempOut("ddp.1.et")},
                                                 {2, TempOut("ddp.3.et")}});
  ASSERT_TRUE(same_group.ok());
  EXPECT_TRUE(same_group->empty());
}

// The digest the converter collects while writing is what reading the
// written .et gives, so the cross-rank check need not read the outputs back.
TEST(MultiRankTest, DigestCollectedWhileWritingIsTheWrittenGraphs) {
  auto jobs = JobsFromPattern(
      DataPath("pytorch-1.13-cpu/ddp_mlp_et_r%d.json.gz"),
      TempOut("ddpd.%d.et"),
      DataPath("pytorch-1.13-cpu/ddp_mlp_trace_r%d.json.gz"), 2);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  auto results = ConvertRanks(*jobs, {}, 2);
  ASSERT_TRUE(PublishRankOutputs(&results).ok());
  std::vector<RankTrace> from_digest, from_file;
  for (const auto& r : results) {
    ASSERT_TRUE(r.summary.ok()) << r.summary.status();
    ASSERT_NE(r.summary->digest, nullptr);
    auto read = ReadGraphDigest(r.job.output);
    ASSERT_TRUE(read.ok()) << read.status();
    const GraphDigest& d = *r.summary->digest;
    EXPECT_EQ(d.nodes, read->nodes);
    EXPECT_EQ(d.nodes, r.summary->written_nodes);
    EXPECT_EQ(d.nodes_by_type, read->nodes_by_type);
    EXPECT_EQ(d.nodes_by_step, read->nodes_by_step);
    EXPECT_EQ(d.groups.size(), read->groups.size());
    ASSERT_EQ(d.by_group.size(), read->by_group.size());
    for (const auto& [pg, list] : d.by_group) {
      const auto& other = read->by_group.at(pg);
      ASSERT_EQ(list.size(), other.size()) << pg;
      for (size_t k = 0; k < list.size(); ++k) {
        EXPECT_EQ(list[k].node_id, other[k].node_id);
        EXPECT_EQ(list[k].type, other[k].type);
        EXPECT_EQ(list[k].size_bytes, other[k].size_bytes);
      }
    }
    from_digest.push_back({r.job.rank, "/nonexistent.et", r.summary->digest});
    from_file.push_back({r.job.rank, r.job.output});
  }
  auto a = CheckRanksAgree(from_digest);
  auto b = CheckRanksAgree(from_file);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->shape, b->shape);
  EXPECT_NE(a->shape.find("245 nodes (COMM_COLL_NODE 5, COMP_NODE 240)"),
            std::string::npos)
      << a->shape;
  EXPECT_EQ(a->collective_mismatches, b->collective_mismatches);
}

// Issue 49, item 12: ranks whose graphs hold the same nodes with one of them
// in the next step (a step boundary recorded a node later on one rank) were
// told "the ranks' graphs differ in shape", as for two programs.
TEST(MultiRankTest, ANodeInAnotherStepIsNotAnotherShape) {
  auto digest = [](std::map<int64_t, int64_t> by_step, int comm) {
    auto d = std::make_shared<GraphDigest>();
    d->nodes = 0;
    for (const auto& [step, n] : by_step) d->nodes += n;
    d->nodes_by_step = std::move(by_step);
    d->nodes_by_type = {{ChakraProtoMsg::COMM_COLL_NODE, comm},
                        {ChakraProtoMsg::COMP_NODE, d->nodes - comm}};
    return d;
  };
  std::vector<RankTrace> moved = {{0, "a.et", digest({{0, 441}, {1, 442}}, 3)},
                                  {1, "b.et", digest({{0, 442}, {1, 441}}, 3)}};
  auto check = CheckRanksAgree(moved);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_NE(check->shape_mismatch.find("hold the same nodes, but some fall in "
                                       "another step"),
            std::string::npos)
      << check->shape_mismatch;
  std::vector<RankTrace> other = {{0, "a.et", digest({{0, 441}, {1, 442}}, 3)},
                                  {1, "b.et", digest({{0, 441}, {1, 442}}, 4)}};
  check = CheckRanksAgree(other);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_NE(check->shape_mismatch.find("differ in shape"), std::string::npos)
      << check->shape_mismatch;
}

TEST(MultiRankTest, MismatchedSizesAreReportedWithRankNodeAndBytes) {
  // Rank 1 gets rank 0's trace with its first all-reduce shrunk: rewrite the
  // .et.
  ASSERT_TRUE(ConvertFile(DataPath("pytorch-1.13-cpu/ddp_mlp_et_r0.json.gz"),
                          TempOut("m0.et"), {})
                  .ok());
  auto g = LoadGraph(TempOut("m0.et"));
  ASSERT_TRUE(g.ok());
  std::vector<Node> nodes = g->nodes();
  uint64_t changed = 0;
  for (Node& n : nodes) {
    if (n.type() == ChakraProtoMsg::COMM_COLL_NODE &&
        GetInt(n, attr::kCommType) == ChakraProtoMsg::ALL_REDUCE) {
      SetInt64(n.mutable_attr(), attr::kCommSize, 1234);
      changed = n.id();
      break;
    }
  }
  ASSERT_NE(changed, 0u);
  ASSERT_TRUE(
      SaveGraph(Graph::Build(g->metadata(), nodes), TempOut("m1.et")).ok());
  auto reports = CheckCollectivesAcrossRanks(
      {{0, TempOut("m0.et")}, {1, TempOut("m1.et")}});
  ASSERT_TRUE(reports.ok());
  ASSERT_EQ(reports->size(), 1u);
  const std::string& r = (*reports)[0];
  EXPECT_NE(r.find("rank 1 node " + std::to_string(changed)), std::string::npos)
      << r;
  EXPECT_NE(r.find("1234 bytes"), std::string::npos) << r;
  EXPECT_NE(r.find("330756 bytes"), std::string::npos) << r;
}

}  // namespace
}  // namespace et::convert

namespace et::convert {
namespace {

// The recorder's truth (`unprofiled_step_ms` at the Kineto trace's top level,
// examples/record_trace.py) reaches the graph; --measured-step-ms overrides
// it; a value that is not a positive number is an error naming the file.
std::string KinetoWithTruth(const std::string& value,
                            const std::string& key = "unprofiled_step_ms") {
  std::string text;
  EXPECT_TRUE(
      ReadFileMaybeGzip(
          std::string(ET_TEST_DATA) + "/hta/simple_add_kineto.json.gz", &text)
          .ok());
  nlohmann::json doc = nlohmann::json::parse(text);
  doc[key] = nlohmann::json::parse(value);
  const std::string path =
      ::testing::TempDir() + "/truth_" +
      std::to_string(std::hash<std::string>()(key + value)) + "_kineto.json";
  std::ofstream(path) << doc.dump();
  return path;
}

absl::StatusOr<double> UnprofiledStepUs(const std::string& kineto,
                                        double override_ms) {
  ConvertOptions options;
  options.kineto_path = kineto;
  options.measured_step_ms = override_ms;
  const std::string out = ::testing::TempDir() + "/truth.et";
  auto s = ConvertFile(std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz",
                       out, options);
  if (!s.ok()) return s.status();
  auto g = LoadGraph(out);
  if (!g.ok()) return g.status();
  return GetDouble(g->metadata().attr(), attr::kUnprofiledStepUs).value_or(-1);
}

TEST(UnprofiledStepTest, KinetoTruthReachesTheGraphAndTheFlagOverridesIt) {
  auto us = UnprofiledStepUs(KinetoWithTruth("1.25"), 0);
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, 1250);
  us = UnprofiledStepUs(KinetoWithTruth("\"2.5\""), 0);  // add_metadata: text
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, 2500);
  us = UnprofiledStepUs(KinetoWithTruth("1.25"), 3.0);
  ASSERT_TRUE(us.ok()) << us.status();
  EXPECT_DOUBLE_EQ(*us, 3000);
}

TEST(UnprofiledStepTest, NonPositiveTruthIsAnErrorNamingTheFile) {
  const std::string kineto = KinetoWithTruth("-4");
  auto us = UnprofiledStepUs(kineto, 0);
  ASSERT_FALSE(us.ok());
  EXPECT_NE(std::string(us.status().message()).find(kineto), std::string::npos);
  EXPECT_NE(std::string(us.status().message()).find("unprofiled_step_ms"),
            std::string::npos);
  // The truth timed after the recording is checked the same way.
  const std::string after =
      KinetoWithTruth("\"x\"", "unprofiled_step_after_ms");
  us = UnprofiledStepUs(after, 0);
  ASSERT_FALSE(us.ok());
  EXPECT_NE(std::string(us.status().message()).find(after), std::string::npos);
  EXPECT_NE(
      std::string(us.status().message()).find("'unprofiled_step_after_ms'"),
      std::string::npos)
      << us.status();
}

// simple_add's ET converted with `kineto` (and --measured-step-ms when
// `override_ms` > 0): the graph's metadata.
ChakraProtoMsg::GlobalMetadata SimpleAddMetadata(const std::string& kineto,
                                                 double override_ms) {
  ConvertOptions options;
  options.kineto_path = kineto;
  options.measured_step_ms = override_ms;
  // Named by its inputs: tests of this file run as processes side by side.
  const std::string out = ::testing::TempDir() + "/simple_add_" +
                          std::to_string(std::hash<std::string>()(
                              kineto + "@" + std::to_string(override_ms))) +
                          ".et";
  EXPECT_TRUE(
      ConvertFile(std::string(ET_TEST_DATA) + "/hta/simple_add_et.json.gz", out,
                  options)
          .ok());
  auto g = LoadGraph(out);
  EXPECT_TRUE(g.ok());
  return g.ok() ? g->metadata() : ChakraProtoMsg::GlobalMetadata();
}

// The recorder's page-fault counts and cost reach the graph (a number or
// add_metadata's text); a malformed one is read as absent (it refines the
// model), and a truth from the command line drops its run's count.
TEST(UnprofiledStepTest, PageFaultCountsAndCostReachTheGraph) {
  std::string text;
  ASSERT_TRUE(
      ReadFileMaybeGzip(
          std::string(ET_TEST_DATA) + "/hta/simple_add_kineto.json.gz", &text)
          .ok());
  auto convert = [&](const nlohmann::json& keys, double override_ms) {
    nlohmann::json doc = nlohmann::json::parse(text);
    doc.update(keys);
    const std::string path = ::testing::TempDir() + "/faults_kineto.json";
    std::ofstream(path) << doc.dump();
    return SimpleAddMetadata(path, override_ms);
  };
  const nlohmann::json recorded = {
      {"unprofiled_page_faults_per_step", "2018.0"},
      {"profiled_page_faults_per_step", 40.5},
      {"page_fault_calibration",
       {{"ns_per_fault", 2181.6}, {"faults", 16384}}}};
  auto meta = convert(recorded, 0);
  EXPECT_EQ(GetDouble(meta.attr(), attr::kUnprofiledPageFaultsPerStep), 2018);
  EXPECT_EQ(GetDouble(meta.attr(), attr::kProfiledPageFaultsPerStep), 40.5);
  EXPECT_EQ(GetInt(meta.attr(), attr::kPageFaultNs), 2182);
  meta = convert(recorded, 3.0);
  EXPECT_FALSE(GetDouble(meta.attr(), attr::kUnprofiledPageFaultsPerStep));
  EXPECT_EQ(GetDouble(meta.attr(), attr::kProfiledPageFaultsPerStep), 40.5);
  meta = convert({{"unprofiled_page_faults_per_step", -3},
                  {"profiled_page_faults_per_step", "many"},
                  {"page_fault_calibration", {{"ns_per_fault", "x"}}}},
                 0);
  EXPECT_FALSE(GetDouble(meta.attr(), attr::kUnprofiledPageFaultsPerStep));
  EXPECT_FALSE(GetDouble(meta.attr(), attr::kProfiledPageFaultsPerStep));
  EXPECT_FALSE(GetInt(meta.attr(), attr::kPageFaultNs));
}

// The truth's timing blocks reach the graph in us; anything but an array of
// positive numbers is read as absent (they only say how far the truth
// moves), and a truth from the command line drops them.
TEST(UnprofiledStepTest, TimingBlocksReachTheGraph) {
  auto blocks = [](const std::string& value, double override_ms) {
    return GetDoubleList(
        SimpleAddMetadata(KinetoWithTruth(value, "unprofiled_step_blocks_ms"),
                          override_ms)
            .attr(),
        attr::kUnprofiledStepBlocksUs);
  };
  EXPECT_EQ(blocks("[1.5, 2.25, 1.75]", 0),
            (std::vector<double>{1500, 2250, 1750}));
  EXPECT_FALSE(blocks("[1.5, 2.25, 1.75]", 3.0));
  for (const char* bad : {"\"[1.5]\"", "[1.5, -2]", "[1.5, \"x\"]", "[]", "7"})
    EXPECT_FALSE(blocks(bad, 0)) << bad;
}

}  // namespace
}  // namespace et::convert
