// Node model -> ReplayOp; see op_classifier.h.
#include "replay/op_classifier.h"

namespace et::replay {
namespace {

// The element types the backends implement (NcclType, MpiType and
// CublasTypesFor switch over these).
bool IsReplayable(Dtype type) {
  switch (type) {
    case Dtype::kFloat32:
    case Dtype::kFloat16:
    case Dtype::kBFloat16:
    case Dtype::kFloat64:
    case Dtype::kInt8:
    case Dtype::kUInt8:
    case Dtype::kInt32:
    case Dtype::kInt64:
    case Dtype::kBool:
      return true;
    default:
      return false;
  }
}

// A trace's other types (complex, float8, int16, ...) replay as float32,
// moving the same bytes.
Dtype Replayable(Dtype type) {
  return IsReplayable(type) ? type : Dtype::kFloat32;
}

// A GEMM's type: the model's when replayable, else the first replayable
// tensor input's, else float32.
Dtype GemmType(const NodeModel& model, NodeIndex index, Dtype recorded) {
  if (IsReplayable(recorded)) return recorded;
  for (const IoSlot& slot : model.inputs(index)) {
    if (slot.kind == IoKind::kTensor && IsReplayable(slot.dtype))
      return slot.dtype;
  }
  return Dtype::kFloat32;
}

ReplayOpKind ReplayKindOf(NodeKind kind) {
  switch (kind) {
    case NodeKind::kHostOp:
      return ReplayOpKind::kHostCompute;
    case NodeKind::kKernel:
    case NodeKind::kMemory:
      return ReplayOpKind::kKernel;
    case NodeKind::kGemm:
      return ReplayOpKind::kGemm;
    case NodeKind::kCollective:
      return ReplayOpKind::kCollective;
    case NodeKind::kSend:
      return ReplayOpKind::kSend;
    case NodeKind::kRecv:
      return ReplayOpKind::kRecv;
    case NodeKind::kMetadata:
      return ReplayOpKind::kNone;
  }
  return ReplayOpKind::kNone;
}

}  // namespace

ReplayOp ClassifyNode(const NodeModel& model, NodeIndex index) {
  ReplayOp op;
  op.node = index;
  op.node_id = model.id(index);
  op.kind = ReplayKindOf(model.kind(index));
  op.recorded_ns = model.duration_ns(index);
  op.recorded_start_ns = model.start_ns(index);
  // FLOPs for the report: recorded, or the GEMM's; bytes for kernels without
  // a recorded time.
  op.flops = model.cost_from_shapes(index) && model.gemm(index) == nullptr
                 ? 0
                 : model.flops(index);
  if (op.kind == ReplayOpKind::kKernel && !model.cost_from_shapes(index))
    op.bytes = static_cast<int64_t>(model.bytes(index));
  if (const GemmShape* g = model.gemm(index); g != nullptr) {
    op.gemm = *g;
    op.gemm.dtype = GemmType(model, index, g->dtype);
  }
  if (const CommSpec* c = model.comm(index); c != nullptr) {
    op.comm = *c;
    op.comm.dtype = Replayable(c->dtype);
  }
  return op;
}

absl::string_view ReplayOpKindName(ReplayOpKind kind) {
  switch (kind) {
    case ReplayOpKind::kNone:
      return "none";
    case ReplayOpKind::kHostCompute:
      return "host";
    case ReplayOpKind::kKernel:
      return "kernel";
    case ReplayOpKind::kGemm:
      return "gemm";
    case ReplayOpKind::kCollective:
      return "collective";
    case ReplayOpKind::kSend:
      return "send";
    case ReplayOpKind::kRecv:
      return "recv";
  }
  return "none";
}

}  // namespace et::replay
