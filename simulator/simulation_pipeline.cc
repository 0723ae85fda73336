// --layout pp=P on a trace recorded without pipeline parallelism: the
// one-rank graph simulated once for its layers' times, the stages planned
// (scaleout/pipeline_plan.h), one program per stage built in its schedule's
// order (scaleout/pipeline_schedule.h), and the pipeline's step, bubble and
// per-stage memory reported.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/path.h"
#include "base/status_macros.h"
#include "scaleout/pipeline_schedule.h"
#include "scaleout/replicated_job.h"
#include "simulator/report/memory_report.h"
#include "simulator/simulation.h"

namespace et::sim {

absl::Status Simulation::CheckPipelineOptions(
    const std::string& file, const scaleout::ParallelLayout& layout,
    const SimOptions& options) {
  const std::string what = absl::StrFormat("--layout %s", layout.ToString());
  if (options.micro_batches < 1) {
    return absl::InvalidArgumentError(PrefixPath(
        file, absl::StrFormat("%s: --micro-batches %d: a pipeline needs at "
                              "least one micro-batch",
                              what, options.micro_batches)));
  }
  if (!options.use_rank_symmetry &&
      layout.world() > layout.of(scaleout::Dim::kPp)) {
    return absl::InvalidArgumentError(PrefixPath(
        file, absl::StrFormat("%s: a synthesized pipeline runs one program "
                              "per stage for all of its ranks; without rank "
                              "symmetry only pp alone (a world of %d) runs",
                              what, layout.of(scaleout::Dim::kPp))));
  }
  return absl::OkStatus();
}

// ASTRA-sim's issue rules (one communication op at a time per rank, a send
// in flight until its receive is posted) and the interleaved order with
// collectives inside a pass (tensor parallelism's all-reduces) wait on each
// other: rank 0's chunk-2 gradient send waits for rank 1's receive, posted
// after rank 1's next pass, whose all-reduce waits behind rank 1's own
// gradient send, received only after rank 0's next pass, whose all-reduce
// waits behind rank 0's send. Refused rather than run into that deadlock.
absl::Status Simulation::CheckAstraInterleaved(
    const scaleout::PipelinePlan& plan, const SimOptions& options) const {
  if (options.scheduling != SchedulingMode::kAstraCompat ||
      plan.options.chunks < 2)
    return absl::OkStatus();
  for (const scaleout::StageCollective& c : plan.collectives) {
    if (c.per_step) continue;
    return absl::UnimplementedError(PrefixPath(
        files_[0],
        absl::StrFormat(
            "--layout %s --pp-schedule interleaved:%d --schedule astra: "
            "%s runs inside a pipeline pass (per micro-batch), and under "
            "ASTRA-sim's one-communication-op-at-a-time rule the "
            "interleaved order's sends and those collectives wait on each "
            "other (a deadlock); run it with 1f1b or gpipe, or without "
            "collectives inside the layers (tp=1)",
            scaled_->layout.ToString(), plan.options.chunks,
            models_[0]->name(c.node))));
  }
  return absl::OkStatus();
}

absl::Status Simulation::SplitPipeline(const SimOptions& options,
                                       const CommEnvironment& comm) {
  const scaleout::ParallelLayout& layout = scaled_->layout;
  const int64_t pp = layout.of(scaleout::Dim::kPp);
  const int64_t stride = layout.stride(scaleout::Dim::kPp);
  // The one-rank graph on one stage's ranks (pp is outermost: ranks 0 ..
  // stride - 1 hold every other dimension), for its nodes' times.
  RankClass one{programs_[0].get(), {}, 1.0};
  for (int64_t r = 0; r < stride; ++r) one.ranks.push_back(r);
  ASSIGN_OR_RETURN(SimResult first,
                   RunSimulation({one}, stride, options, comm));
  scaleout::NodeTimes times{first.timelines[0].start_ns,
                            first.timelines[0].finish_ns};
  scaleout::PipelineOptions popts;
  popts.pp = pp;
  popts.micro_batches = options.micro_batches;
  popts.schedule = options.pp_schedule;
  popts.chunks = options.pp_schedule == scaleout::PpSchedule::kInterleaved
                     ? options.pp_chunks
                     : 1;
  popts.split = options.pp_split;
  popts.dp_group_name = scaled_->dp_group_name;
  absl::StatusOr<scaleout::PipelinePlan> plan =
      scaleout::PlanPipeline(*models_[0], times, layout_lives_, popts);
  if (!plan.ok()) {
    return absl::InvalidArgumentError(PrefixPath(
        files_[0], absl::StrFormat("--layout %s: %s", layout.ToString(),
                                   plan.status().message())));
  }
  RETURN_IF_ERROR(CheckAstraInterleaved(*plan, options));
  ChakraProtoMsg::GlobalMetadata metadata = models_[0]->metadata();
  scaleout::ReplaceGroupTable(scaled_->groups, metadata.mutable_attr());
  const ComputeCostModel& compute = *compute_model_;
  // The one-rank program's notes (its host-time model) are about the times
  // the stages take; the stage programs' own would be about a few nodes.
  std::vector<std::string> notes = std::move(programs_[0]->notes);
  full_model_ = std::move(models_[0]);
  models_.clear();
  programs_.clear();
  PipelineResult result;
  for (int64_t s = 0; s < pp; ++s) {
    // The neighbours of rank s * stride (its pipeline's stage s), the last
    // stage's next the first: interleaved's last chunk of a round feeds the
    // first rank's next chunk.
    scaleout::StageGraph stage = scaleout::BuildStageGraph(
        *plan, s, *full_model_, metadata, ((s + pp - 1) % pp) * stride,
        ((s + 1) % pp) * stride, !full_model_->info().gpu_job);
    result.sends += stage.sends;
    result.recvs += stage.recvs;
    result.send_bytes += stage.send_bytes;
    if (options.keep_graph) stage_graphs_.push_back(stage.graph);
    models_.push_back(std::make_shared<const NodeModel>(
        NodeModel::FromGraph(stage.graph, ModelOptions{false, false, false})));
    absl::StatusOr<RankProgram> p =
        CompileRankProgram(*models_.back(), *compile_options_, compute);
    if (!p.ok())
      return absl::Status(p.status().code(),
                          PrefixPath(files_[0], p.status().message()));
    p->notes.clear();
    if (s == 0) p->notes = notes;
    // Exact stage times, except under ASTRA-sim's replay, which reads the
    // nodes' whole microseconds as the written files hold them.
    for (const auto& [id, ns] : stage.compute_ns) {
      if (p->astra_replay) break;
      const NodeIndex i = *models_.back()->Find(id);
      p->compute_ns[i] = ns;
      p->gap_ns[i] = 0;
    }
    programs_.push_back(std::make_unique<RankProgram>(std::move(*p)));
  }
  files_.assign(pp, files_[0]);
  for (int64_t r = 0; r < world_size_; ++r)
    program_of_rank_[r] =
        static_cast<int32_t>(layout.coord(r, scaleout::Dim::kPp));
  memory_rows_.clear();
  if (options.memory && !layout_lives_.empty()) {
    for (int64_t s = 0; s < pp; ++s) {
      const scaleout::PipelineStage& st = plan->stages[s];
      MemoryRow row;
      row.device = st.device;
      row.peak_bytes = st.peak_bytes;
      row.parts = st.peak_parts;
      row.peak_node_name = absl::StrFormat(
          "stage %d: %d micro-batch%s in flight", s, st.in_flight,
          plan->options.chunks > 1 ? " chunks" : "es");
      row.at_layout = true;
      memory_rows_.push_back(std::move(row));
    }
  }
  result.plan = std::move(*plan);
  pipeline_ = std::move(result);
  classes_.clear();
  return BuildClasses(options);
}

void Simulation::ReportPipeline() {
  if (!pipeline_) return;
  PipelineResult& pr = *pipeline_;
  const scaleout::PipelinePlan& plan = pr.plan;
  const int64_t mb = plan.options.micro_batches;
  // The pipeline's span: to the end of the last backward of any stage. A
  // stage is busy while it computes or runs a collective of its
  // micro-batches (its members all there); the bubble is the rest, the mean
  // over the stages (each class is one stage).
  pr.pipeline_ns = 0;
  std::vector<int64_t> busy(classes_.size(), 0);
  for (size_t c = 0; c < classes_.size(); ++c) {
    const NodeModel& g = *classes_[c].program->graph;
    const ClassTimeline& t = result_.timelines[c];
    int64_t end = 0;
    for (NodeIndex i = 0; i < g.size(); ++i)
      if (g.name(i).rfind("pp:backward", 0) == 0)
        end = std::max(end, t.finish_ns[i]);
    pr.pipeline_ns = std::max(pr.pipeline_ns, end);
    for (NodeIndex i = 0; i < g.size(); ++i) {
      if (g.kind(i) == NodeKind::kSend || g.kind(i) == NodeKind::kRecv ||
          t.finish_ns[i] < 0 || t.finish_ns[i] > end)
        continue;
      busy[c] += t.finish_ns[i] - t.start_ns[i];
    }
  }
  double idle = 0;
  for (int64_t b : busy)
    idle += pr.pipeline_ns > 0 ? 1.0 - static_cast<double>(b) /
                                           static_cast<double>(pr.pipeline_ns)
                               : 0;
  pr.bubble = busy.empty() ? 0 : idle / static_cast<double>(busy.size());
  pr.bubble_ratio = pr.bubble < 1 ? pr.bubble / (1 - pr.bubble) : 0;
  report_.notes.push_back(plan.note);
  std::vector<std::string> memory;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const scaleout::PipelineStage& st = plan.stages[s];
    memory.push_back(absl::StrFormat("stage %d %s (%d in flight)", s,
                                     MemorySizeText(st.peak_bytes),
                                     st.in_flight));
  }
  const bool interleaved = plan.options.chunks > 1;
  report_.notes.push_back(absl::StrFormat(
      "pipeline: %d micro-batches run in %.3f ms (first forward to last "
      "backward; the step adds the optimizer); bubble %.1f%% (the stages' idle "
      "share of that span, their mean) against the analytic %s = "
      "%.1f%% for balanced stages without communication: %+.1f points (these "
      "stages, the slowest %.2fx their mean, without communication: %.1f%%, "
      "%+.1f points); as idle over compute time %.1f%% against Narayanan et "
      "al.'s %s = %.1f%%; %d "
      "sends and %d receives of the boundary activations and their "
      "gradients per step (%d bytes sent, rank 0's pipeline); peak memory per "
      "stage (%s schedule): %s",
      mb, pr.pipeline_ns / 1e6, 100 * pr.bubble,
      interleaved ? "(P-1)/(VM+P-1)" : "(P-1)/(M+P-1)",
      100 * plan.analytic_bubble, 100 * (pr.bubble - plan.analytic_bubble),
      plan.imbalance, 100 * plan.staged_bubble,
      100 * (pr.bubble - plan.staged_bubble), 100 * pr.bubble_ratio,
      interleaved ? "(P-1)/(VM)" : "(P-1)/M", 100 * plan.analytic_bubble_ratio,
      pr.sends, pr.recvs, pr.send_bytes,
      scaleout::PpScheduleText(plan.options.schedule, plan.options.chunks),
      memory.empty() ? "not modelled (--no-memory)"
                     : absl::StrJoin(memory, ", ")));
}

}  // namespace et::sim
