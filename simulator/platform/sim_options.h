// The knobs of one simulation run, filled by et_sim_main.cc from flags (or by
// tests directly). Plain data; no behaviour. Every field has a default that
// reproduces the documented behaviour of `et-sim` without flags.
#ifndef SIMULATOR_PLATFORM_SIM_OPTIONS_H_
#define SIMULATOR_PLATFORM_SIM_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/process_group.h"
#include "scaleout/ddp_buckets.h"
#include "scaleout/dp_sync.h"
#include "scaleout/group_remap.h"
#include "scaleout/memory_at_layout.h"
#include "scaleout/parallel_layout.h"
#include "scaleout/pipeline_plan.h"
#include "simulator/platform/nccl_settings.h"
#include "simulator/platform/network.h"
#include "step/step_model.h"

namespace et::sim {

// How ops share a rank's resources.
enum class SchedulingMode {
  kStreamAware,  // one FIFO per CPU thread (`tid`) and per GPU stream
                 // (`stream`)
  kAstraCompat,  // ASTRA-sim: one CPU op, one GPU op and one collective,
                 // send or receive at a time, a receive also beside another
};

// Where compute durations come from.
enum class ComputeModel {
  kRecorded,    // duration_micros / duration_ns from the trace (roofline when
                // absent)
  kRoofline,    // max(num_ops / peak_flops, tensor_size / mem_bw)
  kCalibrated,  // calibration file by op name and shapes, else roofline
};

// Where collective durations come from.
enum class CommModel {
  kNccl,        // NCCL's algorithms and protocols on the platform
                // (simulator/comm/nccl_cost_model.h)
  kAlphaBeta,   // closed-form alpha-beta costs on the topology
  kRecorded,    // the fastest member's recorded duration (falls back to the
                // NCCL model)
  kCalibrated,  // the NCCL model fitted to the trace's recorded kernels
                // (simulator/calibration/comm_calibration.h)
  kAstra,       // ASTRA-sim analytical backend, congestion unaware
  kAstraAware,  // ASTRA-sim analytical backend, congestion aware
};

// Collective algorithm for the alpha-beta model.
enum class CollectiveAlgorithm { kAuto, kRing, kTree, kDirect, kHierarchical };

struct SimOptions {
  int64_t world_size = 0;  // ranks; 0 = the number of input files
  // --groups: a process-group table (PyTorch's `## process_group:init ##` JSON)
  // that replaces the one in the traces' metadata, e.g. to re-map groups for
  // another world size.
  std::vector<ProcessGroup> groups_override;
  // --layout: one rank's trace run as every rank of this job (the world is
  // its product); --recorded-layout: the layout the trace was recorded with
  // when its process groups do not say (scaleout/recorded_layout.h).
  std::optional<scaleout::ParallelLayout> layout;
  std::optional<scaleout::ParallelLayout> recorded_layout;
  // Filled by Simulation from `layout`: the trace's groups on that job.
  std::optional<scaleout::ScaledGroups> scaled_groups;
  // --micro-batches and --pp-schedule: a --layout with pp > 1 on a trace
  // recorded without it (scaleout/pipeline_plan.h).
  int64_t micro_batches = 1;
  // --sequence-parallel: Megatron's sequence parallelism on a synthesized
  // tp > 1 (scaleout/sequence_parallel.h).
  bool sequence_parallel = false;
  scaleout::PpSchedule pp_schedule = scaleout::PpSchedule::k1F1B;
  int64_t pp_chunks = 1;  // interleaved:V's V
  // --pp-split: repeated blocks per stage (per model chunk interleaved);
  // empty: the balanced cut.
  std::vector<int64_t> pp_split;
  // --dp-sync: the data-parallel sync synthesized when --layout's dp exceeds
  // the recorded one and the trace holds no dp collectives
  // (scaleout/dp_sync.h). Unset: ddp, and a trace without gradients gets a
  // note rather than an error. --bucket-mb: DDP's bucket cap.
  std::optional<scaleout::DpSyncMode> dp_sync;
  int64_t bucket_cap_bytes = scaleout::kDefaultBucketCapBytes;
  // What --dp-sync shards of each replica's memory (zero1/zero2/zero3/fsdp;
  // scaleout/memory_at_layout.h).
  scaleout::ShardStage shard_stage = scaleout::ShardStage::kNone;
  // The memory model (docs/memory-model.md): each rank's predicted peak, and
  // the capacity it is checked against (--device-memory-gib; 0: the device
  // preset's).
  bool memory = true;
  double device_memory_gib = 0;
  // --write-ranks with --layout: keep the rank's Graph (with the synthesized
  // collectives) for the per-rank writer.
  bool keep_graph = false;
  SchedulingMode scheduling = SchedulingMode::kStreamAware;
  ComputeModel compute_model = ComputeModel::kRecorded;
  // Host ops and the gaps between them: as recorded (profiler included), or
  // the program without a profiler (step/step_model.h).
  HostTimeMode host_time = HostTimeMode::kUnprofiled;
  // The unprofiled host costs per op kind (documented defaults, or learned
  // from --host-profile) and --host-speed (step/host_cost.h).
  HostTimeModel host_model;
  // False: a graph whose metadata holds host costs (et-convert
  // --host-profile) uses those, with host_model's host_speed.
  bool host_model_given = false;
  CommModel comm_model = CommModel::kNccl;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  bool nccl_efficiency =
      false;  // scale bandwidth by NCCL's size-dependent efficiency
  // Preset name or YAML/JSON path (simulator/platform/network.h); empty: the
  // preset of the trace's GPU (astra models: HGX-H100).
  std::string topology;
  // --nodes / --gpus-per-node: how the ranks sit
  // (simulator/platform/network.h);
  // --nccl-algo, --nccl-proto, channel bounds, --gpus-per-process: NCCL's
  // knobs over the platform's (simulator/platform/nccl_settings.h).
  ClusterShape cluster;
  NcclFlags nccl;
  // --comm-from: nccl-tests logs the platform's free figures are fitted to
  // (simulator/calibration/comm_fit.h) before the run.
  std::vector<std::string> comm_from;
  std::string astra_system;  // ASTRA-sim system JSON (astra comm models)
  // The device to predict for: the roofline preset, and with a trace recorded
  // on another GPU the what-if target (simulator/platform/device_what_if.h).
  // Empty: the recorded device (roofline: H100).
  std::string device;
  std::string device_file;  // presets file; empty = the shipped one
  std::string calibration_file;
  // --measured-step-ms: the true step this prediction is compared with
  // (overrides the trace's; e.g. the step measured on the --device GPU).
  double measured_step_us = 0;
  double compute_scale = 1.0;               // divide compute durations by this
  std::map<int64_t, double> rank_slowdown;  // rank -> factor (>1 = slower)
  bool use_rank_symmetry = true;
  bool keep_timeline = false;  // record per-op intervals for --timeline
  // Keep the memory model's storage lives per program (Simulation::
  // MemoryLivesOf) for a caller that reads the whole curve (Python).
  bool keep_memory_lives = false;
};

// --schedule astra with the recorded compute model and no --device: node costs
// are ASTRA-sim's (docs/et-sim.md): every node, its recorded duration in whole
// us (1 ns without one), no gaps, no host-time model, broadcasts replayed.
inline bool AstraReplay(const SimOptions& options) {
  return options.scheduling == SchedulingMode::kAstraCompat &&
         options.compute_model == ComputeModel::kRecorded &&
         options.device.empty();
}

}  // namespace et::sim

#endif  // SIMULATOR_PLATFORM_SIM_OPTIONS_H_
