// The typed node model every tool compiles from. A .et graph is decoded once,
// when it is loaded, into columns by NodeIndex (ascending id): what each node
// is (NodeKind), where it runs (host or device, its queue), when and how long
// it ran, what it costs, what it communicates, its GEMM shape, and a side
// table of IO tensors. Each decoding rule lives here once (the rules are in
// docs/node-model.md, one test each in tests/model/node_model_test.cc), so
// et-sim, et-replay and et-viz cannot disagree about a node. The protobuf
// nodes are not kept: a rank's memory is the columns, not the messages.
// Immutable after Build/Load; thread-safe reads.
#ifndef MODEL_NODE_MODEL_H_
#define MODEL_NODE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/string_pool.h"
#include "model/dep_graph.h"
#include "model/dtype.h"
#include "model/gemm_shape.h"
#include "model/graph.h"
#include "model/io_shapes.h"
#include "model/process_group.h"
#include "proto/et_def.pb.h"

namespace et {

// What a node does.
enum class NodeKind : uint8_t {
  kHostOp,      // a CPU op: time on a host thread
  kKernel,      // a device op that is not a GEMM: a kernel, memcpy, memset
  kGemm,        // a device GEMM with decoded shapes (gemm() is set)
  kCollective,  // a collective over a process group (comm() is set)
  kSend,        // point-to-point send to comm()->peer
  kRecv,        // point-to-point receive from comm()->peer
  kMemory,      // MEM_LOAD / MEM_STORE: moves bytes on its queue
  kMetadata,    // orders, does nothing (METADATA, INVALID, unknown comm)
};
// "host", "kernel", "gemm", "collective", "send", "recv", "memory",
// "metadata".
absl::string_view NodeKindName(NodeKind kind);
inline bool IsCommunication(NodeKind kind) {
  return kind == NodeKind::kCollective || kind == NodeKind::kSend ||
         kind == NodeKind::kRecv;
}

// The part of a training iteration a node works for, from et-convert's stamps
// (docs/et-format.md): the memory model tells activations from temporaries and
// parameters from optimizer state by it.
enum class NodeRole : uint8_t {
  kOther,             // forward pass, data loading, anything unstamped
  kBackward,          // autograd_backward: the engine runs it in a backward
  kGradAccumulation,  // grad_accumulator: makes a parameter's gradient ready
  kOptimizer,         // optimizer_step: inside an `Optimizer.step#...` span
};

// The queue a node occupies: a host thread, a device stream, or (a collective
// recorded without a stream) its process group's channel.
enum class QueueKind : uint8_t { kThread, kStream, kCommGroup };
struct Queue {
  QueueKind kind = QueueKind::kThread;
  int64_t number = 0;  // tid, stream, or group index (-1: all ranks)
  bool operator==(const Queue& o) const {
    return kind == o.kind && number == o.number;
  }
  bool operator<(const Queue& o) const {  // threads, streams, then groups
    return kind != o.kind ? kind < o.kind : number < o.number;
  }
};

struct CommSpec {
  ChakraProtoMsg::CollectiveCommType type = ChakraProtoMsg::ALL_REDUCE;
  int64_t bytes = 0;     // comm_size: what each rank contributes
  int32_t group = -1;    // index into NodeModel::groups(); -1: every rank
  uint32_t pg_name = 0;  // NodeModel::string(); 0 = none recorded
  int32_t peer = -1;     // send: destination; recv: source
  int32_t root = 0;      // rooted collectives: comm_root, else comm_src, else 0
  int32_t tag = 0;
  int64_t seq = -1;  // comm_seq, -1 when not recorded
  Dtype dtype = Dtype::kUnknown;
  // Run by a CPU backend (gloo) on host tensors: comm_on_host, or a group
  // whose backend is gloo. Placement in et-sim is unchanged (a group channel);
  // this says what to call it.
  bool on_host = false;
  // A host collective from its call to the end of its backend's worker record
  // (comm_work_ns): when it completed, waits for peers included; 0 when not
  // recorded. Its node's own duration is the call that queued it.
  int64_t work_ns = 0;
  // Issued to sync a gradient: stamped grad_sync (from a gradient's
  // AccumulateGrad hook, where DDP's reducer all-reduces its buckets), or run
  // under the AccumulateGrad op (grad_accumulator). Decides whether a trace
  // holds its data-parallel sync (scaleout/recorded_layout.h).
  bool grad_sync = false;
};

// One input or output position of the IO table.
struct IoSlot {
  IoKind kind = IoKind::kUnknown;
  Dtype dtype = Dtype::kUnknown;
  uint32_t dims_begin = 0;  // NodeModel::dims(); a tensor list's first tensor
  uint32_t dims_count = 0;
};

// A node's part in a training step's gradient work, from et-convert's stamps
// (docs/et-format.md): what scaleout/gradients.h finds the gradients and the
// optimizer steps by. Only nodes with a stamp have one.
struct TrainingStamp {
  // The AccumulateGrad op the node works for: attribute grad_accumulator, or
  // the node's own id when it is that op (named
  // torch::autograd::AccumulateGrad; --keep all, other converters).
  std::optional<uint64_t> accumulator;
  // The Optimizer.step span it is in: attribute optimizer_step.
  std::optional<uint64_t> optimizer;
  // With an accumulator: the node's first tensor input (the gradient's
  // size, dtype and storage), when it records a known dtype and a positive
  // size; else the input shapes and types as recorded (interned), for the
  // error that names them.
  bool gradient_sized = false;
  int64_t num_elems = 0;
  int64_t bytes = 0;
  Dtype dtype = Dtype::kUnknown;
  uint64_t storage_id = 0;  // 0: not recorded
  uint32_t input_shapes = 0, input_types = 0;
  // With an optimizer: the storages of every tensor its inputs record, in
  // order (NodeModel::read_storages), when they parse.
  bool reads_parsed = false;
  uint32_t reads_begin = 0, reads_count = 0;
};

// What the facts were decoded from, per trace.
struct TraceInfo {
  std::string schema;
  int64_t rank = -1;       // -1: not recorded
  int64_t world_size = 0;  // 0: not recorded
  // The world the trace's measured steps are of: world_size, unless the graph
  // was made for another job (attr::kMeasuredWorldSize). 0: not recorded.
  int64_t measured_world_size = 0;
  // When the recording started (attr::kRecordTime, the host's local time
  // read as UTC, in seconds since the epoch); 0 unknown.
  int64_t record_time_s = 0;
  // A host op's recorded tensor on cuda:N, or a process group on NCCL: the
  // trace is of a GPU job, whether or not it records GPU ops (an ET converted
  // without its Kineto trace records none).
  bool gpu_job = false;
  std::string device_name;  // the recording GPU ("" unknown)
  // Its CUDA compute capability, major * 10 + minor (90: H100); 0 unknown.
  int64_t device_compute_capability = 0;
  // Median spacing of queued ops on a GPU stream, from the recording; 0 when
  // not measured (no Kineto trace, or too few queued ops).
  int64_t gpu_queued_gap_ns = 0;
  // Median gap between consecutive ops nested in one CPU op, from the
  // recording (the profiler's cost outside an op's span); 0 when not measured.
  int64_t nested_op_gap_ns = 0;
  // Median span of the CPU ops that compute nothing and nest no op (the
  // profiler's cost inside an op's span); 0 when not measured.
  int64_t view_op_span_ns = 0;
};

// Counts of what the decoding met and could not use (never silently dropped).
struct DecodeStats {
  int64_t unknown_comm_type = 0;  // collectives without a usable type: metadata
  int64_t unknown_groups = 0;     // comm nodes naming a group not in metadata
  int64_t io_bad_values = 0;      // IO positions that did not parse
  std::string first_io_error;     // "node 12: ..." for the first of them
};

struct ModelOptions {
  // Keep the IO table (slots, dims, recorded tensors, shapes keys). The facts
  // derived from IO (GEMM shapes, FLOPs from shapes) are decoded either way.
  bool keep_io = true;
  // Keep the recorded tensors of every node, host ops included (keep_io keeps
  // those of device nodes only): the memory model's input (step/memory_*).
  bool keep_tensors = false;
  // Decode the GEMM shape of host ops whose FLOPs are recorded too (they are
  // otherwise left out: the shape would only give FLOPs). What the shape says
  // about the layer is what synthesized tensor parallelism reads
  // (scaleout/tensor_parallel.h).
  bool host_gemms = false;
};

class NodeModel {
 public:
  // Streams `path`: field checks on every node (proto/node_checks), repeated
  // ids refused; each node is decoded and dropped as it is read.
  static absl::StatusOr<NodeModel> Load(const std::string& path,
                                        const ModelOptions& options = {});
  // The same model from nodes in memory (converter output, tests).
  static NodeModel FromGraph(const Graph& graph,
                             const ModelOptions& options = {});
  // A copy of this model under `metadata`, which must differ from
  // metadata() in its process-group table alone (sizes, members,
  // descriptions), the groups named in the same order with the same
  // backends: then the nodes decode as before (their group indices and host
  // flags) and the copy is what FromGraph gives the same nodes under
  // `metadata`, without decoding them again (et-sim --search: one data-
  // parallel sync for every dp). Otherwise an error saying what differs.
  absl::StatusOr<NodeModel> WithGroupTable(
      const ChakraProtoMsg::GlobalMetadata& metadata) const;
  // *base with nodes added under `metadata`: `added` decoded and appended
  // (ids ascending, above every id of base's) and `waits` (node of base's,
  // dep id) appended to their nodes' data deps in the order given, as
  // FromGraph gives the graph so extended, without decoding base's nodes
  // again (et-sim --layout adds a data-parallel sync to the loaded model:
  // scaleout/dp_sync.h). `metadata` must be base's with process groups
  // appended that none of base's nodes names; `options` base's own.
  // Otherwise an error saying what differs, and *base is as it was; on
  // success its columns are taken (moved, not copied), leaving it empty.
  static absl::StatusOr<NodeModel> WithAddedNodes(
      NodeModel* base, const ChakraProtoMsg::GlobalMetadata& metadata,
      absl::Span<const ChakraProtoMsg::Node> added,
      absl::Span<const std::pair<NodeIndex, uint64_t>> waits,
      const ModelOptions& options);

