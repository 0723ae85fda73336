// Decoding protobuf nodes into the typed node model; see node_model.h and
// docs/node-model.md for the rules.
#include "model/node_model.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/checked_math.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "model/comm_type.h"
#include "model/op_cost.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_reader.h"
#include "proto/node_checks.h"

namespace et {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

// Times beyond this are clamped so that sums of a few never overflow.
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max() / 4;

// The attributes the model decodes, read in one pass over a node's list.
enum class Attr : uint8_t {
  kIsCpuOp,
  kIsGpuOp,
  kDurationNs,
  kRecordedSpanNs,
  kStartNs,
  kLaunchNs,
  kInclusiveDurNs,
  kNumOps,
  kTensorSize,
  kStep,
  kHostOps,
  kWaitSeq,
  kParentId,
  kDevice,
  kTid,
  kStream,
  kDtype,
  kCommType,
  kCommSize,
  kPgName,
  kCommSrc,
  kCommDst,
  kCommTag,
  kCommRoot,
  kCommSeq,
  kCommOnHost,
  kCommWorkNs,
  kOpKind,
  kIoOp,
  kInputStrides,
  kGradAccumulator,
  kGradSync,
  kOptimizerStep,
  kAutogradBackward,
  kFoldedPeakBytes,
  kContainerInputs,
  kSynthesized,
};

const absl::flat_hash_map<absl::string_view, Attr>& AttrIds() {
  static const auto* ids = new absl::flat_hash_map<absl::string_view, Attr>{
      {attr::kIsCpuOp, Attr::kIsCpuOp},
      {attr::kIsGpuOp, Attr::kIsGpuOp},
      {attr::kDurationNs, Attr::kDurationNs},
      {attr::kRecordedSpanNs, Attr::kRecordedSpanNs},
      {attr::kStartNs, Attr::kStartNs},
      {attr::kLaunchNs, Attr::kLaunchNs},
      {attr::kInclusiveDurNs, Attr::kInclusiveDurNs},
      {attr::kNumOps, Attr::kNumOps},
      {attr::kTensorSize, Attr::kTensorSize},
      {attr::kStep, Attr::kStep},
      {attr::kHostOps, Attr::kHostOps},
      {attr::kWaitSeq, Attr::kWaitSeq},
      {attr::kParentId, Attr::kParentId},
      {attr::kDevice, Attr::kDevice},
      {attr::kTid, Attr::kTid},
      {attr::kStream, Attr::kStream},
      {attr::kDtype, Attr::kDtype},
      {attr::kCommType, Attr::kCommType},
      {attr::kCommSize, Attr::kCommSize},
      {attr::kPgName, Attr::kPgName},
      {attr::kCommSrc, Attr::kCommSrc},
      {attr::kCommDst, Attr::kCommDst},
      {attr::kCommTag, Attr::kCommTag},
      {attr::kCommRoot, Attr::kCommRoot},
      {attr::kCommSeq, Attr::kCommSeq},
      {attr::kCommOnHost, Attr::kCommOnHost},
      {attr::kCommWorkNs, Attr::kCommWorkNs},
      {attr::kOpKind, Attr::kOpKind},
      {attr::kIoOp, Attr::kIoOp},
      {attr::kInputStrides, Attr::kInputStrides},
      {attr::kGradAccumulator, Attr::kGradAccumulator},
      {attr::kGradSync, Attr::kGradSync},
      {attr::kOptimizerStep, Attr::kOptimizerStep},
      {attr::kAutogradBackward, Attr::kAutogradBackward},
      {attr::kFoldedPeakBytes, Attr::kFoldedPeakBytes},
      {attr::kContainerInputs, Attr::kContainerInputs},
      {attr::kSynthesized, Attr::kSynthesized},
  };
  return *ids;
}

constexpr size_t kAttrCount = static_cast<size_t>(Attr::kSynthesized) + 1;

// One node's decoded attributes by Attr (nullptr when absent).
struct NodeAttrs {
  const AttributeProto* a[kAttrCount] = {};

