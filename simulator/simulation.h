// One et-sim run from files to report: resolves the inputs (one .et for every
// rank, a rank pattern such as out.%d.et, or a directory of per-rank files),
// compiles each distinct graph once, groups ranks into symmetry classes (same
// graph, same speed), fits the topology and runs the engine. Owns the graphs
// and programs it simulates.
#ifndef SIMULATOR_SIMULATION_H_
#define SIMULATOR_SIMULATION_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"
#include "model/node_model.h"
#include "scaleout/dp_sync.h"
#include "scaleout/expert_parallel.h"
#include "scaleout/pipeline_plan.h"
#include "scaleout/recorded_layout.h"
#include "scaleout/tensor_parallel.h"
#include "simulator/engine/engine.h"
#include "simulator/engine/rank_program.h"
#include "simulator/platform/sim_options.h"
#include "simulator/report/report.h"
#include "step/storage_lives.h"

namespace et::sim {

class LayoutCache;

struct SimInput {
  std::string path;           // a file, a directory, or a pattern containing %d
  int64_t pattern_ranks = 0;  // ranks for a pattern (--ranks N)
  // `path`'s graph already read (one file): used instead of reading it again
  // (--search runs many layouts of one trace).
  std::shared_ptr<const Graph> graph = nullptr;
  // What many layouts of one trace share (--search): its graph (used instead
  // of `graph`), node model and tensor-parallel splits, each computed once
  // (simulator/layout_cache.h). Without it each is computed per run.
  std::shared_ptr<LayoutCache> cache = nullptr;
};

class Simulation {
 public:
  // Loads and runs. Errors name the file (and node) at fault.
  static absl::StatusOr<std::unique_ptr<Simulation>> Run(
      const SimInput& input, const SimOptions& options);
  // The two halves of Run, for a caller that checks the loaded inputs first.
  static absl::StatusOr<std::unique_ptr<Simulation>> Load(
      const SimInput& input, const SimOptions& options);
  absl::Status Simulate(const SimOptions& options);

  // The distinct graphs loaded, and their files.
  const NodeModel& model(size_t k) const { return *models_[k]; }
  const std::string& file(size_t k) const { return files_[k]; }

  const Report& report() const { return report_; }
  const SimResult& result() const { return result_; }
  const std::vector<RankClass>& classes() const { return classes_; }
  int64_t world_size() const { return world_size_; }
  // The GPU preset the compute model (roofline) uses: --device, else the
  // trace's GPU, else H100.
  const std::string& compute_device() const { return compute_device_; }
  // With --layout: the trace's groups on the job and the recorded layout.
  const std::optional<scaleout::ScaledGroups>& scaled_groups() const {
    return scaled_;
  }
  const std::optional<scaleout::RecordedLayout>& recorded_layout() const {
    return recorded_;
  }
  // With --layout and SimOptions::keep_graph: the rank's graph as simulated
  // (with the synthesized collectives).
  const std::optional<Graph>& layout_graph() const { return graph_; }
  // The memory model of a class's program: its row (the peak the report
  // gives) and, with SimOptions::keep_memory_lives, the storage lives it was
  // summed from (at the layout); nullptr where the model did not run or
  // predicted no peak (a trace without tensor sizes).
  const MemoryRow* MemoryRowOf(const RankProgram* program) const;
  const std::vector<StorageLife>* MemoryLivesOf(
      const RankProgram* program) const;
  // The data-parallel sync --layout added (or why none), when it ran.
  const std::optional<scaleout::DpSyncResult>& dp_sync() const {
    return dp_sync_;
  }
  // --layout with pp > 1 on a trace recorded without it: the stages
  // (scaleout/pipeline_plan.h) and what their simulation measured.
  struct PipelineResult {
    scaleout::PipelinePlan plan;
    // From the first forward to the last backward's end (the optimizer
    // after it left out), on the slowest stage.
    int64_t pipeline_ns = 0;
    // The stages' idle share of pipeline_ns, their mean.
    double bubble = 0;
    // The same idle time over the busy (compute) time: bubble / (1 -
    // bubble), Narayanan et al.'s form, (P-1)/(V M) for balanced stages.
    double bubble_ratio = 0;
    // Rank 0's replica of the pipeline (one rank per stage), per step.
    int64_t sends = 0, recvs = 0, send_bytes = 0;
  };
  const std::optional<PipelineResult>& pipeline() const { return pipeline_; }
  // With a synthesized pipeline and SimOptions::keep_graph: each stage's
  // graph, in stage order (rank 0's pipeline).
  const std::vector<Graph>& stage_graphs() const { return stage_graphs_; }

