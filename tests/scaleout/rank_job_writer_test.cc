// The scaled job for ASTRA-sim (scaleout/rank_job_writer, replicated_job) on
// a real trace: the MI300X Kineto trace (rank 0 of 8, RCCL collectives on
// the default group) converted by et-convert. File names and count, each
// rank's metadata and group rank lists, the comm-group file for groups
// smaller than the world, the round trip through NodeModel::Load, and that an
// error leaves nothing behind.
#include "scaleout/rank_job_writer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/json_file.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/node_model.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/replicated_job.h"

namespace et::scaleout {
namespace {

namespace fs = std::filesystem;

std::string ScratchPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/scaleout_", getpid(), "/", name);
}

// A fresh path for `name` (anything there before is removed).
std::string Scratch(const std::string& name) {
  const std::string dir = ScratchPath(name);
  fs::remove_all(dir);
  fs::create_directories(fs::path(dir).parent_path());
  return dir;
}

// The MI300X trace converted once per test binary.
const Graph& Mi300() {
  static const Graph* graph = [] {
    const std::string out = Scratch("mi300.et");
    auto s = convert::ConvertFile(
        std::string(ET_TEST_DATA) +
            "/kineto-only/tracelens_mi300_resnet_act_checkpoint.json.gz",
        out, {});
    EXPECT_TRUE(s.ok()) << s.status();
    auto g = LoadGraph(out);
    EXPECT_TRUE(g.ok()) << g.status();
    return new Graph(std::move(*g));
  }();
  return *graph;
}

std::vector<int64_t> Range(int64_t begin, int64_t count) {
  std::vector<int64_t> v(count);
  std::iota(v.begin(), v.end(), begin);
  return v;
}

// The file names in `dir`, sorted.
std::vector<std::string> Listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

int CountCollectives(const Graph& g) {
  int n = 0;
  for (const auto& node : g.nodes())
    n += node.type() == ChakraProtoMsg::COMM_COLL_NODE;
  return n;
}

TEST(RankJobWriterTest, Mi300AtWorld8IsEightRanksOfTheWorldGroup) {
  const Graph& recorded = Mi300();
  ASSERT_EQ(CountCollectives(recorded), 12);
  const std::string dir = Scratch("job8");
  auto source = ReplicatedRankSource(recorded, 8);
  ASSERT_TRUE(source.ok()) << source.status();
  auto job = WriteRankJob({dir, "mi300", 8}, *source);
  ASSERT_TRUE(job.ok()) << job.status();
  std::vector<std::string> expected;
  for (int r = 0; r < 8; ++r)
    expected.push_back(absl::StrCat("mi300.", r, ".et"));
  std::sort(expected.begin(), expected.end());
  // Every collective is on group "0": no comm-group file.
  EXPECT_EQ(Listing(dir), expected);
  EXPECT_TRUE(job->comm_groups_path.empty());
  EXPECT_EQ(job->collectives, 8 * 12);
  EXPECT_EQ(WorkloadConfiguration({dir, "mi300", 8}), dir + "/mi300");
  for (int r = 0; r < 8; ++r) {
    auto model = NodeModel::Load(job->rank_paths[r]);
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ(model->size(), recorded.size());
    EXPECT_EQ(model->info().rank, r);
    EXPECT_EQ(model->info().world_size, 8);
    ASSERT_EQ(model->groups().size(), 1u);
    EXPECT_EQ(model->groups()[0].name, "0");
    EXPECT_EQ(model->groups()[0].ranks, Range(0, 8));
  }
}

// From the recorded rank's file, as et-sim --write-ranks writes a job: a
// trace with no group to tile (one GPU's mlp1024) streams each rank from the
// file, one tiled by its groups (the MI300 rank of 8 at world 16) is copied
// from the graph loaded once; both give the ranks the graph source gives.
TEST(RankJobWriterTest, FileSourceWritesWhatTheGraphSourceWrites) {
  const std::string mlp = Scratch("mlp1024.et");
  convert::ConvertOptions options;
  options.kineto_path =
      std::string(ET_TEST_DATA) + "/h100/mlp1024_kineto.json.gz";
  ASSERT_TRUE(
      convert::ConvertFile(
          std::string(ET_TEST_DATA) + "/h100/mlp1024_et.json.gz", mlp, options)
          .ok());
  for (const auto& [trace, world] :
       {std::pair<std::string, int64_t>{mlp, 2},
        std::pair<std::string, int64_t>{ScratchPath("mi300.et"), 2}}) {
    SCOPED_TRACE(trace);
    Mi300();  // converts mi300.et once
    auto graph = LoadGraph(trace);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto from_graph = ReplicatedRankSource(*graph, world);
    auto from_file = ReplicatedFileSource(trace, world);
    ASSERT_TRUE(from_graph.ok()) << from_graph.status();
    ASSERT_TRUE(from_file.ok()) << from_file.status();
    const std::string a = Scratch("by_graph"), b = Scratch("by_file");
    auto job_a = WriteRankJob({a, "job", world}, *from_graph);
    auto job_b = WriteRankJob({b, "job", world}, *from_file);
    ASSERT_TRUE(job_a.ok()) << job_a.status();
    ASSERT_TRUE(job_b.ok()) << job_b.status();
    EXPECT_EQ(job_b->nodes, job_a->nodes);
    EXPECT_EQ(job_b->nodes, world * static_cast<int64_t>(graph->size()));
    EXPECT_EQ(job_b->collectives, job_a->collectives);
    EXPECT_EQ(job_b->comm_groups, job_a->comm_groups);
    for (int64_t r : {int64_t{0}, world - 1}) {
      auto ma = NodeModel::Load(job_a->rank_paths[r]);
      auto mb = NodeModel::Load(job_b->rank_paths[r]);
      ASSERT_TRUE(ma.ok() && mb.ok());
      EXPECT_EQ(mb->info().rank, r);
      EXPECT_EQ(mb->info().world_size, world);
      ASSERT_EQ(mb->size(), ma->size());
      ASSERT_EQ(mb->groups().size(), ma->groups().size());
      for (size_t g = 0; g < ma->groups().size(); ++g)
        EXPECT_EQ(mb->groups()[g].ranks, ma->groups()[g].ranks);
      for (NodeIndex i = 0; i < ma->size(); i += 97) {
        EXPECT_EQ(mb->id(i), ma->id(i));
        EXPECT_EQ(mb->name(i), ma->name(i));
        EXPECT_EQ(mb->duration_ns(i), ma->duration_ns(i));
      }
    }
    std::filesystem::remove_all(a);
    std::filesystem::remove_all(b);
  }
}

// The recorded 8 GPUs as one tensor-parallel group "5" of a 16-rank job: at
// world 16 it tiles into two groups of 8, each rank in its own, named
// uniquely, and listed in the comm-group file ASTRA-sim needs. (Not 32: each
// rank rewrites the whole MI300 graph, 8 minutes under ASan.)
TEST(RankJobWriterTest, SubWorldGroupIsTiledAndListedForAstraSim) {
  const Graph& mi300 = Mi300();
  ChakraProtoMsg::GlobalMetadata metadata = mi300.metadata();
  std::vector<ProcessGroup> groups = DecodeProcessGroups(metadata.attr());
  ASSERT_EQ(groups.size(), 1u);
  groups[0].name = "5";
  groups[0].desc = "tensor_parallel";
  metadata.clear_attr();
  for (const auto& a : mi300.metadata().attr())
    if (a.name().rfind("pg_", 0) != 0) *metadata.add_attr() = a;
  EncodeProcessGroups(groups, metadata.mutable_attr());
  SetInt64(metadata.mutable_attr(), attr::kWorldSize, 16);
  std::vector<ChakraProtoMsg::Node> nodes = mi300.nodes();
  for (auto& n : nodes)
    if (GetString(n, attr::kPgName) == "0")
      SetString(n.mutable_attr(), attr::kPgName, "5");
  const Graph tp = Graph::Build(metadata, std::move(nodes));

  const std::string dir = Scratch("job16");
  auto source = ReplicatedRankSource(tp, 16);
  ASSERT_TRUE(source.ok()) << source.status();
  auto job = WriteRankJob({dir, "tp", 16}, *source);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(Listing(dir).size(), 17u);
  EXPECT_EQ(job->comm_groups_path, dir + "/tp.comm_groups.json");
  auto file = ReadJsonFile(job->comm_groups_path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->size(), 2u);
  EXPECT_EQ((*file)["5"].get<std::vector<int64_t>>(), Range(0, 8));
  EXPECT_EQ((*file)["6"].get<std::vector<int64_t>>(), Range(8, 8));
  for (int r : {0, 9, 15}) {
    auto model = NodeModel::Load(job->rank_paths[r]);
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_EQ(model->groups().size(), 1u);
    const ProcessGroup& g = model->groups()[0];
    EXPECT_EQ(g.ranks, Range(r / 8 * 8, 8)) << "rank " << r;
    EXPECT_EQ(g.name, std::to_string(5 + r / 8)) << "rank " << r;
    EXPECT_EQ(model->counts().unknown_groups, 0) << "rank " << r;
  }
}

TEST(RankJobWriterTest, SourceErrorLeavesNothing) {
  const std::string dir = Scratch("failing");
  auto replicate = ReplicatedRankSource(Mi300(), 8);
  ASSERT_TRUE(replicate.ok());
  RankGraphSource source =
      [&](int64_t rank) -> absl::StatusOr<std::shared_ptr<const Graph>> {
    if (rank == 5) return absl::DataLossError("rank 5's trace is truncated");
    return (*replicate)(rank);
  };
  auto job = WriteRankJob({dir, "mi300", 8}, source);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(),
            dir + ": rank 5: rank 5's trace is truncated");
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(
      Listing(fs::path(dir).parent_path().string()).empty() ||
      std::none_of(fs::directory_iterator(fs::path(dir).parent_path()),
                   fs::directory_iterator(), [](const fs::directory_entry& e) {
                     return e.path().filename().string().find(".failing.tmp") !=
                            std::string::npos;
                   }));
}