  explicit NodeAttrs(const Node& node) {
    const auto& ids = AttrIds();
    for (const AttributeProto& attr : node.attr()) {
      auto it = ids.find(attr.name());
      if (it != ids.end() && a[static_cast<size_t>(it->second)] == nullptr)
        a[static_cast<size_t>(it->second)] = &attr;
    }
  }
  const AttributeProto* get(Attr id) const {
    return a[static_cast<size_t>(id)];
  }
  std::optional<int64_t> Int(Attr id) const {
    return get(id) ? IntValue(*get(id)) : std::nullopt;
  }
  std::optional<double> Double(Attr id) const {
    return get(id) ? DoubleValue(*get(id)) : std::nullopt;
  }
  std::optional<bool> Bool(Attr id) const {
    return get(id) ? BoolValue(*get(id)) : std::nullopt;
  }
  absl::string_view String(Attr id) const {
    const AttributeProto* v = get(id);
    if (v == nullptr) return {};
    if (v->value_case() == AttributeProto::kStringVal) return v->string_val();
    if (v->value_case() == AttributeProto::kBytesVal) return v->bytes_val();
    return {};
  }
};

bool HostRule(const NodeAttrs& attrs) {
  if (attrs.Bool(Attr::kIsGpuOp).value_or(false)) return false;
  return attrs.Bool(Attr::kIsCpuOp).value_or(false);
}

// The optimizer's span wins (its ops may run under autograd hooks), then the
// gradient's accumulation, then the backward pass.
NodeRole RoleRule(const NodeAttrs& attrs) {
  if (attrs.get(Attr::kOptimizerStep)) return NodeRole::kOptimizer;
  if (attrs.get(Attr::kGradAccumulator)) return NodeRole::kGradAccumulation;
  if (attrs.Bool(Attr::kAutogradBackward).value_or(false))
    return NodeRole::kBackward;
  return NodeRole::kOther;
}

int64_t DurationRule(const Node& node, const NodeAttrs& attrs) {
  if (std::optional<int64_t> ns = attrs.Int(Attr::kDurationNs); ns && *ns > 0)
    return std::min(*ns, kMaxNs);
  return std::min(MicrosToNanosSaturating(node.duration_micros()), kMaxNs);
}

int64_t StartRule(const Node& node, const NodeAttrs& attrs) {
  if (std::optional<int64_t> ns = attrs.Int(Attr::kStartNs); ns && *ns >= 0)
    return std::min(*ns, kMaxNs);
  if (node.start_time_micros() == 0) return -1;  // 0 = not recorded
  return std::min(MicrosToNanosSaturating(node.start_time_micros()), kMaxNs);
}

// A recorded rank as an int32 without wrapping: values outside [-1,
// kMaxRanks) become INT32_MIN, which tools refuse with the node named.
int32_t RankValue(int64_t rank) {
  if (rank < -1 || rank >= kMaxRanks) return INT32_MIN;
  return static_cast<int32_t>(rank);
}

// The canonical text of a shapes list: JSON, no blanks; a tensor's dims, a
// tensor list's dims lists, [] for other positions, null for unparsed ones.
std::string ShapesKey(const IoParseResult& in) {
  std::string key = "[";
  auto dims = [&](const std::vector<int64_t>& d) {
    key += '[';
    for (size_t i = 0; i < d.size(); ++i) {
      if (i > 0) key += ',';
      absl::StrAppend(&key, d[i]);
    }
    key += ']';
  };
  for (size_t i = 0; i < in.entries.size(); ++i) {
    if (i > 0) key += ',';
    const IoEntry& e = in.entries[i];
    if (e.kind == IoKind::kTensor) {
      dims(e.dims);
    } else if (e.kind == IoKind::kTensorList) {
      key += '[';
      for (size_t j = 0; j < e.list_dims.size(); ++j) {
        if (j > 0) key += ',';
        dims(e.list_dims[j]);
      }
      key += ']';
    } else {
      key += e.kind == IoKind::kUnknown ? "null" : "[]";
    }
  }
  return key + "]";
}

}  // namespace

bool IsHostNode(const Node& node) { return HostRule(NodeAttrs(node)); }

absl::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kHostOp:
      return "host";
    case NodeKind::kKernel:
      return "kernel";
    case NodeKind::kGemm:
      return "gemm";
    case NodeKind::kCollective:
      return "collective";
    case NodeKind::kSend:
      return "send";
    case NodeKind::kRecv:
      return "recv";
    case NodeKind::kMemory:
      return "memory";
    case NodeKind::kMetadata:
      return "metadata";
  }
  return "metadata";
}

absl::Span<const IoSlot> NodeModel::inputs(NodeIndex i) const {
  const Facts& f = facts_[i];
  return absl::MakeConstSpan(slots_.data() + f.io_begin, f.inputs);
}

absl::Span<const IoTensor> NodeModel::recorded_tensors(NodeIndex i,
                                                       bool outputs) const {
  const Facts& f = facts_[i];
  return absl::MakeConstSpan(
      tensors_.data() + f.tensors_begin + (outputs ? f.in_tensors : 0),
      outputs ? f.out_tensors : f.in_tensors);
}

absl::Span<const IoTensor> NodeModel::held_tensors(NodeIndex i) const {
  const Facts& f = facts_[i];
  return absl::MakeConstSpan(
      tensors_.data() + f.tensors_begin + f.in_tensors + f.out_tensors,
      f.held_tensors);
}

absl::Span<const IoSlot> NodeModel::outputs(NodeIndex i) const {
  const Facts& f = facts_[i];
  return absl::MakeConstSpan(slots_.data() + f.io_begin + f.inputs, f.outputs);
}

std::vector<std::string> NodeModel::notes() const {
  std::vector<std::string> notes = structure_notes_;
  if (counts_.unknown_comm_type > 0) {
    notes.push_back(absl::StrCat(
        counts_.unknown_comm_type,
        " collectives have neither a valid comm_type nor a collective name: "
        "they order but move nothing"));
  }
  if (counts_.unknown_groups > 0) {
    notes.push_back(absl::StrCat(
        counts_.unknown_groups,
        " communication nodes name a process group the metadata does not "
        "describe: they span every rank"));
  }
  if (counts_.io_bad_values > 0) {
    notes.push_back(absl::StrCat(
        counts_.io_bad_values,
        " IO values did not parse (first: ", counts_.first_io_error, ")"));
  }
  return notes;
}

