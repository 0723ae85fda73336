// The shared set-ups of the et-sim --layout tests (layout_fixture.h).
#include "tests/simulator/layout_fixture.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "model/process_group.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "scaleout/layout_job.h"
#include "scaleout/parallel_layout.h"
#include "scaleout/replicated_job.h"

namespace et::testing {

namespace {

// Where ConvertTrace writes the trace at `et_path`.
std::string ConvertedPath(const std::string& et_path) {
  const std::filesystem::path et(et_path);
  return absl::StrCat(::testing::TempDir(), "/", getpid(), "_",
                      et.parent_path().filename().string(), "_",
                      et.filename().string(), ".et");
}

// A recording's file in tests/data: <dir>/<stem>_<kind>[_r<rank>].json.gz.
std::string RecordingFile(const std::string& dir, const std::string& stem,
                          const std::string& kind, const std::string& rank) {
  return absl::StrCat(ET_TEST_DATA, "/", dir, "/", stem, "_", kind,
                      rank.empty() ? "" : absl::StrCat("_r", rank), ".json.gz");
}

}  // namespace

std::string ConvertTrace(const std::string& et_path,
                         const std::string& kineto_path, int rank) {
  const std::string out = ConvertedPath(et_path);
  // Converted once per process: a test asks for the same recording often.
  static std::set<std::string>* converted = new std::set<std::string>;
  if (converted->count(out) > 0) return out;
  convert::ConvertOptions options;
  options.rank = rank;
  options.kineto_path = kineto_path;
  auto report = convert::ConvertFile(et_path, out, options);
  EXPECT_TRUE(report.ok()) << report.status();
  if (report.ok()) converted->insert(out);
  return out;
}

std::string ConvertRecording(const std::string& dir, const std::string& stem,
                             int rank) {
  const std::string r = rank < 0 ? "" : absl::StrCat(rank);
  return ConvertTrace(RecordingFile(dir, stem, "et", r),
                      RecordingFile(dir, stem, "kineto", r), rank);
}

std::string ConvertRecordedJob(const std::string& dir, const std::string& stem,
                               int ranks) {
  for (int r = 0; r < ranks; ++r) ConvertRecording(dir, stem, r);
  // ConvertTrace's names of the ranks' files, rank r's as %d.
  return ConvertedPath(RecordingFile(dir, stem, "et", "%d"));
}

std::unique_ptr<sim::Simulation> MustRun(const sim::SimInput& input,
                                         const sim::SimOptions& options) {
  auto sim = sim::Simulation::Run(input, options);
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? std::move(*sim) : nullptr;
}

std::unique_ptr<sim::Simulation> SimulateLayout(const std::string& path,
                                                const std::string& layout) {
  sim::SimOptions options;
  if (!layout.empty()) options.layout = *scaleout::ParseLayout(layout);
  return MustRun({path, 0}, options);
}

std::unique_ptr<sim::Simulation> SimulateRecordedJob(const std::string& dir,
                                                     const std::string& stem,
                                                     int ranks) {
  return MustRun({ConvertRecordedJob(dir, stem, ranks), ranks},
                 sim::SimOptions{});
}

absl::StatusOr<LayoutJob> RunLayoutJob(const std::string& path,
                                       sim::SimOptions options) {
  options.keep_graph = true;
  const scaleout::ParallelLayout target = *options.layout;
  auto sim = sim::Simulation::Run({path, 0}, options);
  if (!sim.ok()) return sim.status();
  const sim::Simulation& s = **sim;
  if (!s.layout_graph().has_value())
    return absl::InternalError(absl::StrCat(path, ": no layout graph kept"));
  auto source = scaleout::LayoutRankSource(*s.layout_graph(),
                                           *s.recorded_layout(), target);
  if (!source.ok()) return source.status();
  return LayoutJob{std::move(*sim), std::move(*source)};
}

std::map<CollectiveKey, int64_t> CollectiveCalls(const sim::Report& report) {
  std::map<CollectiveKey, int64_t> out;
  for (const sim::CollectiveRow& c : report.collectives)
    out[{c.type, c.bytes, c.group_size}] += c.calls;
  return out;
}

bool HasNoteWith(const sim::Report& report,
                 const std::vector<std::string>& parts) {
  for (const std::string& note : report.notes) {
    bool all = true;
    for (const std::string& part : parts)
      all = all && absl::StrContains(note, part);
    if (all) return true;
  }
  return false;
}

std::map<GroupCommKey, int64_t> CollectivesByGroup(const Graph& graph) {
  const std::vector<ProcessGroup> groups =
      DecodeProcessGroups(graph.metadata().attr());
  std::map<GroupCommKey, int64_t> out;
  for (const auto& node : graph.nodes()) {
    if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    const std::string pg = GetString(node, attr::kPgName).value_or("");
    std::vector<int64_t> members;
    for (const ProcessGroup& g : groups)
      if (g.name == pg) members = g.ranks;
    ++out[{members, GetInt(node, attr::kCommType).value_or(-1)}];
  }
  return out;
}

int64_t CollectivesOn(const Graph& graph, const std::vector<int64_t>& members) {
  int64_t n = 0;
  for (const auto& [key, count] : CollectivesByGroup(graph))
    if (key.first == members) n += count;
  return n;
}

absl::Status RunEtSimQuietly(const sim::EtSimFlags& flags,
                             sim::EtSimOutput* output) {
  output->print_out = [](const std::string&) {};
  output->print_err = [](const std::string&) {};
  return sim::RunEtSim(flags, output);
}

std::string WrittenRank(const std::string& dir, const std::string& trace_path,
                        int64_t rank) {
  return absl::StrCat(dir, "/", scaleout::JobStemFor(trace_path), ".",
                      rank < 0 ? "%d" : absl::StrCat(rank), ".et");
}

absl::StatusOr<double> WriteRanksQuietly(const sim::EtSimFlags& flags) {
  sim::EtSimOutput output;
  if (absl::Status s = RunEtSimQuietly(flags, &output); !s.ok()) return s;
  if (!output.report.has_value())
    return absl::InternalError("et-sim gave no report");
  return output.report->step.predicted_us;
}

void ExpectWrittenJobRunsTheStep(const sim::EtSimFlags& flags, int64_t ranks,
                                 const sim::SimOptions& options,
                                 double predicted_us) {
  auto job = sim::Simulation::Run(
      {WrittenRank(flags.write_ranks, flags.positional.at(1)), ranks}, options);
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_NEAR((*job)->report().step.predicted_us / predicted_us, 1.0, 0.01);
}

void PointToPointMessages::Add(const NodeModel& model, int64_t rank) {
  for (NodeIndex i = 0; i < model.size(); ++i) {
    if (model.kind(i) == NodeKind::kSend)
      sent.insert({rank, model.comm(i)->peer, model.comm(i)->tag});
    if (model.kind(i) == NodeKind::kRecv)
      received.insert({model.comm(i)->peer, rank, model.comm(i)->tag});
  }
}

void ExpectEachSendReceivedOnce(const PointToPointMessages& messages) {
  EXPECT_EQ(messages.sent, messages.received);
  const std::set<PointToPointMessages::Message> distinct(messages.sent.begin(),
                                                         messages.sent.end());
  EXPECT_EQ(distinct.size(), messages.sent.size()) << "one tag per message";
}

}  // namespace et::testing
