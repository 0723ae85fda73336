// Input resolution, symmetry classes, and the run.
#include "simulator/simulation.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/input_limits.h"
#include "base/path.h"
#include "base/rank_files.h"
#include "base/status_macros.h"
#include "model/graph.h"
#include "scaleout/memory_at_layout.h"
#include "scaleout/peer_remap.h"
#include "simulator/calibration/comm_calibration.h"
#include "simulator/calibration/comm_fit.h"
#include "simulator/layout_cache.h"
#include "simulator/platform/compute_cost_model.h"
#include "simulator/platform/network.h"
#include "simulator/report/kernel_table.h"
#include "simulator/report/report_checks.h"
#include "step/memory_timeline.h"
#include "step/storage_lives.h"

namespace et::sim {
namespace {

bool HasCommunication(const NodeModel& model) {
  for (NodeIndex i = 0; i < model.size(); ++i) {
    if (IsCommunication(model.kind(i))) return true;
  }
  return false;
}

// --layout: every send's and receive's peer can be moved to the simulated
// rank's replica (scaleout/peer_remap.h); rank_program.cc moves them.
absl::Status CheckPeersMove(const std::string& file, const NodeModel& model,
                            const scaleout::ParallelLayout& recorded,
                            const scaleout::ParallelLayout& target) {
  for (NodeIndex i = 0; i < model.size(); ++i) {
    const NodeKind kind = model.kind(i);
    if (kind != NodeKind::kSend && kind != NodeKind::kRecv) continue;
    if (model.comm(i)->peer < 0) continue;  // no peer recorded: none to move
    const std::string node =
        absl::StrFormat("--layout: node %d (%s)", model.id(i), model.name(i));
    if (model.info().rank < 0) {
      return absl::InvalidArgumentError(PrefixPath(
          file, absl::StrFormat(
                    "%s talks to rank %d but the trace records no rank of "
                    "its own, so its peer cannot be placed on the new job; "
                    "convert with --rank",
                    node, model.comm(i)->peer)));
    }
    absl::StatusOr<int64_t> moved = scaleout::MovePeer(
        recorded, model.info().rank, model.comm(i)->peer, target, 0);
    if (!moved.ok()) {
      return absl::InvalidArgumentError(
          PrefixPath(file, absl::StrCat(node, ": ", moved.status().message())));
    }
  }
  return absl::OkStatus();
}

// The compute model for a job: on --device's GPU, else on the trace's own
// GPU when it has a preset (an A100 trace is not predicted on an H100), else
// on an H100.
absl::StatusOr<ComputeCostModel> ComputeModelFor(const NodeModel& model,
                                                 const SimOptions& options) {
  if (!options.device.empty() || model.info().device_name.empty())
    return ComputeCostModel::Create(options);
  const std::string presets = options.device_file.empty()
                                  ? DefaultDevicePresetsPath()
                                  : options.device_file;
  absl::StatusOr<DeviceProfile> own =
      DeviceProfileForName(presets, model.info().device_name);
  if (!own.ok()) return ComputeCostModel::Create(options);
  SimOptions on_own = options;
  on_own.device = own->name;
  return ComputeCostModel::Create(on_own);
}

// Beyond this, two ranks' recordings started apart are two runs: ranks of one
// job meet at the process group's rendezvous before either records.
constexpr int64_t kMaxRankStartGapSeconds = 300;

std::string RecordTimeText(const TraceInfo& info) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S",
                          absl::FromUnixSeconds(info.record_time_s),
                          absl::UTCTimeZone());
}

// The per-rank files of one job each say so: the world they were recorded
// in is as many ranks as there are files, and the rank they record is their
// place. Files of two jobs together (a DDP run's rank 0 beside a
// tensor-parallel run's rank 1) otherwise simulate to a deadlock report
// about collectives "never issued", which names no file.
absl::Status CheckOneJob(const std::vector<std::string>& files, size_t index,
                         const TraceInfo& info, const TraceInfo& first,
                         bool groups_given) {
  const std::string& file = files[index];
  // One recorder writes the same facts for every rank: a world recorded in
  // one file and another world, or none, in the other is two recordings.
  if (info.world_size != first.world_size) {
    auto world = [](int64_t w) {
      return w > 0 ? absl::StrFormat("a world of %d ranks", w)
                   : std::string("no world size");
    };
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s records %s, %s %s: not one job's ranks", file,
        world(info.world_size), files.front(), world(first.world_size)));
  }
  if (info.world_size > 0 && !groups_given &&
      info.world_size != static_cast<int64_t>(files.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: recorded in a job of %d ranks (its world_size), but %d per-rank "
        "files were given (%s ... %s): not one job's ranks",
        file, info.world_size, files.size(), files.front(), files.back()));
  }
  // Ranks of one job start their observers together (after the process
  // group's rendezvous, seconds apart); two runs of one script are as far
  // apart as a run takes at least.
  const int64_t apart_s = std::abs(info.record_time_s - first.record_time_s);
  if (info.record_time_s > 0 && first.record_time_s > 0 &&
      apart_s > kMaxRankStartGapSeconds) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: recorded %s, %s %s (%d s apart; the ranks of one job start "
        "their observers within seconds): not one run's ranks",
        file, RecordTimeText(info), files.front(), RecordTimeText(first),
        apart_s));
  }
  if (info.rank >= 0 && info.rank != static_cast<int64_t>(index)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: recorded as rank %d, but it is the file of rank %d here (by its "
        "name or place): not one job's ranks, or misnamed",
        file, info.rank, index));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ResolveRankFiles(
    const SimInput& input) {
  return ResolveRankPaths(input.path, input.pattern_ranks, ".et");
}