// Builds a NodeModel one protobuf node at a time, then sorts and links.
class NodeModelBuilder {
 public:
  NodeModelBuilder(const ChakraProtoMsg::GlobalMetadata& metadata,
                   const ModelOptions& options);
  // Adds nodes to `base` (NodeModel::WithAddedNodes): Add the new nodes,
  // then FinishAdded.
  NodeModelBuilder(NodeModel base,
                   const ChakraProtoMsg::GlobalMetadata& metadata,
                   const ModelOptions& options);
  void Add(const Node& node);
  NodeModel Finish();
  NodeModel FinishAdded(absl::Span<const std::pair<NodeIndex, uint64_t>> waits);
  // The first repeated id and the message index of its second copy, found
  // while sorting (Finish); nullopt when ids are unique.
  const std::optional<std::pair<uint64_t, size_t>>& repeated() const {
    return repeated_;
  }

 private:
  uint32_t Intern(absl::string_view s);
  void DecodeMetadata(const ChakraProtoMsg::GlobalMetadata& metadata);
  void DecodeComm(const Node& node, const NodeAttrs& attrs,
                  NodeModel::Facts* f);
  void DecodeIo(const Node& node, const NodeAttrs& attrs, NodeModel::Facts* f);
  void DecodeGemm(const Node& node, const NodeAttrs& attrs, GemmForm form,
                  const IoParseResult& in, NodeModel::Facts* f);
  // `held`: the container_inputs attribute's text ("" when absent).
  void KeepTensors(const Node& node, absl::string_view held,
                   NodeModel::Facts* f);
  void KeepIo(const Node& node, absl::string_view held, const IoParseResult& in,
              const IoParseResult& out, NodeModel::Facts* f);
  void CountIoErrors(uint64_t id, const IoParseResult& io);
  void DecodeTraining(const Node& node, const NodeAttrs& attrs,
                      NodeModel::Facts* f);
  void Link();

  ModelOptions options_;
  NodeModel m_;
  absl::flat_hash_map<std::string, int32_t> group_index_;
  std::vector<uint64_t> ids_;
  CsrRows<uint64_t> data_, ctrl_;
  std::optional<std::pair<uint64_t, size_t>> repeated_;
};

NodeModelBuilder::NodeModelBuilder(
    const ChakraProtoMsg::GlobalMetadata& metadata, const ModelOptions& options)
    : options_(options) {
  DecodeMetadata(metadata);
}

NodeModelBuilder::NodeModelBuilder(
    NodeModel base, const ChakraProtoMsg::GlobalMetadata& metadata,
    const ModelOptions& options)
    : options_(options), m_(std::move(base)) {
  DecodeMetadata(metadata);
}

uint32_t NodeModelBuilder::Intern(absl::string_view s) {
  return m_.strings_.Intern(s);
}

void NodeModelBuilder::DecodeMetadata(
    const ChakraProtoMsg::GlobalMetadata& metadata) {
  m_.metadata_ = metadata;
  const auto& attrs = metadata.attr();
  TraceInfo& info = m_.info_;
  info.schema = GetString(attrs, attr::kSchema).value_or(metadata.version());
  info.rank = GetInt(attrs, attr::kRank).value_or(-1);
  info.world_size = GetInt(attrs, attr::kWorldSize).value_or(0);
  info.measured_world_size =
      GetInt(attrs, attr::kMeasuredWorldSize).value_or(info.world_size);
  absl::Time recorded;
  std::string unused;
  if (absl::ParseTime("%Y-%m-%d %H:%M:%S",
                      GetString(attrs, attr::kRecordTime).value_or(""),
                      absl::UTCTimeZone(), &recorded, &unused)) {
    info.record_time_s = absl::ToUnixSeconds(recorded);
  }
  info.device_name = GetString(attrs, attr::kDeviceName).value_or("");
  info.device_compute_capability =
      GetInt(attrs, attr::kDeviceComputeCapability).value_or(0);
  const double gap_us = GetDouble(attrs, attr::kGpuQueuedGapUs).value_or(0);
  // A gap beyond 1 ms is not a front end's spacing: a hostile value.
  if (gap_us > 0 && gap_us < 1000)
    info.gpu_queued_gap_ns = static_cast<int64_t>(gap_us * 1000.0 + 0.5);
  const double nested_us = GetDouble(attrs, attr::kNestedOpGapUs).value_or(0);
  // Beyond 1 ms neither is the profiler's cost per op: a hostile value.
  if (nested_us > 0 && nested_us < 1000)
    info.nested_op_gap_ns = static_cast<int64_t>(nested_us * 1000.0 + 0.5);
  const double view_us = GetDouble(attrs, attr::kViewOpSpanUs).value_or(0);
  if (view_us > 0 && view_us < 1000)
    info.view_op_span_ns = static_cast<int64_t>(view_us * 1000.0 + 0.5);
  m_.groups_ = DecodeProcessGroups(attrs);
  for (const ProcessGroup& g : m_.groups_)
    info.gpu_job |= absl::StrContains(g.backend, "nccl");
  for (size_t g = 0; g < m_.groups_.size(); ++g)
    group_index_.try_emplace(m_.groups_[g].name, static_cast<int32_t>(g));
}