TEST(RankJobWriterTest, FileInTheWayOrNonEmptyFolderIsRefusedUntouched) {
  auto source = ReplicatedRankSource(Mi300(), 2);
  ASSERT_TRUE(source.ok());
  const std::string file = Scratch("a_file");
  std::ofstream(file) << "mine";
  auto job = WriteRankJob({file, "mi300", 2}, *source);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("a file is in the way"),
            std::string::npos)
      << job.status();
  // A parent that is a file.
  job = WriteRankJob({file + "/job", "mi300", 2}, *source);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find(
                file + "/job: a file is in the way of its parent folder"),
            std::string::npos)
      << job.status();
  const std::string full = Scratch("full");
  fs::create_directories(full);
  std::ofstream(full + "/keep.txt") << "mine";
  job = WriteRankJob({full, "mi300", 2}, *source);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("not empty"), std::string::npos);
  EXPECT_EQ(Listing(full), std::vector<std::string>{"keep.txt"});
  std::ifstream in(file);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "mine");
  // An empty folder is taken.
  const std::string empty_ok = Scratch("fresh");
  fs::create_directories(empty_ok);
  EXPECT_TRUE(WriteRankJob({empty_ok, "mi300", 2}, *source).ok());
  EXPECT_EQ(Listing(empty_ok).size(), 2u);
}