  size_t size() const { return facts_.size(); }
  uint64_t id(NodeIndex i) const { return deps_.id(i); }
  std::optional<NodeIndex> Find(uint64_t id) const { return deps_.Find(id); }
  const DepGraph& deps() const { return deps_; }
  absl::Span<const NodeIndex> data_deps(NodeIndex i) const {
    return deps_.data_deps(i);
  }
  absl::Span<const NodeIndex> ctrl_deps(NodeIndex i) const {
    return deps_.ctrl_deps(i);
  }

  // Structure, checked once at load: the deps a tool follows (all, or data
  // only when ctrl deps are cyclic, as 2023-era converters wrote them), an
  // order of every node over them, and what was repaired. A data-dependency
  // cycle leaves order() empty and executable() an error naming the cycle.
  DepSelection followed_deps() const { return followed_; }
  const std::vector<NodeIndex>& order() const { return order_; }
  const absl::Status& executable() const { return executable_; }
  const std::vector<std::string>& structure_notes() const {
    return structure_notes_;
  }

  absl::string_view name(NodeIndex i) const {
    return strings_.Get(facts_[i].name);
  }
  uint32_t name_id(NodeIndex i) const { return facts_[i].name; }
  ChakraProtoMsg::NodeType type(NodeIndex i) const { return facts_[i].type; }
  NodeKind kind(NodeIndex i) const { return facts_[i].kind; }
  // Runs on a host thread (the one host/device rule, see node-model.md).
  bool on_host(NodeIndex i) const { return facts_[i].on_host; }
  int32_t device(NodeIndex i) const { return facts_[i].device; }
  const Queue& queue(NodeIndex i) const { return facts_[i].queue; }
  // Recorded times in ns; start -1 when not recorded.
  int64_t start_ns(NodeIndex i) const { return facts_[i].start_ns; }
  // A GPU node's launch: its runtime call's start (ns); -1 not recorded.
  int64_t launch_ns(NodeIndex i) const { return facts_[i].launch_ns; }
  int64_t duration_ns(NodeIndex i) const { return facts_[i].duration_ns; }
  // The duration the recording measured, which its start times and the gaps
  // between ops are relative to: duration_ns unless a synthesized layout
  // scaled the op's cost (attr recorded_span_ns).
  int64_t recorded_span_ns(NodeIndex i) const {
    return facts_[i].recorded_span_ns;
  }
  // The node's whole-microsecond `duration_micros` field as written (0 when
  // absent): what ASTRA-sim replays, where duration_ns is finer.
  int64_t duration_micros(NodeIndex i) const {
    return facts_[i].duration_micros;
  }
  int64_t inclusive_duration_ns(NodeIndex i) const {
    return facts_[i].inclusive_ns;
  }
  // FLOPs and bytes touched: num_ops / tensor_size when recorded, else derived
  // from the shapes (model/op_cost); cost_from_shapes tells which.
  double flops(NodeIndex i) const { return facts_[i].flops; }
  double bytes(NodeIndex i) const { return facts_[i].bytes; }
  bool cost_from_shapes(NodeIndex i) const {
    return facts_[i].cost_from_shapes;
  }
  int64_t step(NodeIndex i) const { return facts_[i].step; }  // -1: none
  uint32_t host_ops(NodeIndex i) const { return facts_[i].host_ops; }
  // A host op that blocks until a collective completes (wait_seq).
  bool is_wait(NodeIndex i) const { return facts_[i].is_wait; }
  // Made by et-sim (scaleout/: a synthesized data-parallel collective), not
  // recorded: reports say so and compare it with nothing.
  bool synthesized(NodeIndex i) const { return facts_[i].synthesized; }
  uint64_t parent_id(NodeIndex i) const { return facts_[i].parent_id; }
  // The most bytes the ops et-convert folded into this node held at once
  // (attr folded_peak_bytes; converter/graph/folded_memory.h); 0 if none.
  int64_t folded_peak_bytes(NodeIndex i) const {
    return facts_[i].folded_peak_bytes;
  }
  NodeRole role(NodeIndex i) const { return facts_[i].role; }
  Dtype dtype(NodeIndex i) const { return facts_[i].dtype; }
  // Communication nodes: their spec; nullptr otherwise.
  const CommSpec* comm(NodeIndex i) const {
    return facts_[i].comm < 0 ? nullptr : &comms_[facts_[i].comm];
  }
  // The GEMM a node computes (device GEMMs, and host ops whose shapes make
  // one); nullptr otherwise.
  const GemmShape* gemm(NodeIndex i) const {
    return facts_[i].gemm < 0 ? nullptr : &gemms_[facts_[i].gemm];
  }