absl::Status Simulation::LoadFiles(const SimInput& input,
                                   const SimOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ResolveRankFiles(input));
  // Checked before any file is read; the model itself follows the first
  // graph's GPU when --device is not given (ComputeModelFor).
  RETURN_IF_ERROR(ComputeCostModel::Create(options).status());
  std::optional<ComputeCostModel> compute;
  // Checked before anything is sized by it: a world of 2^62 once reached
  // vector::resize and aborted with std::length_error.
  if (options.world_size < 0 || options.world_size > kMaxRanks) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: --world %d: must be in [1, %d]", input.path,
                        options.world_size, kMaxRanks));
  }
  if (options.layout && files.size() != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: --layout takes one rank's trace (every rank of the job runs it), "
        "got %d per-rank files",
        input.path, files.size()));
  }
  if (options.recorded_layout && !options.layout) {
    return absl::InvalidArgumentError(
        "--recorded-layout says how the trace was recorded; it needs --layout "
        "(the job to predict)");
  }
  if (files.size() == 1) {
    world_size_ = options.world_size > 0 ? options.world_size : 1;
  } else {
    if (options.world_size > 0 &&
        options.world_size != static_cast<int64_t>(files.size())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: --world %d but %d per-rank files", input.path,
                          options.world_size, files.size()));
    }
    world_size_ = static_cast<int64_t>(files.size());
  }
  // The IO table is kept only for what reads it: calibration keys.
  ModelOptions model_options;
  model_options.keep_io = options.compute_model == ComputeModel::kCalibrated;
  model_options.keep_tensors = options.memory;
  SimOptions compile_options = options;
  // Per-rank files are the recorded world itself: no other job to tell apart.
  if (files.size() > 1) compile_options.world_size = 0;
  if (files.size() == 1) {
    cache_ = input.cache;
    input_graph_ = cache_ ? cache_->graph() : input.graph;
  }
  for (const std::string& f : files) {
    if (cache_) {
      models_.push_back(cache_->Model(model_options));
    } else {
      absl::StatusOr<NodeModel> g =
          input_graph_ ? NodeModel::FromGraph(*input_graph_, model_options)
                       : NodeModel::Load(f, model_options);
      if (!g.ok())
        return absl::Status(g.status().code(),
                            PrefixPath(f, g.status().message()));
      auto owned = std::make_shared<NodeModel>(std::move(*g));
      owned_model_ = owned;
      models_.push_back(std::move(owned));
    }
    if (files.size() == 1 && options.world_size == 0 && !options.layout)
      InRecordedWorld(*models_.back(), f, &compile_options);
    if (files.size() > 1) {
      RETURN_IF_ERROR(CheckOneJob(files, files_.size(), models_.back()->info(),
                                  models_.front()->info(),
                                  !options.groups_override.empty()));
    }
    if (!compute) {
      ASSIGN_OR_RETURN(compute, ComputeModelFor(*models_.back(), options));
      compute_device_ = compute->device().name;
      if (options.device_memory_gib > 0) {
        capacity_bytes_ = static_cast<int64_t>(
            options.device_memory_gib * static_cast<double>(int64_t{1} << 30));
        capacity_source_ = "--device-memory-gib";
      } else if (compute->device().memory_bytes > 0) {
        capacity_bytes_ = compute->device().memory_bytes;
        capacity_source_ = absl::StrCat(compute->device().name, " preset");
      }
    }
    if (options.layout) {
      RETURN_IF_ERROR(ApplyLayout(f, *models_.back(), options));
      RETURN_IF_ERROR(
          SplitTensorParallel(f, model_options, options.sequence_parallel));
      RETURN_IF_ERROR(SplitExpertParallel(f, model_options));
      RETURN_IF_ERROR(SyncDataParallel(f, options, model_options));
      compile_options.scaled_groups = scaled_;
      compile_options_ = compile_options;
    }
    if (options.memory) ModelMemory(options);
    absl::StatusOr<RankProgram> p =
        CompileRankProgram(*models_.back(), compile_options, *compute);
    if (!p.ok())
      return absl::Status(p.status().code(),
                          PrefixPath(f, p.status().message()));
    programs_.push_back(std::make_unique<RankProgram>(std::move(*p)));
    files_.push_back(f);
  }
  compute_model_ = compute;
  program_of_rank_.resize(world_size_);
  for (int64_t r = 0; r < world_size_; ++r) {
    program_of_rank_[r] = files.size() == 1 ? 0 : static_cast<int32_t>(r);
  }
  return absl::OkStatus();
}