 private:
  absl::Status LoadFiles(const SimInput& input, const SimOptions& options);
  absl::Status BuildClasses(const SimOptions& options);
  // With --layout: each collective row's group says the dimensions it varies
  // ("2 (dp)"; the recorded job's every rank becomes "tp" on a TP8 trace).
  void NameGroupDimensions();
  // One rank's file of a job that records its world (and communicates), with
  // neither --world nor --layout: simulated in that world, the other ranks
  // as its replicas, never as a world of one whose collectives are free.
  void InRecordedWorld(const NodeModel& model, const std::string& file,
                       SimOptions* compile_options);
  // --layout: the world and the re-mapped groups from the loaded rank.
  absl::Status ApplyLayout(const std::string& file, const NodeModel& model,
                           const SimOptions& options);
  // --layout tp=T on a trace recorded without tensor parallelism: the
  // synthesized split (scaleout/tensor_parallel.h); replaces models_.back().
  absl::Status SplitTensorParallel(const std::string& file,
                                   const ModelOptions& model_options,
                                   bool sequence_parallel);
  // --layout ep=E on a trace recorded without expert parallelism: the
  // synthesized split (scaleout/expert_parallel.h), after any tp split;
  // replaces models_.back() (simulation_expert.cc).
  absl::Status SplitExpertParallel(const std::string& file,
                                   const ModelOptions& model_options);
  // The members of the scaled job's group `name` (empty when none).
  std::vector<int64_t> ScaledGroupRanks(const std::string& name) const;
  // A layout's split refused: the file, the layout and why.
  absl::Status LayoutRefusal(const std::string& file,
                             const absl::Status& why) const;
  // The rank's graph the layout's steps start from: the split one, if any,
  // else `file` loaded (shared, not copied).
  absl::StatusOr<std::shared_ptr<const Graph>> LayoutBaseGraph(
      const std::string& file) const;
  // --dp-sync: the synthesized data-parallel sync; replaces models_.back()
  // with the graph that holds it.
  absl::Status SyncDataParallel(const std::string& file,
                                const SimOptions& options,
                                const ModelOptions& model_options);
  // AddDpSync's result for a dp whose sync the layout cache holds (the
  // nodes are the same for every dp): the cached one at this dp, its model
  // put in models_.back(); AddDpSync itself if the cached model does not
  // take this dp's group table.
  absl::StatusOr<scaleout::DpSyncResult> SharedDpSync(
      const NodeModel& base, const scaleout::DpSyncOptions& sync,
      const ModelOptions& model_options);
  // Takes AddDpSync's result: the model (or graph) that holds the sync, or
  // `loaded` (kept when non-null) when it added nothing.
  void AdoptDpSync(scaleout::DpSyncResult sync, const SimOptions& options,
                   const ModelOptions& model_options, const Graph* loaded);
  // The memory model of models_.back() (at the layout's dp and --dp-sync
  // stage with --layout), appended to memory_rows_.
  void ModelMemory(const SimOptions& options);
  // --layout pp=P: the one-rank graph simulated once (its layer times), its
  // stages planned, and one program per stage in place of its own; ranks
  // run their stage's (simulation_pipeline.cc).
  absl::Status CheckAstraInterleaved(const scaleout::PipelinePlan& plan,
                                     const SimOptions& options) const;
  absl::Status SplitPipeline(const SimOptions& options,
                             const CommEnvironment& comm);
  // What a synthesized pipeline refuses (--micro-batches < 1, no rank
  // symmetry), one line naming `file`.
  static absl::Status CheckPipelineOptions(
      const std::string& file, const scaleout::ParallelLayout& layout,
      const SimOptions& options);
  // The pipeline's step, bubble and per-stage memory on report_.
  void ReportPipeline();
  // The memory rows and verdict on report_.
  void ReportMemory(const SimOptions& options);

  std::string compute_device_;
  std::vector<std::string> files_;  // per distinct graph
  // Shared with the layout cache, when there is one: never modified.
  std::vector<std::shared_ptr<const NodeModel>> models_;
  // The file's model as this run loaded it (not shared with a cache), while
  // models_.back() holds it: the data-parallel sync may take its columns.
  std::weak_ptr<NodeModel> owned_model_;
  std::vector<std::unique_ptr<RankProgram>> programs_;
  std::vector<int32_t> program_of_rank_;
  std::vector<RankClass> classes_;
  int64_t world_size_ = 0;
  std::optional<scaleout::ScaledGroups> scaled_;
  std::optional<scaleout::RecordedLayout> recorded_;
  std::optional<Graph> graph_;
  std::optional<scaleout::DpSyncResult> dp_sync_;
  std::shared_ptr<const scaleout::TpShardResult> tp_split_;
  std::shared_ptr<const scaleout::EpShardResult> ep_split_;
  std::shared_ptr<const Graph> input_graph_;  // SimInput::graph
  std::shared_ptr<LayoutCache> cache_;        // SimInput::cache
  // The one file's graph: SimInput's, else read from `file`.
  absl::StatusOr<std::shared_ptr<const Graph>> ReadGraph(
      const std::string& file) const;
  // --layout pp=P: the one-rank model the stages come from, its lives at the
  // layout, the options its program was compiled with, the result.
  std::shared_ptr<const NodeModel> full_model_;
  std::vector<StorageLife> layout_lives_;
  std::optional<SimOptions> compile_options_;
  std::optional<ComputeCostModel> compute_model_;
  std::optional<PipelineResult> pipeline_;
  std::vector<Graph> stage_graphs_;
  // The first rank file (index into files_) whose trace records no tensor
  // sizes: no memory peak is predicted.
  std::optional<size_t> memory_unknown_in_;
  std::string world_note_;
  std::string layout_note_;
  std::string dp_sync_note_;
  std::string tp_note_;
  std::string ep_note_;
  std::vector<MemoryRow> memory_rows_;  // per distinct graph
  // With keep_memory_lives: the lives memory_rows_ were summed from.
  std::vector<std::vector<StorageLife>> memory_lives_;
  int64_t capacity_bytes_ = 0;
  std::string capacity_source_;
  SimResult result_;
  Report report_;
};

// The per-rank files an input names, in rank order (the rule of
// base/rank_files.h: a pattern, a directory of *.et, or one file).
absl::StatusOr<std::vector<std::string>> ResolveRankFiles(
    const SimInput& input);

}  // namespace et::sim

#endif  // SIMULATOR_SIMULATION_H_