// The communication rule: the node type says send / recv / collective; a
// collective's type is comm_type when valid, else its name's
// ("nccl:all_reduce"), else it is counted and runs as metadata.
void NodeModelBuilder::DecodeComm(const Node& node, const NodeAttrs& attrs,
                                  NodeModel::Facts* f) {
  CommSpec c;
  // As recorded: Load refuses a negative size (node_checks), FromGraph keeps
  // it for the tools' own range checks.
  c.bytes = attrs.Int(Attr::kCommSize).value_or(0);
  c.dtype = DtypeFromName(attrs.String(Attr::kDtype)).value_or(DtypeInfo{}).id;
  c.tag = static_cast<int32_t>(
      std::clamp<int64_t>(attrs.Int(Attr::kCommTag).value_or(0), 0, INT32_MAX));
  c.seq = attrs.Int(Attr::kCommSeq).value_or(-1);
  c.on_host = attrs.Bool(Attr::kCommOnHost).value_or(false);
  c.work_ns = std::max<int64_t>(0, attrs.Int(Attr::kCommWorkNs).value_or(0));
  c.grad_sync = attrs.Int(Attr::kGradAccumulator).has_value() ||
                attrs.Bool(Attr::kGradSync).value_or(false);
  if (absl::string_view pg = attrs.String(Attr::kPgName); !pg.empty()) {
    c.pg_name = Intern(pg);
    auto it = group_index_.find(pg);
    if (it != group_index_.end()) {
      c.group = it->second;
      // Traces whose group table names the backend say it for every node.
      if (absl::StrContains(m_.groups_[c.group].backend, "gloo"))
        c.on_host = true;
    } else {
      ++m_.counts_.unknown_groups;
    }
  }
  const std::optional<int64_t> src = attrs.Int(Attr::kCommSrc);
  if (node.type() == ChakraProtoMsg::COMM_SEND_NODE) {
    f->kind = NodeKind::kSend;
    c.peer = RankValue(attrs.Int(Attr::kCommDst).value_or(-1));
  } else if (node.type() == ChakraProtoMsg::COMM_RECV_NODE) {
    f->kind = NodeKind::kRecv;
    c.peer = RankValue(src.value_or(-1));
  } else {
    const std::optional<int64_t> type = attrs.Int(Attr::kCommType);
    if (type &&
        ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(*type))) {
      c.type = static_cast<ChakraProtoMsg::CollectiveCommType>(*type);
    } else if (auto spelling = ParseCommName(node.name());
               spelling && spelling->kind == CommKind::kCollective) {
      c.type = spelling->type;
    } else {
      ++m_.counts_.unknown_comm_type;
      f->kind = NodeKind::kMetadata;
      return;
    }
    f->kind = NodeKind::kCollective;
    c.root = RankValue(attrs.Int(Attr::kCommRoot).value_or(src.value_or(0)));
  }
  f->comm = static_cast<int32_t>(m_.comms_.size());
  m_.comms_.push_back(c);
}

namespace {

// The GEMM form of a node: its name's, else (a linked trace's kernel) its
// launcher's, else a kernel tagged op_kind gemm read as a matmul.
GemmForm GemmFormOf(const Node& node, const NodeAttrs& attrs) {
  GemmForm form = GemmFormOfName(node.name());
  if (form == GemmForm::kNone) form = GemmFormOfName(attrs.String(Attr::kIoOp));
  if (form == GemmForm::kNone && attrs.String(Attr::kOpKind) == "gemm")
    form = GemmForm::kMatmul;
  return form;
}

}  // namespace

