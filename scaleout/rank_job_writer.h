// Writes a job of N ranks as ASTRA-sim reads one: `DIR/<stem>.<rank>.et` for
// every rank (ASTRA-sim's `--workload-configuration=DIR/<stem>`), plus
// `DIR/<stem>.comm_groups.json` (its `--comm-group-configuration`) when a
// collective runs in a group smaller than the world: ASTRA-sim takes pg_name
// "0" (or none) as every rank and looks any other name up in that file, by
// integer id, the same file for every rank.
//
// The graphs come from a per-rank source, one rank at a time, each written and
// dropped before the next is asked for: a job of identical ranks costs one
// graph of memory, not N. Each rank's global metadata gets its `rank` and the
// job's `world_size`; its process-group table (pg_names, pg_ranks:<name>, ...)
// is the source's and must name the real global ranks of every group the
// rank's collectives use.
//
// All or nothing: everything goes into a hidden temporary folder beside DIR,
// renamed to DIR once every rank is written; on any error the folder is
// removed and DIR is untouched. DIR must not exist or be an empty folder (a
// job is never mixed with, or written over, other files).
#ifndef SCALEOUT_RANK_JOB_WRITER_H_
#define SCALEOUT_RANK_JOB_WRITER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace et::scaleout {

// Rank `rank`'s graph of the job (0 <= rank < world_size). Shared: a source
// whose ranks all equal one graph hands out that graph, not a copy per rank
// (a 2M-node rank copied took 12 GB).
using RankGraphSource =
    std::function<absl::StatusOr<std::shared_ptr<const Graph>>(int64_t rank)>;

// Where a rank's graph is streamed: Begin with its metadata, then Add each
// node.
class RankSink {
 public:
  virtual ~RankSink() = default;
  virtual absl::Status Begin(
      const ChakraProtoMsg::GlobalMetadata& metadata) = 0;
  virtual absl::Status Add(const ChakraProtoMsg::Node& node) = 0;
};

// Streams rank `rank`'s graph into `sink`, node by node: a job too large to
// hold as graphs (a 2M-node recorded rank held as one took 5.9 GB) is written
// from its input file without one.
using RankStreamSource =
    std::function<absl::Status(int64_t rank, RankSink* sink)>;

// Streams `graph` into `sink`: its metadata, then its nodes in order.
absl::Status StreamGraph(const Graph& graph, RankSink* sink);

struct RankJobSpec {
  std::string dir;   // the folder to create
  std::string stem;  // file names: <stem>.<rank>.et
  int64_t world_size = 0;
};

struct RankJobResult {
  std::vector<std::string> rank_paths;  // DIR/<stem>.<rank>.et, by rank
  // DIR/<stem>.comm_groups.json; empty when every collective spans the world.
  std::string comm_groups_path;
  // Group id -> its global ranks, as in the comm-group file.
  std::map<int64_t, std::vector<int64_t>> comm_groups;
  int64_t nodes = 0;        // over all ranks
  int64_t collectives = 0;  // COMM_COLL nodes over all ranks
  // Non-empty ("rank 0 runs ALL_REDUCE in groups 1 and 3") when a rank runs
  // one collective type in two groups smaller than the world: ASTRA-sim
  // (518bd51) finishes such a job, then aborts at exit (docs/astra-sim.md).
  std::string astra_teardown_abort;
};

// What ASTRA-sim's --workload-configuration is for a job written to `spec`.
std::string WorkloadConfiguration(const RankJobSpec& spec);

// Writes the job. Errors (one line, naming the rank, node or group): a source
// error; a collective whose pg_name is not a group of the rank's table, not a
// decimal id (ASTRA-sim parses it with stoi), a group "0" that is not the whole
// world, a rank not in a group it communicates in, one group id given
// different ranks by two ranks; DIR not empty or not creatable.
absl::StatusOr<RankJobResult> WriteRankJob(const RankJobSpec& spec,
                                           const RankGraphSource& source);
absl::StatusOr<RankJobResult> WriteRankJob(const RankJobSpec& spec,
                                           const RankStreamSource& source);

}  // namespace et::scaleout

#endif  // SCALEOUT_RANK_JOB_WRITER_H_
