// Node -> ReplayOp rules; see op_classifier.h.
#include "replay/op_classifier.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/checked_math.h"
#include "proto/comm_type.h"
#include "proto/input_limits.h"
#include "proto/io_shapes.h"

namespace et::replay {
namespace {

enum class GemmForm { kNone, kMm, kAddmm, kBmm, kBaddbmm, kMatmul, kLinear };

GemmForm GemmFormOf(absl::string_view name) {
  absl::ConsumePrefix(&name, "aten::");
  if (name == "mm") return GemmForm::kMm;
  if (name == "addmm") return GemmForm::kAddmm;
  if (name == "bmm") return GemmForm::kBmm;
  if (name == "baddbmm") return GemmForm::kBaddbmm;
  if (name == "matmul") return GemmForm::kMatmul;
  if (name == "linear") return GemmForm::kLinear;
  return GemmForm::kNone;
}

using Dims = std::vector<int64_t>;

int64_t Product(const Dims& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

// a: [..., M, K] (or [K] for a vector), b: [K, N] or [..., K, N] (or [K]).
bool MatmulShape(const Dims& a, const Dims& b, GemmShape* g) {
  if (a.empty() || b.empty()) return false;
  g->k = a.back();
  g->m = a.size() >= 2 ? a[a.size() - 2] : 1;
  g->n = b.size() >= 2 ? b.back() : 1;
  const int64_t b_k = b.size() >= 2 ? b[b.size() - 2] : b[0];
  if (b_k != g->k) return false;
  if (b.size() <= 2) {
    // [..., M, K] x [K, N]: the leading dims fold into M (one GEMM, as cuBLAS
    // runs it).
    g->m *= a.size() > 2 ? Product(a, 0, a.size() - 2) : 1;
    g->batch = 1;
  } else {
    g->batch = Product(b, 0, b.size() - 2);
  }
  return true;
}

// The element types the backends implement (NcclType, MpiType and
// CublasTypesFor switch over these). A trace's other types (complex, float8,
// int16, ...) replay as the float32 default, moving the same bytes.
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

// The node's `dtype` attr when it names a replayable type.
std::optional<Dtype> DtypeAttr(const ChakraProtoMsg::Node& node) {
  auto name = GetString(node, attr::kDtype);
  if (!name) return std::nullopt;
  auto info = DtypeFromName(*name);
  if (!info || !IsReplayable(info->id)) return std::nullopt;
  return info->id;
}

// The `dtype` attr, else the first replayable tensor input's, else float32.
Dtype TensorType(const ChakraProtoMsg::Node& node, const IoParseResult& in) {
  if (auto d = DtypeAttr(node)) return *d;
  for (const IoEntry& e : in.entries) {
    if (e.kind == IoKind::kTensor && IsReplayable(e.dtype.id))
      return e.dtype.id;
  }
  return Dtype::kFloat32;
}

// An operand's dims: a tensor's, or a tensor list's first tensor's; empty for
// anything else.
Dims OperandDims(const IoEntry& e) {
  if (e.kind == IoKind::kTensor) return e.dims;
  if (e.kind == IoKind::kTensorList && !e.list_dims.empty())
    return e.list_dims.front();
  return {};
}

// True when an operand's last two dims are stored column-major, a transposed
// view (strides [1, rows] for [rows, cols]), as the ET's input_strides record
// it. Unit dims say nothing about the layout and count as row-major.
bool StoredTransposed(const Dims& dims, const Dims& strides) {
  if (dims.size() < 2 || strides.size() != dims.size()) return false;
  const size_t rows = dims.size() - 2, cols = dims.size() - 1;
  if (dims[rows] <= 1 || dims[cols] <= 1) return false;
  return strides[rows] == 1 && strides[cols] >= dims[rows];
}

// The strides of input positions `first` and `first + 1`, empty when the node
// has no input_strides (traces before 1.1.1, Chakra-converted files).
std::pair<Dims, Dims> OperandStrides(const ChakraProtoMsg::Node& node,
                                     size_t first) {
  auto text = GetString(node, attr::kInputStrides);
  if (!text) return {};
  // A strides list has the shapes list's structure, so the shapes parser reads
  // it: each tensor position's "dims" are its strides.
  const IoParseResult s = ParseIoInfo(*text, node.inputs().types());
  if (s.entries.size() < first + 2) return {};
  return {OperandDims(s.entries[first]), OperandDims(s.entries[first + 1])};
}

// A recorded rank (int64 on the wire) as an int, without truncation: values
// outside [-1, kMaxRanks) map to INT_MIN, which the plan refuses with the node
// named, rather than wrapping onto a real rank.
int PeerRank(int64_t rank) {
  if (rank < -1 || rank >= kMaxRanks) return INT32_MIN;
  return static_cast<int>(rank);
}

}  // namespace

bool GemmShapeFromNode(const ChakraProtoMsg::Node& node, GemmShape* gemm) {
  GemmForm form = GemmFormOf(node.name());
  // A linked trace's GEMM kernel carries its launcher's IOInfo and name.
  if (form == GemmForm::kNone)
    form = GemmFormOf(GetString(node, attr::kIoOp).value_or(""));
  if (form == GemmForm::kNone) {
    if (GetString(node, attr::kOpKind).value_or("") != "gemm") return false;
    form = GemmForm::kMatmul;  // a kernel tagged gemm: its first two inputs
  }
  const IoParseResult in =
      ParseIoInfo(node.inputs().shapes(), node.inputs().types());
  const size_t first =
      (form == GemmForm::kAddmm || form == GemmForm::kBaddbmm) ? 1 : 0;
  if (in.entries.size() < first + 2) return false;
  const Dims a = OperandDims(in.entries[first]);
  const Dims b = OperandDims(in.entries[first + 1]);
  GemmShape g;
  g.dtype = TensorType(node, in);
  g.a_input = static_cast<int>(first);
  switch (form) {
    case GemmForm::kMm:
    case GemmForm::kAddmm:
      if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return false;
      g.m = a[0], g.k = a[1], g.n = b[1];
      break;
    case GemmForm::kBmm:
    case GemmForm::kBaddbmm:
      if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1])
        return false;
      g.batch = a[0], g.m = a[1], g.k = a[2], g.n = b[2];
      break;
    case GemmForm::kLinear:  // y = x W^T, W is [N, K]
      if (a.empty() || b.size() != 2 || a.back() != b[1]) return false;
      g.m = Product(a, 0, a.size() - 1), g.k = b[1], g.n = b[0];
      break;
    case GemmForm::kMatmul:
      if (!MatmulShape(a, b, &g)) return false;
      break;
    case GemmForm::kNone:
      return false;
  }
  const auto [a_strides, b_strides] = OperandStrides(node, first);
  // A [..., M, K] folded into one [M', K] matrix must be row-major; a
  // transposed batch of them is left as recorded FLOPs on a row-major layout.
  const bool a_folded =
      (form == GemmForm::kMatmul || form == GemmForm::kLinear) &&
      a.size() > 2 && b.size() <= 2;
  g.trans_a = !a_folded && StoredTransposed(a, a_strides);
  const bool b_transposed = StoredTransposed(b, b_strides);
  // linear's weight is [N, K]: row-major storage is already B transposed.
  g.trans_b = form == GemmForm::kLinear ? !b_transposed : b_transposed;
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return false;
  *gemm = g;
  return true;
}