// Compute and memory nodes: cost (recorded, else from the shapes) and GEMM
// shape; the IO table when kept. Shapes are parsed only when one of them
// needs them.
void NodeModelBuilder::DecodeIo(const Node& node, const NodeAttrs& attrs,
                                NodeModel::Facts* f) {
  const bool computes = f->kind == NodeKind::kHostOp ||
                        f->kind == NodeKind::kKernel ||
                        f->kind == NodeKind::kMemory;
  const std::optional<int64_t> ops = attrs.Int(Attr::kNumOps);
  const std::optional<int64_t> bytes = attrs.Int(Attr::kTensorSize);
  f->flops = static_cast<double>(std::max<int64_t>(0, ops.value_or(0)));
  f->bytes = static_cast<double>(std::max<int64_t>(0, bytes.value_or(0)));
  // A host op's GEMM shape only gives FLOPs: not needed when recorded.
  const GemmForm form = computes && (f->kind != NodeKind::kHostOp ||
                                     f->flops <= 0 || options_.host_gemms)
                            ? GemmFormOf(node, attrs)
                            : GemmForm::kNone;
  // et-convert stamps op_kind on what it costed from the shapes itself: its
  // zeros (views, allocations) are costs, not missing ones.
  const bool need_cost = computes && f->flops <= 0 && f->bytes <= 0 &&
                         attrs.get(Attr::kOpKind) == nullptr;
  const absl::string_view held = attrs.String(Attr::kContainerInputs);
  if (options_.keep_tensors && !options_.keep_io) KeepTensors(node, held, f);
  if (!options_.keep_io && !need_cost && form == GemmForm::kNone) return;
  const IoParseResult in =
      ParseIoInfo(node.inputs().shapes(), node.inputs().types());
  const IoParseResult out =
      ParseIoInfo(node.outputs().shapes(), node.outputs().types());
  CountIoErrors(node.id(), in);
  CountIoErrors(node.id(), out);
  if (need_cost) {
    const OpCost cost = EstimateOpCost(node.name(), in, out);
    f->flops = static_cast<double>(cost.num_ops);
    f->bytes = static_cast<double>(cost.tensor_size_bytes);
    f->cost_from_shapes = cost.num_ops > 0 || cost.tensor_size_bytes > 0;
  }
  if (form != GemmForm::kNone) DecodeGemm(node, attrs, form, in, f);
  if (options_.keep_io) {
    KeepIo(node, held, in, out, f);
    f->shapes_key = Intern(ShapesKey(in));
  }
}

void NodeModelBuilder::DecodeGemm(const Node& node, const NodeAttrs& attrs,
                                  GemmForm form, const IoParseResult& in,
                                  NodeModel::Facts* f) {
  const absl::string_view strides_text = attrs.String(Attr::kInputStrides);
  std::optional<IoParseResult> strides;
  if (!strides_text.empty())
    strides = ParseIoInfo(strides_text, node.inputs().types());
  std::optional<GemmShape> g =
      GemmShapeOf(form, in, strides ? &*strides : nullptr);
  if (!g) return;
  // The dtype attr, else the first tensor input's.
  g->dtype = f->dtype;
  for (const IoEntry& e : in.entries) {
    if (g->dtype != Dtype::kUnknown) break;
    if (e.kind == IoKind::kTensor) g->dtype = e.dtype.id;
  }
  if (f->flops <= 0 || f->cost_from_shapes) f->flops = g->flops();
  f->gemm = static_cast<int32_t>(m_.gemms_.size());
  m_.gemms_.push_back(*g);
  if (f->kind == NodeKind::kKernel) f->kind = NodeKind::kGemm;
}

void NodeModelBuilder::KeepIo(const Node& node, absl::string_view held,
                              const IoParseResult& in, const IoParseResult& out,
                              NodeModel::Facts* f) {
  f->io_begin = static_cast<uint32_t>(m_.slots_.size());
  f->inputs = static_cast<uint16_t>(std::min<size_t>(in.entries.size(), 65535));
  f->outputs =
      static_cast<uint16_t>(std::min<size_t>(out.entries.size(), 65535));
  for (const IoParseResult* io : {&in, &out}) {
    const size_t n = io == &in ? f->inputs : f->outputs;
    for (size_t k = 0; k < n; ++k) {
      const IoEntry& e = io->entries[k];
      IoSlot s;
      s.kind = e.kind;
      s.dtype = e.dtype.id;
      const std::vector<int64_t>* dims = &e.dims;
      if (e.kind == IoKind::kTensorList && !e.list_dims.empty())
        dims = &e.list_dims.front();
      s.dims_begin = static_cast<uint32_t>(m_.dims_.size());
      s.dims_count = static_cast<uint32_t>(dims->size());
      m_.dims_.insert(m_.dims_.end(), dims->begin(), dims->end());
      m_.slots_.push_back(s);
    }
  }
  if (f->on_host && !options_.keep_tensors) return;
  KeepTensors(node, held, f);
}

void NodeModelBuilder::KeepTensors(const Node& node, absl::string_view held,
                                   NodeModel::Facts* f) {
  f->tensors_begin = static_cast<uint32_t>(m_.tensors_.size());
  std::vector<IoTensor> tensors;
  if (CollectIoTensors(node.inputs().values(), &tensors)) {
    f->in_tensors = static_cast<uint32_t>(tensors.size());
    m_.tensors_.insert(m_.tensors_.end(), tensors.begin(), tensors.end());
  }
  if (CollectIoTensors(node.outputs().values(), &tensors)) {
    f->out_tensors = static_cast<uint32_t>(tensors.size());
    m_.tensors_.insert(m_.tensors_.end(), tensors.begin(), tensors.end());
  }
  if (!held.empty() && CollectIoTensors(held, &tensors)) {
    f->held_tensors = static_cast<uint32_t>(tensors.size());
    m_.tensors_.insert(m_.tensors_.end(), tensors.begin(), tensors.end());
  }
}