  // The IO table (empty unless ModelOptions::keep_io).
  absl::Span<const IoSlot> inputs(NodeIndex i) const;
  absl::Span<const IoSlot> outputs(NodeIndex i) const;
  absl::Span<const int64_t> dims(const IoSlot& slot) const {
    return absl::MakeConstSpan(dims_.data() + slot.dims_begin, slot.dims_count);
  }
  // Every tensor the node's input (or output) `values` record, nested lists
  // included, whatever the types say: the device memory it touches. Device
  // nodes only with keep_io; every node with keep_tensors.
  absl::Span<const IoTensor> recorded_tensors(NodeIndex i, bool outputs) const;
  // Tensors that ops around the node which became no node read and no op
  // under them does (attr container_inputs: expand_as's shape source, an
  // autograd node's saved tensor): read here, as far as memory goes. With
  // keep_tensors.
  absl::Span<const IoTensor> held_tensors(NodeIndex i) const;
  // The node's training stamp (gradient or optimizer work); nullptr when it
  // has none.
  const TrainingStamp* training(NodeIndex i) const {
    return facts_[i].training < 0 ? nullptr : &training_[facts_[i].training];
  }
  // An optimizer node's input storages (TrainingStamp::reads_*).
  absl::Span<const uint64_t> read_storages(const TrainingStamp& s) const {
    return absl::MakeConstSpan(read_storages_.data() + s.reads_begin,
                               s.reads_count);
  }
  // The input shapes in one canonical text ("[[64,32],[32],[]]"), the key of
  // calibration entries (step/calibration.h); "" without keep_io.
  absl::string_view input_shapes_key(NodeIndex i) const {
    return strings_.Get(facts_[i].shapes_key);
  }