// What ASTRA-sim cannot run is refused before anything is written.
TEST(RankJobWriterTest, GroupsAstraSimCannotRunAreOneLineErrors) {
  const Graph& mi300 = Mi300();
  const std::string dir = Scratch("bad_groups");
  // World 1: the world group "0" holds one rank.
  auto one = ReplicatedRankSource(mi300, 1);
  ASSERT_TRUE(one.ok());
  auto job = WriteRankJob({dir, "mi300", 1}, *one);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("a group of one rank (ASTRA-sim "
                                        "never finishes it)"),
            std::string::npos)
      << job.status();
  EXPECT_NE(job.status().message().find("rank 0 node 11674"), std::string::npos)
      << job.status();
  // A collective naming a group its rank's table lacks.
  RankGraphSource unknown =
      [&](int64_t) -> absl::StatusOr<std::shared_ptr<const Graph>> {
    std::vector<ChakraProtoMsg::Node> nodes = mi300.nodes();
    for (auto& n : nodes)
      if (n.type() == ChakraProtoMsg::COMM_COLL_NODE)
        SetString(n.mutable_attr(), attr::kPgName, "7");
    return std::make_shared<const Graph>(
        Graph::Build(mi300.metadata(), std::move(nodes)));
  };
  job = WriteRankJob({dir, "mi300", 8}, unknown);
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find(
                "collective in group '7': no such group in the rank's table"),
            std::string::npos)
      << job.status();
  EXPECT_FALSE(fs::exists(dir));
  // A stem whose path says "empty": ASTRA-sim would ignore the group file.
  job = WriteRankJob({dir, "empty_run", 8}, *ReplicatedRankSource(mi300, 8));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("contains 'empty'"), std::string::npos);
}