void NodeModelBuilder::CountIoErrors(uint64_t id, const IoParseResult& io) {
  if (io.bad_values == 0) return;
  if (m_.counts_.io_bad_values == 0)
    m_.counts_.first_io_error = absl::StrCat("node ", id, ": ", io.first_error);
  m_.counts_.io_bad_values += io.bad_values;
}

namespace {
constexpr char kAccumulateGradName[] = "torch::autograd::AccumulateGrad";
}  // namespace

// The gradient rule's inputs (scaleout/gradients.h): the stamps, the
// gradient's tensor (the first tensor input: the incoming and the
// accumulated gradient have the parameter's shape) and the storages an
// optimizer node reads. Parsed only on stamped nodes.
void NodeModelBuilder::DecodeTraining(const Node& node, const NodeAttrs& attrs,
                                      NodeModel::Facts* f) {
  TrainingStamp s;
  if (std::optional<int64_t> acc = attrs.Int(Attr::kGradAccumulator))
    s.accumulator = static_cast<uint64_t>(*acc);
  else if (node.name() == kAccumulateGradName)
    s.accumulator = node.id();
  if (std::optional<int64_t> opt = attrs.Int(Attr::kOptimizerStep))
    s.optimizer = static_cast<uint64_t>(*opt);
  if (!s.accumulator && !s.optimizer) return;
  if (s.accumulator) {
    const IoParseResult io = ParseIoInfo(
        node.inputs().shapes(), node.inputs().types(), node.inputs().values());
    for (const IoEntry& e : io.entries) {
      if (!e.is_tensor()) continue;
      if (!e.dtype.known() || e.NumElements() <= 0) break;
      s.gradient_sized = true;
      s.num_elems = e.NumElements();
      s.dtype = e.dtype.id;
      s.bytes = e.Bytes();
      if (!e.tensors.empty()) s.storage_id = e.tensors.front().storage_id;
      break;
    }
    if (!s.gradient_sized) {
      s.input_shapes = Intern(node.inputs().shapes());
      s.input_types = Intern(node.inputs().types());
    }
  }
  if (s.optimizer) {
    std::vector<IoTensor> tensors;
    if (CollectIoTensors(node.inputs().values(), &tensors)) {
      s.reads_parsed = true;
      s.reads_begin = static_cast<uint32_t>(m_.read_storages_.size());
      s.reads_count = static_cast<uint32_t>(tensors.size());
      for (const IoTensor& t : tensors)
        m_.read_storages_.push_back(t.storage_id);
    }
  }
  f->training = static_cast<int32_t>(m_.training_.size());
  m_.training_.push_back(s);
}

void NodeModelBuilder::Add(const Node& node) {
  const NodeAttrs attrs(node);
  NodeModel::Facts f;
  f.name = Intern(node.name());
  f.type = node.type();
  f.on_host = HostRule(attrs);
  f.device = static_cast<int32_t>(
      std::clamp<int64_t>(attrs.Int(Attr::kDevice).value_or(-1), -1, 65535));
  f.start_ns = StartRule(node, attrs);
  f.duration_ns = DurationRule(node, attrs);
  f.recorded_span_ns = f.duration_ns;
  if (std::optional<int64_t> ns = attrs.Int(Attr::kRecordedSpanNs);
      ns && *ns >= 0)
    f.recorded_span_ns = std::min(*ns, kMaxNs);
  f.duration_micros = static_cast<int64_t>(
      std::min<uint64_t>(node.duration_micros(), kMaxNs / 1000));
  if (std::optional<int64_t> ns = attrs.Int(Attr::kLaunchNs); ns && *ns >= 0)
    f.launch_ns = std::min(*ns, kMaxNs);
  f.inclusive_ns = std::min(
      attrs.Int(Attr::kInclusiveDurNs).value_or(f.duration_ns), kMaxNs);
  f.step = attrs.Int(Attr::kStep).value_or(-1);
  f.host_ops = static_cast<uint32_t>(std::clamp<int64_t>(
      attrs.Int(Attr::kHostOps).value_or(1), 1, UINT32_MAX));
  f.is_wait = attrs.get(Attr::kWaitSeq) != nullptr;
  f.synthesized = attrs.Bool(Attr::kSynthesized).value_or(false);
  f.role = RoleRule(attrs);
  f.parent_id = static_cast<uint64_t>(attrs.Int(Attr::kParentId).value_or(0));
  f.folded_peak_bytes =
      std::max<int64_t>(0, attrs.Int(Attr::kFoldedPeakBytes).value_or(0));
  f.dtype = DtypeFromName(attrs.String(Attr::kDtype)).value_or(DtypeInfo{}).id;
  DecodeTraining(node, attrs, &f);
  switch (node.type()) {
    case ChakraProtoMsg::COMM_COLL_NODE:
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE:
      DecodeComm(node, attrs, &f);
      break;
    case ChakraProtoMsg::COMP_NODE:
      f.kind = f.on_host ? NodeKind::kHostOp : NodeKind::kKernel;
      break;
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      f.kind = NodeKind::kMemory;
      break;
    default:
      f.kind = NodeKind::kMetadata;
      break;
  }
  DecodeIo(node, attrs, &f);
  if (!m_.info_.gpu_job && f.on_host)
    m_.info_.gpu_job = absl::StrContains(node.inputs().values(), "cuda") ||
                       absl::StrContains(node.outputs().values(), "cuda");
  // The queue rule: host ops on their thread; device ops on their stream (0
  // when none is recorded); communication on its stream when one is
  // recorded, else on its process group's channel.
  const int64_t stream = attrs.Int(Attr::kStream).value_or(0);
  if (f.comm >= 0 && stream <= 0) {
    f.queue = {QueueKind::kCommGroup, m_.comms_[f.comm].group};
  } else if (f.on_host && f.comm < 0) {
    f.queue = {QueueKind::kThread, attrs.Int(Attr::kTid).value_or(0)};
  } else {
    f.queue = {QueueKind::kStream, std::max<int64_t>(0, stream)};
  }
  m_.facts_.push_back(f);
  ids_.push_back(node.id());
  data_.targets.insert(data_.targets.end(), node.data_deps().begin(),
                       node.data_deps().end());
  data_.EndRow();
  ctrl_.targets.insert(ctrl_.targets.end(), node.ctrl_deps().begin(),
                       node.ctrl_deps().end());
  ctrl_.EndRow();
}