namespace {

// The trace's gradient collectives by the group they name ("" for none): the
// node model's grad_sync (model/node_model.h).
std::map<std::string, int64_t> GradientCollectives(const NodeModel& model) {
  std::map<std::string, int64_t> out;
  for (NodeIndex i = 0; i < model.size(); ++i) {
    const CommSpec* comm = model.comm(i);
    if (model.kind(i) == NodeKind::kCollective && comm->grad_sync)
      ++out[std::string(model.string(comm->pg_name))];
  }
  return out;
}

}  // namespace

void Simulation::NameGroupDimensions() {
  if (!recorded_ || !scaled_) return;
  // What each group of the job varies, by its name: the trace's groups by
  // their role, collectives without one by what every recorded rank spans.
  std::map<std::string, scaleout::DimMask> masks;
  masks[kAllRanksGroupName] = recorded_->all_ranks_mask;
  masks[scaleout::kDpGroupName] = scaleout::MaskOf(scaleout::Dim::kDp);
  masks[scaleout::kTpGroupName] = scaleout::MaskOf(scaleout::Dim::kTp);
  for (const scaleout::GroupRole& role : recorded_->roles)
    if (!role.kept) masks[role.name] = role.mask;
  for (CollectiveRow& c : report_.collectives) {
    auto it = masks.find(c.group);
    if (it == masks.end() || it->second == 0) continue;
    std::vector<std::string> dims;
    for (scaleout::Dim d : scaleout::kDims)
      if ((it->second & scaleout::MaskOf(d)) != 0)
        dims.push_back(std::string(scaleout::DimName(d)));
    // "<all>" was the recorded job's every rank, not the new job's.
    c.group = c.group == kAllRanksGroupName
                  ? absl::StrJoin(dims, "+")
                  : absl::StrCat(c.group, " (", absl::StrJoin(dims, "+"), ")");
  }
}

void Simulation::InRecordedWorld(const NodeModel& model,
                                 const std::string& file,
                                 SimOptions* compile_options) {
  const int64_t world = model.info().world_size;
  if (world <= 1 || world > kMaxRanks || !HasCommunication(model)) return;
  world_size_ = world;
  compile_options->world_size = world;
  world_note_ = absl::StrFormat(
      "%s is rank %d of a %d-rank job (its world_size): simulated in that "
      "world, the other %d ranks as its replicas (every rank's files, as a "
      "pattern such as out.%%d.et with --ranks %d, simulate each as "
      "recorded; --world 1 simulates this rank alone, with no truth)",
      file, model.info().rank < 0 ? 0 : model.info().rank, world, world - 1,
      world);
}

absl::Status Simulation::ApplyLayout(const std::string& file,
                                     const NodeModel& model,
                                     const SimOptions& options) {
  const scaleout::ParallelLayout& layout = *options.layout;
  if (options.world_size > 0 && options.world_size != layout.world()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--world %d but --layout %s spans %d ranks",
                        options.world_size, layout.ToString(), layout.world()));
  }
  const int64_t recorded_world = model.info().world_size;
  if (recorded_world == 0 && model.groups().empty() &&
      !options.recorded_layout && HasCommunication(model)) {
    return absl::InvalidArgumentError(PrefixPath(
        file,
        "--layout: the trace has collectives but records neither its world "
        "nor its process groups (PyTorch before 2.1 writes no group table): "
        "say how it was recorded with --recorded-layout, e.g. dp=4"));
  }
  absl::StatusOr<scaleout::RecordedLayout> recorded =
      scaleout::DetectRecordedLayout(model.groups(), recorded_world,
                                     options.recorded_layout);
  if (!recorded.ok()) {
    return absl::InvalidArgumentError(
        PrefixPath(file, recorded.status().message()));
  }
  const std::map<std::string, int64_t> gradients = GradientCollectives(model);
  // A one-rank recording whose gradient collectives run on every rank (DDP
  // on a world of one, PARAM's ResNet): they are its data-parallel sync, the
  // one dimension gradients are reduced over, so the layout's dp scales them;
  // they stayed in a group of one rank at 0 ms (issue 48).
  bool on_every_rank = false;  // no group, or one the table does not name
  for (const auto& [name, count] : gradients) {
    on_every_rank |= std::none_of(
        model.groups().begin(), model.groups().end(),
        [&name = name](const ProcessGroup& g) { return g.name == name; });
  }
  if (recorded->all_ranks_mask == 0 && on_every_rank)
    recorded->all_ranks_mask = scaleout::MaskOf(scaleout::Dim::kDp);
  if (options.recorded_layout) {
    absl::Status checked =
        scaleout::CheckGradientGroups(*recorded, model.groups(), gradients);
    if (!checked.ok())
      return absl::InvalidArgumentError(PrefixPath(file, checked.message()));
  }
  // A trace recorded without tensor (or pipeline) parallelism gets it
  // synthesized.
  scaleout::DimMask synthesized = 0;
  for (scaleout::Dim d :
       {scaleout::Dim::kTp, scaleout::Dim::kPp, scaleout::Dim::kEp})
    if (recorded->layout.of(d) == 1) synthesized |= scaleout::MaskOf(d);
  // A recorded tp asked for at another tp is re-split from its recorded one.
  const int64_t recorded_tp = recorded->layout.of(scaleout::Dim::kTp);
  if (recorded_tp > 1 && layout.of(scaleout::Dim::kTp) > 1 &&
      layout.of(scaleout::Dim::kTp) != recorded_tp)
    synthesized |= scaleout::MaskOf(scaleout::Dim::kTp);
  if (layout.of(scaleout::Dim::kPp) > recorded->layout.of(scaleout::Dim::kPp))
    RETURN_IF_ERROR(CheckPipelineOptions(file, layout, options));
  absl::StatusOr<scaleout::ScaledGroups> scaled =
      scaleout::RemapGroups(model.groups(), *recorded, layout, synthesized);
  if (!scaled.ok()) {
    return absl::InvalidArgumentError(
        PrefixPath(file, scaled.status().message()));
  }
  RETURN_IF_ERROR(
      CheckPeersMove(file, model, recorded->layout, scaled->layout));
  scaled_ = std::move(*scaled);
  recorded_ = *recorded;
  world_size_ = layout.world();
  layout_note_ = absl::StrFormat(
      "--layout %s: %d ranks run this rank's trace, recorded as %s (%s)",
      layout.ToString(), layout.world(), recorded->layout.ToString(),
      recorded->source);
  return absl::OkStatus();
}

