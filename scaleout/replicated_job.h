// The job `et-sim TRACE --world N` simulates, as one graph per rank: every rank
// runs a copy of the recorded rank's graph, and its process-group table and
// its collectives' pg_name say the groups of the N-rank world that rank is in:
//  - a group over the whole recorded world (no rank list, or every recorded
//    rank) spans the N ranks and keeps its name;
//  - a group whose ranks are a block of consecutive ranks [a, a+k) with k
//    dividing N (tensor parallelism as Megatron places it, tp innermost) is
//    tiled: rank r is in the block [k*(r/k), k*(r/k)+k). The recorded block
//    keeps its name; the others get new integer names after the largest
//    recorded one, so that every group of the job has one name on every rank.
// Any other group (strided, or not dividing N) is an error: re-mapping those
// needs the layout (--layout).
#ifndef SCALEOUT_REPLICATED_JOB_H_
#define SCALEOUT_REPLICATED_JOB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"
#include "model/process_group.h"
#include "proto/attributes.h"
#include "scaleout/rank_job_writer.h"

namespace et::scaleout {

// A source of the N ranks' graphs. Keeps a reference to `recorded`, which
// must outlive it; each call copies it once (the writer drops each rank's
// copy before asking for the next).
absl::StatusOr<RankGraphSource> ReplicatedRankSource(const Graph& recorded,
                                                     int64_t world_size);

// The same job from the recorded rank's file: where no group needs tiling
// (every rank is the recorded graph), each rank is streamed from the file,
// never held in memory; else the graph is loaded once and each rank copied
// from it.
absl::StatusOr<RankStreamSource> ReplicatedFileSource(const std::string& path,
                                                      int64_t world_size);

// Replaces the process-group table in `attrs` (a graph's metadata, or the
// node that keeps one) with `groups`.
void ReplaceGroupTable(const std::vector<ProcessGroup>& groups,
                       AttrList* attrs);

// The file stem for a job made from `trace_path`: its name without folders,
// ".gz", ".et" or ".json" ("runs/mi300.et" -> "mi300").
std::string JobStemFor(const std::string& trace_path);

}  // namespace et::scaleout

#endif  // SCALEOUT_REPLICATED_JOB_H_