// Sorts the columns by id, builds the dependency structure and checks it.
NodeModel NodeModelBuilder::Finish() {
  const size_t n = ids_.size();
  std::vector<uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  if (!std::is_sorted(ids_.begin(), ids_.end())) {
    std::stable_sort(perm.begin(), perm.end(),
                     [&](uint32_t a, uint32_t b) { return ids_[a] < ids_[b]; });
    std::vector<NodeModel::Facts> facts(n);
    std::vector<uint64_t> ids(n);
    CsrRows<uint64_t> data, ctrl;
    for (size_t k = 0; k < n; ++k) {
      facts[k] = m_.facts_[perm[k]];
      ids[k] = ids_[perm[k]];
      for (uint64_t d : data_.row(perm[k])) data.targets.push_back(d);
      data.EndRow();
      for (uint64_t d : ctrl_.row(perm[k])) ctrl.targets.push_back(d);
      ctrl.EndRow();
    }
    m_.facts_ = std::move(facts);
    ids_ = std::move(ids);
    data_ = std::move(data);
    ctrl_ = std::move(ctrl);
  }
  for (size_t k = 1; k < n && !repeated_; ++k) {
    if (ids_[k] == ids_[k - 1]) repeated_.emplace(ids_[k], perm[k]);
  }
  m_.deps_ = DepGraph::Build(std::move(ids_), data_, ctrl_);
  data_ = {};
  ctrl_ = {};
  Link();
  return std::move(m_);
}

// The added nodes (ascending ids, above base's: WithAddedNodes checked)
// after base's, and the waits on base's nodes; then linked again.
NodeModel NodeModelBuilder::FinishAdded(
    absl::Span<const std::pair<NodeIndex, uint64_t>> waits) {
  m_.deps_ = m_.deps_.Extended(std::move(ids_), data_, ctrl_, waits);
  ids_ = {};
  data_ = {};
  ctrl_ = {};
  m_.order_.clear();
  m_.structure_notes_.clear();
  m_.executable_ = absl::OkStatus();
  m_.followed_ = DepSelection::kAll;
  Link();
  return std::move(m_);
}

// The structure check every tool gets: a cyclic ctrl-dep set is dropped (data
// deps only, as the 2023 converter's consumers did), dangling deps are
// counted, a data cycle makes the model not executable.
void NodeModelBuilder::Link() {
  absl::StatusOr<std::vector<NodeIndex>> order =
      m_.deps_.TopologicalOrder(DepSelection::kAll);
  std::string note;
  if (!order.ok()) {
    m_.followed_ = DepSelection::kDataOnly;
    absl::StatusOr<std::vector<NodeIndex>> data_order =
        m_.deps_.TopologicalOrder(DepSelection::kDataOnly);
    if (!data_order.ok()) {
      m_.executable_ = absl::InvalidArgumentError(absl::StrCat(
          "data dependencies are cyclic: ", data_order.status().message()));
    } else {
      note = absl::StrCat("ctrl_deps are cyclic (", order.status().message(),
                          "); data_deps only are followed");
      m_.order_ = *std::move(data_order);
    }
  } else {
    m_.order_ = *std::move(order);
  }
  if (m_.deps_.missing_dep_count() > 0) {
    absl::StrAppend(&note, note.empty() ? "" : "; ",
                    m_.deps_.missing_dep_count(),
                    " deps name ids not in the graph (ignored)");
  }
  if (!note.empty()) m_.structure_notes_.push_back(std::move(note));
}