std::vector<int64_t> Simulation::ScaledGroupRanks(
    const std::string& name) const {
  for (const ProcessGroup& g : scaled_->groups)
    if (g.name == name) return g.ranks;
  return {};
}

absl::Status Simulation::LayoutRefusal(const std::string& file,
                                       const absl::Status& why) const {
  return absl::InvalidArgumentError(PrefixPath(
      file, absl::StrFormat("--layout %s: %s", scaled_->layout.ToString(),
                            why.message())));
}

absl::Status Simulation::SplitTensorParallel(const std::string& file,
                                             const ModelOptions& model_options,
                                             bool sequence_parallel) {
  const int64_t tp = scaled_->layout.of(scaleout::Dim::kTp);
  if (sequence_parallel && scaled_->tp_group_name.empty()) {
    return LayoutRefusal(
        file,
        absl::InvalidArgumentError(
            tp < 2 ? "--sequence-parallel needs tp > 1: Megatron's sequence "
                     "parallelism splits the sequence over the "
                     "tensor-parallel group"
                   : "--sequence-parallel: the trace records this tp and "
                     "the layout keeps it; sequence parallelism is "
                     "synthesized only with a tensor-parallel split of the "
                     "trace (from one recorded without tp)"));
  }
  if (scaled_->tp_group_name.empty()) return absl::OkStatus();
  scaleout::TpShardOptions split;
  split.tp = tp;
  split.sequence_parallel = sequence_parallel;
  split.recorded_tp = scaled_->recorded.of(scaleout::Dim::kTp);
  split.pg_name = scaled_->tp_group_name;
  split.tp_ranks = ScaledGroupRanks(split.pg_name);
  if (cache_) {
    absl::StatusOr<LayoutCache::TpSplit> cached =
        cache_->TensorParallel(split, model_options);
    if (!cached.ok()) return LayoutRefusal(file, cached.status());
    models_.back() = cached->model;
    tp_split_ = cached->result;
  } else {
    ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph, ReadGraph(file));
    absl::StatusOr<scaleout::TpShardResult> result =
        scaleout::ShardTensorParallel(*graph, split);
    if (!result.ok()) return LayoutRefusal(file, result.status());
    models_.back() = std::make_shared<const NodeModel>(
        NodeModel::FromGraph(result->graph, model_options));
    tp_split_ =
        std::make_shared<const scaleout::TpShardResult>(std::move(*result));
  }
  tp_note_ = tp_split_->note;
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const Graph>> Simulation::LayoutBaseGraph(
    const std::string& file) const {
  // The split's graph, kept alive by its split (aliasing, not copying).
  if (ep_split_)
    return std::shared_ptr<const Graph>(ep_split_, &ep_split_->graph);
  if (tp_split_)
    return std::shared_ptr<const Graph>(tp_split_, &tp_split_->graph);
  return ReadGraph(file);
}

absl::StatusOr<std::shared_ptr<const Graph>> Simulation::ReadGraph(
    const std::string& file) const {
  if (input_graph_) return input_graph_;
  ASSIGN_OR_RETURN(Graph graph, LoadGraph(file));
  return std::make_shared<const Graph>(std::move(graph));
}

