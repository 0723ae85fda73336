// What the et-sim --layout tests on real recordings share (tp_synth_test,
// tp_resplit_test, tp_sp_test, ep_synth_test, the pp_*_tests): a recording in
// tests/data converted to a .et once per test process, a trace run at a
// layout or a recorded job run as it was, the collectives of a report or of a
// written rank counted, and et-sim's command run with nothing printed. Each
// test keeps what it asserts; a step that fails here fails the test (gtest's
// EXPECT) and hands back an empty result. Not thread-safe.
#ifndef TESTS_SIMULATOR_LAYOUT_FIXTURE_H_
#define TESTS_SIMULATOR_LAYOUT_FIXTURE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/rank_job_writer.h"
#include "simulator/et_sim_command.h"
#include "simulator/simulation.h"

namespace et::testing {

// The PyTorch execution trace at `et_path` with its Kineto trace
// (`kineto_path`; "" for none) converted as rank `rank` (-1: the trace's
// own), to <TempDir>/<pid>_<folder>_<file>.et (<folder> the one holding it),
// once per test process. Returns that path.
std::string ConvertTrace(const std::string& et_path,
                         const std::string& kineto_path, int rank = -1);

// A recording in tests/data/<dir> named as the recorders name them:
// <stem>_et.json.gz with <stem>_kineto.json.gz (rank -1: a one-rank
// recording), or rank r's <stem>_et_r<r>.json.gz and
// <stem>_kineto_r<r>.json.gz converted as rank r.
std::string ConvertRecording(const std::string& dir, const std::string& stem,
                             int rank = -1);

// Every rank of a recorded job converted; returns their %d pattern.
std::string ConvertRecordedJob(const std::string& dir, const std::string& stem,
                               int ranks);

// A simulation that must succeed; null (and the test failed) when it did not.
std::unique_ptr<sim::Simulation> MustRun(const sim::SimInput& input,
                                         const sim::SimOptions& options);

// The trace at `path` under --layout `layout` ("": as recorded).
std::unique_ptr<sim::Simulation> SimulateLayout(const std::string& path,
                                                const std::string& layout);

// A recorded job, every rank's files, simulated as it ran.
std::unique_ptr<sim::Simulation> SimulateRecordedJob(const std::string& dir,
                                                     const std::string& stem,
                                                     int ranks);

// A trace simulated at a layout with its graph kept, and the source of the
// rank graphs --write-ranks writes from it (scaleout/layout_job.h).
struct LayoutJob {
  std::unique_ptr<sim::Simulation> sim;
  scaleout::RankGraphSource rank_graph;
};
// `options` must name a layout; keep_graph is set here.
absl::StatusOr<LayoutJob> RunLayoutJob(const std::string& path,
                                       sim::SimOptions options);

// (type, bytes, group size) -> calls, over a report's collective rows.
using CollectiveKey = std::tuple<std::string, uint64_t, int64_t>;
std::map<CollectiveKey, int64_t> CollectiveCalls(const sim::Report& report);

// Whether one of the report's notes holds every one of `parts`.
bool HasNoteWith(const sim::Report& report,
                 const std::vector<std::string>& parts);

// (group members, comm type) -> collective nodes of a rank's graph (a
// --write-ranks file); members {} where the group is not in the graph's
// process-group table.
using GroupCommKey = std::pair<std::vector<int64_t>, int64_t>;
std::map<GroupCommKey, int64_t> CollectivesByGroup(const Graph& graph);

// The collective nodes of `graph` on the group of exactly `members`.
int64_t CollectivesOn(const Graph& graph, const std::vector<int64_t>& members);

// et-sim's command (simulator/et_sim_command.h) with its printing dropped.
absl::Status RunEtSimQuietly(const sim::EtSimFlags& flags,
                             sim::EtSimOutput* output);

// Rank `rank`'s file (or, with rank -1, the %d pattern) of the job
// --write-ranks `dir` wrote from the trace at `trace_path`.
std::string WrittenRank(const std::string& dir, const std::string& trace_path,
                        int64_t rank = -1);

// A job et-sim wrote: `flags` (a trace, --layout, --write-ranks) run with
// nothing printed; the step that run predicted.
absl::StatusOr<double> WriteRanksQuietly(const sim::EtSimFlags& flags);

// The job `flags` wrote (WriteRanksQuietly), its `ranks` files simulated
// again under `options`, predicts the writing run's step within 1%.
void ExpectWrittenJobRunsTheStep(const sim::EtSimFlags& flags, int64_t ranks,
                                 const sim::SimOptions& options,
                                 double predicted_us);

// The point-to-point messages of a written job's ranks: (sender, receiver,
// tag) of each send and of each receive. ASTRA-sim's feeder pairs them by tag
// and refuses one without ("Attribute comm_tag not found").
struct PointToPointMessages {
  using Message = std::tuple<int64_t, int64_t, int32_t>;
  std::multiset<Message> sent, received;
  // Adds the sends and receives of rank `rank`'s graph.
  void Add(const NodeModel& model, int64_t rank);
};
// Each send's triple is one receive's, and no two sends share one.
void ExpectEachSendReceivedOnce(const PointToPointMessages& messages);

}  // namespace et::testing

#endif  // TESTS_SIMULATOR_LAYOUT_FIXTURE_H_
