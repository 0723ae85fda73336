// The job `et-sim TRACE --layout ...` simulates, as one graph per rank for the
// per-rank writer (scaleout/rank_job_writer.h): every rank runs a copy of the
// rank's graph (with the synthesized data-parallel collectives, if any), and
// its process-group table names the groups of the layout that rank is in,
// placed as Megatron places them (parallel_layout.h): each recorded group
// keeps the dimensions it spans (recorded_layout.h), the data-parallel group
// spans the layout's dp. Groups are named by integers unique across the job
// (ASTRA-sim's comm-group ids): the groups varying one set of dimensions get
// consecutive ids, one per instance; a group of the whole world is "0".
// Collectives without a group run in the group of the recorded world's
// dimensions. Sends and receives get their peer moved to the rank's own
// replica (peer_remap.h): a pipeline send in dp replica r targets the next
// stage of replica r.
#ifndef SCALEOUT_LAYOUT_JOB_H_
#define SCALEOUT_LAYOUT_JOB_H_

#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"
#include "scaleout/parallel_layout.h"
#include "scaleout/rank_job_writer.h"
#include "scaleout/recorded_layout.h"

namespace et::scaleout {

// A source of the layout's ranks' graphs. Keeps a reference to `graph`, which
// must outlive it; each call copies it once. `recorded` is the layout of the
// graph's recorded groups (DetectRecordedLayout on them); a group it does not
// name must be the synthesized data-parallel one (group_remap.h's
// kDpGroupName). Errors (one line, naming the group or node): a send or
// receive in a trace that records no rank of its own, or whose peer is
// outside the recorded world; a group that fits no
// dimension set (Megatron's embedding group keeps its recorded ranks, which
// no per-rank placement reproduces), a group the layout does not know.
absl::StatusOr<RankGraphSource> LayoutRankSource(const Graph& graph,
                                                 const RecordedLayout& recorded,
                                                 const ParallelLayout& target);

// A synthesized pipeline's job (scaleout/pipeline_schedule.h): rank r runs
// its stage's graph, `stages[r's pp coordinate]` (each must outlive the
// source), with the groups of LayoutRankSource and its sends and receives
// moved from rank 0's pipeline to r's (kPpGroupName's peers). Errors as
// LayoutRankSource's.
absl::StatusOr<RankGraphSource> PipelineRankSource(
    const std::vector<Graph>& stages, const RecordedLayout& recorded,
    const ParallelLayout& target);

}  // namespace et::scaleout

#endif  // SCALEOUT_LAYOUT_JOB_H_