absl::Status Simulation::SyncDataParallel(const std::string& file,
                                          const SimOptions& options,
                                          const ModelOptions& model_options) {
  const scaleout::ScaledGroups& scaled = *scaled_;
  const int64_t dp = scaled.layout.of(scaleout::Dim::kDp);
  const bool grown = dp > scaled.recorded.of(scaleout::Dim::kDp);
  const scaleout::DpSyncMode mode =
      options.dp_sync.value_or(scaleout::DpSyncMode::kDdp);
  const std::string mode_name(scaleout::DpSyncModeName(mode));
  if (!grown || scaled.dp_recorded) {
    if (options.dp_sync && mode != scaleout::DpSyncMode::kNone) {
      dp_sync_note_ = absl::StrFormat(
          "--dp-sync %s: nothing synthesized (%s)", mode_name,
          scaled.dp_recorded
              ? "the trace holds its data-parallel collectives; their group "
                "is re-mapped to the layout's dp"
              : "the layout's dp is the recorded one");
    }
    if (options.keep_graph) {
      ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph,
                       LayoutBaseGraph(file));
      graph_ = *graph;
    }
    return absl::OkStatus();
  }
  if (mode == scaleout::DpSyncMode::kNone) {
    dp_sync_note_ = absl::StrFormat(
        "data-parallel sync: none (--dp-sync none): the prediction has no "
        "gradient sync between the %d replicas",
        dp);
    if (options.keep_graph) {
      ASSIGN_OR_RETURN(std::shared_ptr<const Graph> graph,
                       LayoutBaseGraph(file));
      graph_ = *graph;
    }
    return absl::OkStatus();
  }
  scaleout::DpSyncOptions sync;
  sync.mode = mode;
  sync.dp_size = dp;
  sync.pg_name = scaled.dp_group_name;
  sync.bucket_cap_bytes = options.bucket_cap_bytes;
  if (tp_split_) {
    sync.tp = scaled.layout.of(scaleout::Dim::kTp);
    sync.recorded_tp = scaled.recorded.of(scaleout::Dim::kTp);
    sync.tp_split_storages = &tp_split_->split_storages;
  }
  if (ep_split_) sync.ep_other_storages = &ep_split_->other_storages;
  for (const ProcessGroup& g : scaled.groups) {
    if (g.name == scaled.dp_group_name) sync.dp_ranks = g.ranks;
  }
  // The sync goes on the model loaded (or split) without reading its graph
  // again, unless the graph is kept (--write-ranks) or the model cannot take
  // it; a search's layouts of one tp share one DDP sync
  // (simulator/layout_cache.h).
  const NodeModel& base = *models_.back();
  const bool shared = cache_ && !ep_split_ && !options.keep_graph &&
                      scaleout::DpSyncNodesIndependentOfDp(mode);
  absl::StatusOr<scaleout::DpSyncResult> result =
      absl::FailedPreconditionError("the graph is kept");
  // The model loaded here and held by nothing else is taken, not copied.
  // (Two holders: models_.back() and `loaded`.)
  const std::shared_ptr<NodeModel> loaded = owned_model_.lock();
  owned_model_.reset();
  NodeModel* owned =
      loaded.get() == &base && loaded.use_count() == 2 ? loaded.get() : nullptr;
  if (shared) {
    result = SharedDpSync(base, sync, model_options);
  } else if (!options.keep_graph) {
    result = owned ? scaleout::AddDpSync(owned, sync, model_options)
                   : scaleout::AddDpSync(base, sync, model_options);
  }
  std::shared_ptr<const Graph> graph;
  if (absl::IsFailedPrecondition(result.status())) {
    ASSIGN_OR_RETURN(graph, LayoutBaseGraph(file));
    result = scaleout::AddDpSync(*graph, sync);
  }
  if (!result.ok()) {
    // Default ddp on a trace without gradients (inference, or converted
    // before gradients were recorded): a prediction without sync, said so.
    if (!options.dp_sync && absl::IsNotFound(result.status())) {
      dp_sync_note_ = absl::StrFormat(
          "data-parallel sync: none: the prediction has no gradient sync "
          "between the %d replicas (%s)",
          dp, result.status().message());
      if (options.keep_graph) graph_ = *graph;
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(
        PrefixPath(file, absl::StrCat("--dp-sync ", mode_name, ": ",
                                      result.status().message())));
  }
  AdoptDpSync(std::move(*result), options, model_options,
              options.keep_graph ? graph.get() : nullptr);
  return absl::OkStatus();
}

absl::StatusOr<scaleout::DpSyncResult> Simulation::SharedDpSync(
    const NodeModel& base, const scaleout::DpSyncOptions& sync,
    const ModelOptions& model_options) {
  ASSIGN_OR_RETURN(LayoutCache::DpSync cached,
                   cache_->DataParallelSync(base, sync, model_options));
  scaleout::DpSyncResult result = *cached.result;
  if (cached.model == nullptr) return result;  // nothing added (recorded)
  absl::StatusOr<NodeModel> at_dp = cached.model->WithGroupTable(
      scaleout::DpSyncMetadata(base.metadata(), sync));
  if (!at_dp.ok()) return scaleout::AddDpSync(base, sync, model_options);
  models_.back() = std::make_shared<const NodeModel>(std::move(*at_dp));
  result.note = scaleout::DpSyncNote(result, sync);
  return result;
}