absl::StatusOr<NodeModel> NodeModel::Load(const std::string& path,
                                          const ModelOptions& options) {
  ASSIGN_OR_RETURN(auto reader, EtReader::Open(path));
  NodeModelBuilder builder(reader->metadata(), options);
  RETURN_IF_ERROR(ForEachCheckedNode(reader.get(), [&](Node* node) {
    builder.Add(*node);
    return absl::OkStatus();
  }));
  NodeModel model = builder.Finish();
  // Repeated ids are refused, not resolved: one copy's deps and times would
  // silently vanish.
  if (const auto& repeated = builder.repeated()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: node %d: id repeated (message #%d)", path,
                        repeated->first, repeated->second));
  }
  return model;
}

namespace {

bool IsGroupTableAttr(const ChakraProtoMsg::AttributeProto& a) {
  return a.name() == attr::kPgNames || a.name() == attr::kPgDescs ||
         a.name() == attr::kPgBackends || a.name() == attr::kPgSizes ||
         absl::StartsWith(a.name(), attr::kPgRanksPrefix);
}

// The metadata's attributes other than the group table, serialized in order.
std::vector<std::string> OtherAttrs(
    const ChakraProtoMsg::GlobalMetadata& metadata) {
  std::vector<std::string> out;
  for (const ChakraProtoMsg::AttributeProto& a : metadata.attr())
    if (!IsGroupTableAttr(a)) out.push_back(a.SerializeAsString());
  return out;
}

}  // namespace

absl::StatusOr<NodeModel> NodeModel::WithGroupTable(
    const ChakraProtoMsg::GlobalMetadata& metadata) const {
  if (metadata.version() != metadata_.version() ||
      OtherAttrs(metadata) != OtherAttrs(metadata_))
    return absl::FailedPreconditionError(
        "the metadata differs beyond its process-group table");
  std::vector<ProcessGroup> groups = DecodeProcessGroups(metadata.attr());
  if (groups.size() != groups_.size())
    return absl::FailedPreconditionError("another number of process groups");
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].name != groups_[g].name ||
        groups[g].backend != groups_[g].backend)
      return absl::FailedPreconditionError(
          absl::StrFormat("process group %d: '%s' (%s) in place of '%s' (%s)",
                          g, groups[g].name, groups[g].backend, groups_[g].name,
                          groups_[g].backend));
  }
  NodeModel copy = *this;
  copy.groups_ = std::move(groups);
  copy.metadata_ = metadata;
  return copy;
}

absl::StatusOr<NodeModel> NodeModel::WithAddedNodes(
    NodeModel* base_model, const ChakraProtoMsg::GlobalMetadata& metadata,
    absl::Span<const Node> added,
    absl::Span<const std::pair<NodeIndex, uint64_t>> waits,
    const ModelOptions& options) {
  const NodeModel& base = *base_model;
  if (metadata.version() != base.metadata_.version() ||
      OtherAttrs(metadata) != OtherAttrs(base.metadata_))
    return absl::FailedPreconditionError(
        "the metadata differs beyond its process-group table");
  const std::vector<ProcessGroup> groups = DecodeProcessGroups(metadata.attr());
  if (groups.size() < base.groups_.size())
    return absl::FailedPreconditionError("fewer process groups");
  for (size_t g = 0; g < groups.size(); ++g) {
    // Nodes decode by a group's name and backend (index, host flag).
    if (g < base.groups_.size()) {
      if (groups[g].name == base.groups_[g].name &&
          groups[g].backend == base.groups_[g].backend)
        continue;
      return absl::FailedPreconditionError(
          absl::StrFormat("process group %d: '%s' (%s) in place of '%s' (%s)",
                          g, groups[g].name, groups[g].backend,
                          base.groups_[g].name, base.groups_[g].backend));
    }
    // A node naming an appended group was decoded without it.
    for (const CommSpec& c : base.comms_) {
      if (c.pg_name != 0 && base.strings_.Get(c.pg_name) == groups[g].name)
        return absl::FailedPreconditionError(absl::StrFormat(
            "process group '%s' is named by a node", groups[g].name));
    }
  }
  bool first = base.size() == 0;
  uint64_t above = first ? 0 : base.id(base.size() - 1);
  for (const Node& n : added) {
    if (!first && n.id() <= above)
      return absl::FailedPreconditionError(absl::StrFormat(
          "node %d: added ids must ascend above the model's", n.id()));
    first = false;
    above = n.id();
  }
  for (const auto& [node, dep] : waits) {
    if (node >= base.size())
      return absl::FailedPreconditionError(
          absl::StrFormat("a wait on node index %d, past the model", node));
  }
  // Room for the added nodes, not twice the model's (push_back's growth).
  base_model->facts_.reserve(base.size() + added.size());
  NodeModelBuilder builder(std::move(*base_model), metadata, options);
  *base_model = NodeModel();
  for (const Node& n : added) builder.Add(n);
  return builder.FinishAdded(waits);
}

NodeModel NodeModel::FromGraph(const Graph& graph,
                               const ModelOptions& options) {
  NodeModelBuilder builder(graph.metadata(), options);
  for (const Node& node : graph.nodes()) builder.Add(node);
  return builder.Finish();
}

}  // namespace et