OpClassifier::OpClassifier(std::vector<std::string> group_names) {
  for (size_t i = 0; i < group_names.size(); ++i) {
    group_index_.emplace(group_names[i], static_cast<int>(i));
  }
}

void OpClassifier::ClassifyComm(const ChakraProtoMsg::Node& node,
                                ReplayOp* op) {
  CommSpec& c = op->comm;
  c.bytes = GetInt(node, attr::kCommSize).value_or(0);
  if (auto d = DtypeAttr(node)) c.dtype = *d;
  c.tag = static_cast<int>(std::clamp<int64_t>(
      GetInt(node, attr::kCommTag).value_or(0), 0, INT32_MAX));
  if (auto pg = GetString(node, attr::kPgName); pg && !pg->empty()) {
    auto it = group_index_.find(*pg);
    if (it != group_index_.end()) {
      c.group = it->second;
    } else {
      ++unknown_groups_;
    }
  }
  switch (node.type()) {
    case ChakraProtoMsg::COMM_SEND_NODE:
      op->kind = OpKind::kSend;
      c.peer = PeerRank(GetInt(node, attr::kCommDst).value_or(-1));
      return;
    case ChakraProtoMsg::COMM_RECV_NODE:
      op->kind = OpKind::kRecv;
      c.peer = PeerRank(GetInt(node, attr::kCommSrc).value_or(-1));
      return;
    default:
      break;
  }
  auto type = GetInt(node, attr::kCommType);
  if (!type ||
      !ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(*type))) {
    // A COMM_COLL_NODE without a usable comm_type: try its name
    // ("nccl:all_reduce").
    auto spelling = ParseCommName(node.name());
    if (!spelling || spelling->kind != CommKind::kCollective) {
      op->kind = OpKind::kNone;
      return;
    }
    c.type = spelling->type;
  } else {
    c.type = static_cast<ChakraProtoMsg::CollectiveCommType>(*type);
  }
  op->kind = OpKind::kCollective;
  // Rooted collectives: the recorded root, else rank 0 (PyTorch's default).
  c.peer = PeerRank(GetInt(node, attr::kCommRoot)
                        .value_or(GetInt(node, attr::kCommSrc).value_or(0)));
}

ReplayOp OpClassifier::Classify(const Graph& graph, NodeIndex index) {
  const ChakraProtoMsg::Node& node = graph.node(index);
  ReplayOp op;
  op.node = index;
  op.node_id = node.id();
  op.recorded_ns = RecordedDurationNs(node);
  op.recorded_start_ns = RecordedStartNs(node);
  op.flops = GetDouble(node, attr::kNumOps).value_or(0);
  switch (node.type()) {
    case ChakraProtoMsg::COMM_COLL_NODE:
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE:
      ClassifyComm(node, &op);
      return op;
    case ChakraProtoMsg::COMP_NODE:
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      break;
    default:
      op.kind = OpKind::kNone;
      return op;
  }
  const bool host = IsHostNode(node);
  if (!host && GemmShapeFromNode(node, &op.gemm)) {
    op.kind = OpKind::kGemm;
    if (op.flops <= 0) op.flops = op.gemm.flops();
    return op;
  }
  if (host) {
    // Host ops keep their GEMM FLOPs (for the report) but run as recorded time.
    GemmShape g;
    if (op.flops <= 0 && GemmShapeFromNode(node, &g)) op.flops = g.flops();
    op.kind = OpKind::kHostCompute;
    return op;
  }
  op.kind = OpKind::kKernel;
  op.bytes = GetInt(node, attr::kTensorSize).value_or(0);
  return op;
}

absl::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kNone:
      return "none";
    case OpKind::kHostCompute:
      return "host";
    case OpKind::kKernel:
      return "kernel";
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kCollective:
      return "collective";
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
  }
  return "none";
}

}  // namespace et::replay