void Simulation::AdoptDpSync(scaleout::DpSyncResult sync,
                             const SimOptions& options,
                             const ModelOptions& model_options,
                             const Graph* loaded) {
  dp_sync_note_ = sync.note;
  if (sync.model.has_value()) {
    models_.back() = std::make_shared<const NodeModel>(std::move(*sync.model));
  } else if (sync.graph.has_value()) {
    models_.back() = std::make_shared<const NodeModel>(
        NodeModel::FromGraph(*sync.graph, model_options));
    if (options.keep_graph) graph_.emplace(std::move(*sync.graph));
  } else if (loaded != nullptr) {
    graph_.emplace(*loaded);
  }
  sync.graph.reset();
  sync.model.reset();
  dp_sync_ = std::move(sync);
}

namespace {

// Whether any node records a tensor with a size: without one (a Kineto trace
// alone) the memory model has nothing to add up but library workspaces.
bool RecordsTensorSizes(const NodeModel& model) {
  for (NodeIndex i = 0; i < model.size(); ++i) {
    for (bool outputs : {false, true}) {
      for (const IoTensor& t : model.recorded_tensors(i, outputs))
        if (t.bytes() > 0) return true;
    }
  }
  return false;
}

}  // namespace

void Simulation::ModelMemory(const SimOptions& options) {
  const NodeModel& model = *models_.back();
  if (!memory_unknown_in_ && !RecordsTensorSizes(model))
    memory_unknown_in_ = files_.size();
  StorageLivesResult lives = FindStorageLives(model);
  bool at_layout = false;
  if (options.layout && scaled_) {
    const int64_t dp = scaled_->layout.of(scaleout::Dim::kDp);
    const int64_t recorded_dp = scaled_->recorded.of(scaleout::Dim::kDp);
    scaleout::LayoutMemoryOptions layout;
    layout.dp = dp;
    layout.stage = options.shard_stage;
    if (dp_sync_ && !dp_sync_->recorded) {
      for (const scaleout::Bucket& b : dp_sync_->buckets)
        layout.bucket_bytes.push_back(b.bytes);
      layout.ddp_buckets = true;
    }
    // ZeRO-1's shares differ by rank: the largest is the one that must fit.
    std::vector<int64_t> params;
    for (const StorageLife& l : lives.lives)
      if (l.persistent && l.kind == MemoryKind::kParameter)
        params.push_back(l.bytes);
    const std::vector<int64_t> held = scaleout::OptimizerHeld(params, dp);
    int64_t best = -1;
    for (int64_t r = 0; r < std::min<int64_t>(dp, 4096); ++r) {
      if (held[static_cast<size_t>(r)] > best) {
        best = held[static_cast<size_t>(r)];
        layout.dp_index = r;
      }
    }
    at_layout =
        dp != recorded_dp || options.shard_stage != scaleout::ShardStage::kNone;
    lives.lives = scaleout::LivesAtLayout(std::move(lives.lives), layout);
    if (tp_split_) {
      lives.lives = scaleout::LivesAtTensorParallel(
          std::move(lives.lives), *tp_split_,
          scaled_->layout.of(scaleout::Dim::kTp));
      at_layout = true;
    }
    if (ep_split_) {
      lives.lives =
          scaleout::LivesAtExpertParallel(std::move(lives.lives), *ep_split_);
      at_layout = true;
    }
  }
  if (scaled_ && scaled_->layout.of(scaleout::Dim::kPp) >
                     scaled_->recorded.of(scaleout::Dim::kPp)) {
    layout_lives_ = std::move(lives.lives);  // per stage: SplitPipeline
    return;
  }
  memory_rows_.push_back(MakeMemoryRow(
      model, BuildMemoryTimeline(lives.lives, model.size(), /*curve=*/true),
      at_layout));
  if (options.keep_memory_lives)
    memory_lives_.push_back(std::move(lives.lives));
}

const MemoryRow* Simulation::MemoryRowOf(const RankProgram* program) const {
  if (memory_unknown_in_ || !report_.memory) return nullptr;
  for (size_t p = 0; p < programs_.size() && p < memory_rows_.size(); ++p)
    if (programs_[p].get() == program) return &memory_rows_[p];
  return nullptr;
}

const std::vector<StorageLife>* Simulation::MemoryLivesOf(
    const RankProgram* program) const {
  if (MemoryRowOf(program) == nullptr) return nullptr;
  for (size_t p = 0; p < programs_.size() && p < memory_lives_.size(); ++p)
    if (programs_[p].get() == program) return &memory_lives_[p];
  return nullptr;
}

