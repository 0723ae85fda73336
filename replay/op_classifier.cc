// Node -> ReplayOp rules; see op_classifier.h.
#include "replay/op_classifier.h"

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/comm_type.h"
#include "replay/io_values.h"

namespace et::replay {
namespace {

// The converter records a rooted collective's root as "comm_root" (not yet in
// proto/attr_names.h); older writers used comm_src.
constexpr char kCommRoot[] = "comm_root";

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

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

// a: [..., M, K] (or [K] for a vector), b: [K, N] or [..., K, N] (or [K]).
bool MatmulShape(const Shape& a, const Shape& b, GemmShape* g) {
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

DataType TensorType(const ChakraProtoMsg::Node& node) {
  DataType type = DataType::kFloat32;
  if (auto d = GetString(node, attr::kDtype); d && ParseDataType(*d, &type))
    return type;
  std::vector<std::string> types;
  if (ParseTypes(node.inputs().types(), &types)) {
    for (const std::string& t : types) {
      if (absl::StartsWith(t, "Tensor") && ParseDataType(t, &type)) return type;
    }
  }
  return type;
}

}  // namespace

bool IsHostNode(const ChakraProtoMsg::Node& node) {
  if (GetBool(node, attr::kIsGpuOp).value_or(false)) return false;
  return GetBool(node, attr::kIsCpuOp).value_or(false);
}

bool GemmShapeFromNode(const ChakraProtoMsg::Node& node, GemmShape* gemm) {
  GemmForm form = GemmFormOf(node.name());
  if (form == GemmForm::kNone) {
    if (GetString(node, attr::kOpKind).value_or("") != "gemm") return false;
    form = GemmForm::kMatmul;  // a kernel tagged gemm: its first two inputs
  }
  std::vector<Shape> shapes;
  if (!ParseShapes(node.inputs().shapes(), &shapes)) return false;
  const size_t first =
      (form == GemmForm::kAddmm || form == GemmForm::kBaddbmm) ? 1 : 0;
  if (shapes.size() < first + 2) return false;
  const Shape& a = shapes[first];
  const Shape& b = shapes[first + 1];
  GemmShape g;
  g.dtype = TensorType(node);
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
      g.m = Product(a, 0, a.size() - 1), g.k = b[1], g.n = b[0],
      g.trans_b = true;
      break;
    case GemmForm::kMatmul:
      if (!MatmulShape(a, b, &g)) return false;
      break;
    case GemmForm::kNone:
      return false;
  }
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
  if (auto d = GetString(node, attr::kDtype)) ParseDataType(*d, &c.dtype);
  c.tag = static_cast<int>(GetInt(node, attr::kCommTag).value_or(0));
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
      c.peer = static_cast<int>(GetInt(node, attr::kCommDst).value_or(-1));
      return;
    case ChakraProtoMsg::COMM_RECV_NODE:
      op->kind = OpKind::kRecv;
      c.peer = static_cast<int>(GetInt(node, attr::kCommSrc).value_or(-1));
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
  c.peer =
      static_cast<int>(GetInt(node, kCommRoot)
                           .value_or(GetInt(node, attr::kCommSrc).value_or(0)));
}

ReplayOp OpClassifier::Classify(const Graph& graph, NodeIndex index) {
  const ChakraProtoMsg::Node& node = graph.node(index);
  ReplayOp op;
  op.node = index;
  op.node_id = node.id();
  op.recorded_ns =
      GetInt(node, attr::kDurationNs)
          .value_or(static_cast<int64_t>(node.duration_micros()) * 1000);
  if (auto start = GetInt(node, attr::kStartNs)) {
    op.recorded_start_ns = *start;
  } else if (node.start_time_micros() > 0) {
    op.recorded_start_ns =
        static_cast<int64_t>(node.start_time_micros()) * 1000;
  }
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