  // Interned strings (names, pg names, shape keys); 0 is "".
  absl::string_view string(uint32_t id) const { return strings_.Get(id); }

  const TraceInfo& info() const { return info_; }
  const std::vector<ProcessGroup>& groups() const { return groups_; }
  // The global metadata as recorded (the step model reads its truths).
  const ChakraProtoMsg::GlobalMetadata& metadata() const { return metadata_; }
  const DecodeStats& counts() const { return counts_; }
  // What loading repaired, counted or could not use, one line each: the
  // structure notes, then the decode counts that are not zero. Every tool
  // reports them.
  std::vector<std::string> notes() const;

 private:
  friend class NodeModelBuilder;

  struct Facts {
    uint64_t parent_id = 0;
    int64_t start_ns = -1;
    int64_t launch_ns = -1;
    int64_t duration_ns = 0;
    int64_t recorded_span_ns = 0;
    int64_t duration_micros = 0;
    int64_t inclusive_ns = 0;
    int64_t step = -1;
    int64_t folded_peak_bytes = 0;
    double flops = 0;
    double bytes = 0;
    Queue queue;
    uint32_t name = 0;
    uint32_t shapes_key = 0;
    uint32_t io_begin = 0;  // slots_: inputs then outputs
    uint16_t inputs = 0;
    uint16_t outputs = 0;
    uint32_t tensors_begin = 0;  // tensors_: inputs', outputs', then held
    uint32_t in_tensors = 0;
    uint32_t out_tensors = 0;
    uint32_t held_tensors = 0;
    uint32_t host_ops = 1;
    int32_t comm = -1;
    int32_t gemm = -1;
    int32_t training = -1;  // training_
    int32_t device = -1;
    ChakraProtoMsg::NodeType type = ChakraProtoMsg::INVALID_NODE;
    NodeKind kind = NodeKind::kMetadata;
    Dtype dtype = Dtype::kUnknown;
    NodeRole role = NodeRole::kOther;
    bool on_host = false;
    bool is_wait = false;
    bool synthesized = false;
    bool cost_from_shapes = false;
  };

  DepGraph deps_;
  std::vector<Facts> facts_;
  std::vector<CommSpec> comms_;
  std::vector<GemmShape> gemms_;
  std::vector<TrainingStamp> training_;
  std::vector<uint64_t> read_storages_;
  std::vector<IoSlot> slots_;
  std::vector<int64_t> dims_;
  std::vector<IoTensor> tensors_;
  StringPool strings_;
  TraceInfo info_;
  std::vector<ProcessGroup> groups_;
  ChakraProtoMsg::GlobalMetadata metadata_;
  DecodeStats counts_;
  DepSelection followed_ = DepSelection::kAll;
  std::vector<NodeIndex> order_;
  absl::Status executable_;
  std::vector<std::string> structure_notes_;
};

// The host/device rule on one protobuf node: is_gpu_op true is the device;
// otherwise is_cpu_op's value; neither recorded is the device (Chakra's
// feeder and ASTRA-sim run such nodes on the NPU).
bool IsHostNode(const ChakraProtoMsg::Node& node);

}  // namespace et

#endif  // MODEL_NODE_MODEL_H_