void Simulation::ReportMemory(const SimOptions& options) {
  if (!options.memory || memory_rows_.empty()) return;
  if (memory_unknown_in_) {
    // A peak of workspaces alone would look like an answer: none is given.
    report_.notes.push_back(absl::StrFormat(
        "memory: no peak predicted: %s records no tensor sizes (a Kineto "
        "trace alone has none), so only library workspaces would count; "
        "convert it with its execution trace (et-convert ET.json --kineto "
        "TRACE.json) for a peak",
        files_[*memory_unknown_in_]));
    return;
  }
  std::vector<MemoryRow> rows;
  for (RankStats& s : report_.ranks) {
    for (size_t c = 0; c < classes_.size(); ++c) {
      if (classes_[c].ranks != s.ranks) continue;
      for (size_t p = 0; p < programs_.size(); ++p) {
        if (programs_[p].get() == classes_[c].program &&
            p < memory_rows_.size())
          s.memory = memory_rows_[p];
      }
    }
    if (s.memory) rows.push_back(*s.memory);
  }
  // Host memory has no capacity to check unless one is given.
  const bool on_gpu =
      std::any_of(rows.begin(), rows.end(),
                  [](const MemoryRow& r) { return r.device >= 0; });
  const int64_t capacity =
      on_gpu || capacity_source_ == "--device-memory-gib" ? capacity_bytes_ : 0;
  const int64_t dp = scaled_ ? scaled_->layout.of(scaleout::Dim::kDp) : 1;
  report_.memory = SummarizeMemory(rows, capacity, capacity_source_, dp);
  if (capacity == 0 && capacity_bytes_ > 0 && !options.device.empty()) {
    report_.memory->capacity_unchecked = absl::StrFormat(
        "the %s's %.0f GiB is a GPU's, and this trace's tensors are in host "
        "memory (a CPU trace: --device prices GPU ops, it moves no tensor)",
        capacity_source_,
        static_cast<double>(capacity_bytes_) / static_cast<double>(1 << 30));
  }
}

absl::Status Simulation::BuildClasses(const SimOptions& options) {
  for (const auto& [rank, factor] : options.rank_slowdown) {
    if (rank < 0 || rank >= world_size_ || !(factor > 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--slow-rank %d:%g: rank must be in [0, %d) and factor positive",
          rank, factor, world_size_));
    }
  }
  // (program, slowdown) -> class; with symmetry off every rank is its own
  // class.
  std::map<std::pair<int32_t, double>, size_t> index;
  for (int64_t r = 0; r < world_size_; ++r) {
    auto it = options.rank_slowdown.find(r);
    const double slow = it == options.rank_slowdown.end() ? 1.0 : it->second;
    const int32_t prog = program_of_rank_[r];
    if (!options.use_rank_symmetry) {
      classes_.push_back({programs_[prog].get(), {r}, slow});
      continue;
    }
    auto [pos, inserted] =
        index.emplace(std::make_pair(prog, slow), classes_.size());
    if (inserted) classes_.push_back({programs_[prog].get(), {}, slow});
    classes_[pos->second].ranks.push_back(r);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Simulation>> Simulation::Run(
    const SimInput& input, const SimOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Simulation> sim, Load(input, options));
  RETURN_IF_ERROR(sim->Simulate(options));
  return sim;
}

absl::StatusOr<std::unique_ptr<Simulation>> Simulation::Load(
    const SimInput& input, const SimOptions& options) {
  auto sim = std::unique_ptr<Simulation>(new Simulation());
  RETURN_IF_ERROR(sim->LoadFiles(input, options));
  return sim;
}

namespace {

// True when the trace has collectives and a CPU backend (gloo) runs every
// one of them: they are priced on the host, not on a GPU fabric.
bool CommOnHost(const std::vector<std::shared_ptr<const NodeModel>>& models) {
  int64_t comms = 0, on_host = 0;
  for (const auto& model : models) {
    for (NodeIndex i = 0; i < model->size(); ++i) {
      const CommSpec* comm = model->comm(i);
      if (comm == nullptr) continue;
      ++comms;
      on_host += comm->on_host ? 1 : 0;
    }
  }
  return comms > 0 && on_host == comms;
}

// Why the default platform stands in, in the words of what the trace lacks:
// "default" alone read as if the trace had asked for an HGX-H100.
std::string DefaultNetworkReason(
    const std::vector<std::shared_ptr<const NodeModel>>& models) {
  bool comm = false, gpu = false;
  for (const auto& model : models) {
    for (NodeIndex i = 0; i < model->size(); ++i) {
      comm |= model->comm(i) != nullptr;
      gpu |= model->type(i) == ChakraProtoMsg::COMP_NODE && !model->on_host(i);
    }
  }
  if (!comm) return "default; unused: the job has no communication";
  if (!gpu) {
    return "default: the trace ran on a CPU and names no platform for its "
           "collectives (--topology names one)";
  }
  return "default: the trace names no GPU (convert with its Kineto trace, "
         "or pass --topology)";
}

// A CPU trace whose recorded compute is priced beside a GPU platform's
// communication: the step mixes the recording CPU with the GPU cluster, so
// the report says so and names what would predict the GPU (issue 49).
std::string CpuTraceOnGpuNote(
    const std::vector<const RankProgram*>& programs,
    const std::vector<std::shared_ptr<const NodeModel>>& models,
    const Network& network, const SimOptions& options) {
  bool communicates = false;
  for (const auto& m : models) communicates |= HasCommunication(*m);
  if (!communicates || network.platform.host_backend ||
      options.compute_model != ComputeModel::kRecorded ||
      !options.device.empty())
    return "";
  for (const RankProgram* p : programs)
    if (p->steps.has_gpu_ops()) return "";
  return absl::StrFormat(
      "a CPU trace on the %s platform: its compute is the recording CPU's "
      "recorded time, its communication %s's, so the step is neither the "
      "CPU run nor a %s run; --compute roofline --device %s prices the "
      "compute on that GPU (a roofline, with no measure of this model on it)",
      network.name, network.name, network.name,
      network.platform.gpu.empty() ? "H100" : network.platform.gpu);
}

}  // namespace

