// Shape-derived cost of one PyTorch operator: what kind of work it is, how many
// floating-point operations it does (num_ops) and how many bytes it reads and
// writes (tensor_size). The converter stores these as the `num_ops` /
// `tensor_size` attributes; the simulator's roofline model uses them when a
// node has no recorded duration. The formulas and their sources are in
// docs/op-cost.md. Pure functions, thread-safe.
#ifndef MODEL_OP_COST_H_
#define MODEL_OP_COST_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "model/io_shapes.h"

namespace et {

enum class OpKind : uint8_t {
  kGemm,         // mm, addmm, linear, 2-D matmul
  kBatchedGemm,  // bmm, baddbmm, batched matmul
  kConv,         // convolutions and their backward
  kAttention,    // scaled_dot_product_attention and its fused kernels
  kElementwise,  // pointwise math, activations, dropout, copy_, fill_
  kReduction,    // sum/mean/max, softmax, norms, losses
  kMemory,  // moves bytes without math: cat, clone, index_select, embedding,
            // ...
  kView,    // views and allocations: moves nothing
  kOther,   // anything else (wrappers, autograd nodes, communication, unknown
            // ops)
};

// "gemm", "batched_gemm", "conv", "attention", "elementwise", "reduction",
// "memory", "view", "other": the values of the `op_kind` attribute.
absl::string_view OpKindName(OpKind kind);

struct OpCost {
  OpKind kind = OpKind::kOther;
  int64_t num_ops = 0;            // FLOPs (a multiply-add counts 2)
  int64_t tensor_size_bytes = 0;  // bytes read + written
  bool from_shapes =
      false;  // false: the op or its shapes were not understood and
              // the cost is a fallback (0 FLOPs, input+output bytes)
};

// Estimates the cost of `op_name` ("aten::addmm"; the "aten::" prefix is
// optional) from its parsed inputs and outputs. Never fails: unknown ops are
// kOther with 0 FLOPs.
OpCost EstimateOpCost(absl::string_view op_name, const IoParseResult& inputs,
                      const IoParseResult& outputs);

// The kind of work `op_name` does, from its name alone (kOther when unknown).
// GEMM-like ops report kGemm (batching needs shapes).
OpKind OpKindFromName(absl::string_view op_name);

}  // namespace et

#endif  // MODEL_OP_COST_H_
