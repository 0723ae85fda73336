// Names of the node and metadata attributes that the tools agree on. The first
// block is Chakra's convention (ASTRA-sim and Chakra's feeder read these
// names); the rest is ours, documented in docs/et_format.md. Use these
// constants, never string literals.
#ifndef PROTO_ATTR_NAMES_H_
#define PROTO_ATTR_NAMES_H_

namespace et::attr {

// Chakra / ASTRA-sim conventions.
inline constexpr char kIsCpuOp[] = "is_cpu_op";       // bool
inline constexpr char kNumOps[] = "num_ops";          // int64, FLOPs
inline constexpr char kTensorSize[] = "tensor_size";  // uint64, bytes touched
inline constexpr char kCommType[] = "comm_type";  // int64, CollectiveCommType
inline constexpr char kCommSize[] =
    "comm_size";  // int64, bytes per rank (input)
inline constexpr char kCommPriority[] = "comm_priority";  // int64
inline constexpr char kPgName[] = "pg_name";              // string
inline constexpr char kCommSrc[] = "comm_src";  // int32, peer rank (recv)
inline constexpr char kCommDst[] = "comm_dst";  // int32, peer rank (send)
inline constexpr char kCommTag[] = "comm_tag";  // int32
inline constexpr char kInvolvedDim[] = "involved_dim";  // bool list
inline constexpr char kRfId[] = "rf_id";                // int64
inline constexpr char kFwParent[] = "fw_parent";        // int64
inline constexpr char kSeqId[] = "seq_id";              // int64
inline constexpr char kScope[] = "scope";               // int64
inline constexpr char kTid[] = "tid";                   // int64
inline constexpr char kFwTid[] = "fw_tid";              // int64
inline constexpr char kStream[] = "stream";             // int64
inline constexpr char kOpSchema[] = "op_schema";        // string

// Ours (docs/et_format.md).
inline constexpr char kDtype[] = "dtype";  // string, e.g. "float32"
inline constexpr char kCommSeq[] =
    "comm_seq";  // int64, collective sequence number
inline constexpr char kPgDesc[] = "pg_desc";  // string
inline constexpr char kPgSize[] = "pg_size";  // int64
inline constexpr char kDurationNs[] =
    "duration_ns";  // int64, sub-microsecond duration
inline constexpr char kStartNs[] = "start_ns";  // int64, sub-microsecond start
// int64, an op whose cost a synthesized layout scaled (et-sim --layout): its
// duration as recorded, the span its recorded start and gaps are relative to.
inline constexpr char kRecordedSpanNs[] = "recorded_span_ns";
// int64, GPU ops of a linked trace: when the runtime call that launched it
// began (ns, the trace's clock, as start_ns).
inline constexpr char kLaunchNs[] = "launch_ns";
inline constexpr char kInclusiveDurNs[] = "inclusive_dur_ns";  // int64
inline constexpr char kParentId[] =
    "parent_id";                             // uint64, enclosing op (ET parent)
inline constexpr char kDevice[] = "device";  // int64, GPU index
inline constexpr char kIsGpuOp[] = "is_gpu_op";  // bool
inline constexpr char kGpuCategory[] =
    "gpu_category";  // string: kernel, gpu_memcpy, gpu_memset
inline constexpr char kGrid[] = "grid";    // int64 list
inline constexpr char kBlock[] = "block";  // int64 list
inline constexpr char kOpKind[] =
    "op_kind";  // string: gemm, conv, attention, ...
inline constexpr char kWaitSeq[] =
    "wait_seq";  // int64, seq of the collective waited on
inline constexpr char kStep[] =
    "step";  // int64, N of the enclosing ProfilerStep#N
inline constexpr char kCommWorkNs[] =
    "comm_work_ns";  // int64, a host collective from its call to the end of
                     // its backend's worker record (gloo:*): its completion
inline constexpr char kCommRoot[] =
    "comm_root";  // int64, root rank of bcast/reduce/...
inline constexpr char kCollectiveId[] =
    "collective_id";  // uint64, --keep all: the call node
inline constexpr char kMeasuredStepUs[] =
    "measured_step_us";  // double, metadata
inline constexpr char kInputStrides[] =
    "input_strides";  // string, the ET's strides list (JSON text)
inline constexpr char kOutputStrides[] = "output_strides";  // string, likewise
inline constexpr char kHostOps[] =
    "host_ops";  // int64, ET ops a host node stands for (itself, folded
                 // children, containers it heads); absent = 1
inline constexpr char kCommOnHost[] =
    "comm_on_host";  // bool, a collective a CPU backend (gloo) runs on host
                     // tensors: no GPU kernel stands for it
inline constexpr char kGradAccumulator[] =
    "grad_accumulator";  // uint64, ET id of the torch::autograd::AccumulateGrad
                         // op this node works for (it makes that parameter's
                         // gradient ready; scaleout/gradients.h)
inline constexpr char kGradSync[] =
    "grad_sync";  // bool, a collective issued from a gradient's
                  // `autograd::engine::evaluate_function: AccumulateGrad`
                  // (where DDP's reducer all-reduces a ready bucket): the
                  // trace's data-parallel sync
inline constexpr char kOptimizerStep[] =
    "optimizer_step";  // uint64, ET id of the enclosing `Optimizer.step#...`
inline constexpr char kAutogradBackward[] =
    "autograd_backward";  // bool, work the autograd engine runs in a backward
                          // pass (under `autograd::engine::evaluate_function`)
inline constexpr char kSynthesized[] =
    "synthesized";  // bool, made by et-sim (scaleout/), not recorded
inline constexpr char kIoOp[] =
    "io_op";  // string, a GPU GEMM kernel's launcher whose IOInfo it carries

// Global metadata.
inline constexpr char kSchema[] = "schema";         // string, source ET schema
inline constexpr char kRank[] = "rank";             // int64
inline constexpr char kWorldSize[] = "world_size";  // int64
// int64, the nodes that follow the metadata, set by EtWriter: a reader that
// meets fewer (a file cut at a message boundary) or more refuses the file.
inline constexpr char kNodeCount[] = "node_count";
// int64, the world the measured steps (step_times_us, unprofiled_step_us)
// were measured on, when the graph is of another job: et-sim --write-ranks
// writes it; absent = world_size.
inline constexpr char kMeasuredWorldSize[] = "measured_world_size";
inline constexpr char kPid[] = "pid";  // int64
// string, the ET's `time`: when its observer started, "YYYY-MM-DD HH:MM:SS"
// in the recording host's local time (the ranks of one job start together).
inline constexpr char kRecordTime[] = "record_time";
inline constexpr char kSourceFile[] = "source_file";   // string
inline constexpr char kPgNames[] = "pg_names";         // string list
inline constexpr char kPgDescs[] = "pg_descs";         // string list
inline constexpr char kPgBackends[] = "pg_backends";   // string list
inline constexpr char kPgSizes[] = "pg_sizes";         // int64 list
inline constexpr char kPgRanksPrefix[] = "pg_ranks:";  // + pg name: int64 list
inline constexpr char kStepTimesUs[] =
    "step_times_us";  // double list, profiled steps (ProfilerStep#N periods)
inline constexpr char kUnprofiledStepUs[] =
    "unprofiled_step_us";  // double, the step without a profiler (the truth)
// double, the same program's step without a profiler timed again after the
// recording (a profiling session can leave the process faster or slower)
inline constexpr char kUnprofiledStepAfterUs[] = "unprofiled_step_after_us";
// double list, the mean step of each timing block whose median is the truth
// (how far the truth itself moves; examples/record_trace.py)
inline constexpr char kUnprofiledStepBlocksUs[] = "unprofiled_step_blocks_us";
// double, minor page faults a step in the run the truth comes from, and in the
// recorded (profiled) steps; int64, what one costs on the recording host
// (examples/record_trace.py, docs/step-model.md "Page faults")
inline constexpr char kUnprofiledPageFaultsPerStep[] =
    "unprofiled_page_faults_per_step";
inline constexpr char kProfiledPageFaultsPerStep[] =
    "profiled_page_faults_per_step";
inline constexpr char kPageFaultNs[] = "page_fault_ns";
inline constexpr char kUnprofiledPeakBytes[] =
    "unprofiled_peak_bytes";  // int64, the most bytes the allocator held during
                              // a step without a profiler (the memory truth)
inline constexpr char kUnprofiledStartBytes[] =
    "unprofiled_start_bytes";  // int64, the bytes it held when that step began
inline constexpr char kStepNames[] = "step_names";  // string list
inline constexpr char kDeviceName[] =
    "device_name";  // string, the recording GPU (Kineto deviceProperties)
// int64, its CUDA compute capability as major * 10 + minor (90: sm_90, H100),
// from Kineto's deviceProperties computeMajor / computeMinor
inline constexpr char kDeviceComputeCapability[] = "device_compute_capability";
// int64 on a node, the most bytes the ops folded into it allocate and hold at
// once (converter/graph/folded_memory.h); absent when none
inline constexpr char kFoldedPeakBytes[] = "folded_peak_bytes";
// string on a node, a JSON list of the input `values` of the ops around it
// that became no node and whose stand-in it is, where such an op reads a
// tensor no op under it reads (expand_as's shape source: an autograd node's
// saved tensor); the memory model counts them as read by this node
inline constexpr char kContainerInputs[] = "container_inputs";
// double, median gap between consecutive queued ops of a GPU stream (the
// front end's spacing), measured from the Kineto trace
inline constexpr char kGpuQueuedGapUs[] = "gpu_queued_gap_us";
// double, median gap between consecutive ops nested in one CPU op, measured
// from the Kineto trace: the profiler's cost outside an op's own span
// (converter/kineto/nested_op_gap.h)
inline constexpr char kNestedOpGapUs[] = "nested_op_gap_us";
// double, median span of the CPU ops that compute nothing and nest no op,
// measured from the Kineto trace: the profiler's cost inside an op's span
// (converter/kineto/view_op_span.h)
inline constexpr char kViewOpSpanUs[] = "view_op_span_us";
// The unprofiled host costs learned at conversion from a light profile of the
// same program (et-convert --host-profile, step/host_profile.h), used by
// et-sim by default: int64 list ns per op by kind (dispatch, launch,
// autograd, optimizer), int64 ns per launch, int64 list gap ns by thread role
// (python, autograd), and the string naming where they came from.
inline constexpr char kHostCostOpNs[] = "host_cost_op_ns";
inline constexpr char kHostCostLaunchNs[] = "host_cost_launch_ns";
inline constexpr char kHostCostGapNs[] = "host_cost_gap_ns";
inline constexpr char kHostCostSource[] = "host_cost_source";
// int64 ns, double, int64 ns, string: the light profile's median step, its
// cpu_ops per step, the light profiler's cost per op and where that came from
// (HostTimeModel; absent when not learned)
inline constexpr char kHostCostLightStepNs[] = "host_cost_light_step_ns";
inline constexpr char kHostCostLightOpsPerStep[] =
    "host_cost_light_ops_per_step";
inline constexpr char kHostCostLightProfilerNs[] =
    "host_cost_light_profiler_ns";
inline constexpr char kHostCostLightProfilerSource[] =
    "host_cost_light_profiler_source";
inline constexpr char kHostCostLightPageFaultsPerStep[] =
    "host_cost_light_page_faults_per_step";  // double, its steps' minor faults
// int64 ns: what the full profiler adds per probe op beyond the light one in
// the recorder's calibration loop (HostTimeModel; absent when not measured)
inline constexpr char kHostCostProbeFullOverLightNs[] =
    "host_cost_probe_full_over_light_ns";

}  // namespace et::attr

#endif  // PROTO_ATTR_NAMES_H_