absl::Status Simulation::Simulate(const SimOptions& options) {
  Simulation* sim = this;
  RETURN_IF_ERROR(sim->BuildClasses(options));
  CommEnvironment comm;
  // The ASTRA-sim modes keep their HGX-H100 default; the others follow the
  // recorded GPU.
  const bool astra = options.comm_model == CommModel::kAstra ||
                     options.comm_model == CommModel::kAstraAware;
  ASSIGN_OR_RETURN(
      Network network,
      ResolveNetwork(options.topology, sim->models_[0]->info().device_name,
                     !astra, sim->world_size_, CommOnHost(sim->models_),
                     options.cluster, options.nccl));
  std::string fit_note;
  if (!options.comm_from.empty()) {
    // The logs are of their own shape: the whole node is fitted, then
    // narrowed to this run's GPUs per node again.
    Platform node = network.node_platform;
    ASSIGN_OR_RETURN(fit_note, FitPlatformToLogs(options.comm_from, &node));
    RefitNode(node, &network);
  }
  std::vector<const RankProgram*> programs;
  for (const auto& p : sim->programs_) programs.push_back(p.get());
  // gloo's speed is the host's: by default a host platform is learned from
  // the recording's own gloo runs, when it has them (HOST-GLOO's figures were
  // measured on another machine); --topology HOST-GLOO keeps the preset.
  const bool learn_host =
      options.comm_model == CommModel::kNccl && network.platform.host_backend &&
      options.topology.empty() && options.comm_from.empty() &&
      !RecordedCollectives(programs, sim->world_size_).empty();
  if (options.comm_model == CommModel::kCalibrated || learn_host) {
    ASSIGN_OR_RETURN(std::string line,
                     CalibratePlatformToTrace(programs, sim->world_size_,
                                              &network.platform));
    fit_note = fit_note.empty() ? line : fit_note + "; then " + line;
  }
  const std::string cross_note =
      CpuTraceOnGpuNote(programs, sim->models_, network, options);
  comm.topology = std::move(network.topology);
  comm.platform = network.platform;
  if (options.comm_model == CommModel::kAstra ||
      options.comm_model == CommModel::kAstraAware) {
    if (options.astra_system.empty()) {
      return absl::InvalidArgumentError(
          "--comm=astra needs --astra-system FILE");
    }
    ASSIGN_OR_RETURN(comm.astra, LoadAstraSystemConfig(options.astra_system));
  }
  if (sim->compile_options_ &&
      sim->scaled_->layout.of(scaleout::Dim::kPp) >
          sim->scaled_->recorded.of(scaleout::Dim::kPp))
    RETURN_IF_ERROR(sim->SplitPipeline(options, comm));
  ASSIGN_OR_RETURN(sim->result_, RunSimulation(sim->classes_, sim->world_size_,
                                               options, comm));
  sim->report_ = BuildReport(sim->classes_, sim->result_, sim->world_size_);
  sim->report_.topology = network.name;
  sim->report_.topology_reason = network.reason == "default"
                                     ? DefaultNetworkReason(sim->models_)
                                     : network.reason;
  sim->report_.cluster = network.cluster;
  sim->NameGroupDimensions();
  if (!fit_note.empty()) sim->report_.notes.push_back(fit_note);
  if (!cross_note.empty()) sim->report_.notes.push_back(cross_note);
  if (!world_note_.empty()) sim->report_.notes.push_back(world_note_);
  if (!layout_note_.empty()) sim->report_.notes.push_back(layout_note_);
  if (!tp_note_.empty()) sim->report_.notes.push_back(tp_note_);
  if (!ep_note_.empty()) sim->report_.notes.push_back(ep_note_);
  if (ep_split_)
    DropRecordedTimes(
        "the expert-parallel split scaled the experts' recorded durations",
        &sim->report_);
  if (tp_split_)
    DropRecordedTimes(
        "the tensor-parallel split divided the recorded durations",
        &sim->report_);
  if (!dp_sync_note_.empty()) sim->report_.notes.push_back(dp_sync_note_);
  sim->ReportPipeline();
  sim->ReportMemory(options);
  // A report that breaks an invariant is a bug: said in it, never silent.
  for (const std::string& broken : ReportInconsistencies(sim->report_)) {
    sim->report_.notes.push_back(
        "inconsistent report (a bug in et-sim; please report it with the "
        "trace): " +
        broken);
  }
  return absl::OkStatus();
}

}  // namespace et::sim