TEST(ReplicatedJobTest, StridedGroupNeedsTheLayout) {
  const Graph& mi300 = Mi300();
  ChakraProtoMsg::GlobalMetadata metadata = mi300.metadata();
  std::vector<ProcessGroup> groups = DecodeProcessGroups(metadata.attr());
  ProcessGroup dp = groups[0];
  dp.name = "1";
  dp.ranks = {0, 4};
  groups.push_back(dp);
  EncodeProcessGroups(groups, metadata.mutable_attr());
  const Graph g = Graph::Build(metadata, mi300.nodes());
  auto source = ReplicatedRankSource(g, 16);
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find(
                "group '1' (ranks [0,4]) is neither the whole recorded world "
                "nor a block"),
            std::string::npos)
      << source.status();
}

// et-sim TRACE --world N --write-ranks DIR: the job, then the usual report;
// a bad DIR is a one-line error and exit 1, before any simulation.
TEST(WriteRanksCliTest, EtSimWritesTheJobOrFailsInOneLine) {
  Mi300();
  const std::string trace = ScratchPath("mi300.et");
  ASSERT_TRUE(fs::exists(trace));
  const std::string dir = Scratch("cli_job");
  const std::string out = Scratch("cli_out.txt");
  std::string cmd =
      absl::StrCat(ET_SIM_BIN, " ", trace, " --world 4 --write-ranks ", dir,
                   " > ", out, " 2>&1");
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(Listing(dir).size(), 4u);
  std::ifstream log(out);
  std::string text((std::istreambuf_iterator<char>(log)),
                   std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("--workload-configuration=" + dir + "/mi300"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("graph time"), std::string::npos) << text;
  // The same folder again: not empty, refused, nothing simulated.
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream again(out);
  std::string line, extra;
  std::getline(again, line);
  EXPECT_FALSE(std::getline(again, extra)) << "more than one line: " << extra;
  EXPECT_EQ(line.rfind("et-sim: error: " + dir +
                           ": folder exists and is not "
                           "empty",
                       0),
            0u)
      << line;
}

TEST(ReplicatedJobTest, StemDropsFoldersAndExtensions) {
  EXPECT_EQ(JobStemFor("runs/mi300.et"), "mi300");
  EXPECT_EQ(JobStemFor("/a/b/ddp.0.et.gz"), "ddp.0");
  EXPECT_EQ(JobStemFor("trace.json"), "trace");
}

}  // namespace
}  // namespace et::scaleout
