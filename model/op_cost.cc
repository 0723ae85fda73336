// Shape-derived operator costs; the formulas are documented in docs/op-cost.md.
#include "model/op_cost.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "base/checked_math.h"
#include "model/gemm_shape.h"

namespace et {
namespace {

enum class Rule : uint8_t {
  // GEMM-like forward ops are model/gemm_shape.h's (one list for every tool).
  kLinearBackward,  // linear_backward(x, grad_out, w, mask): 2 GEMMs
  kConv,            // conv*(x, w, ...), never transposed
  kConvGeneric,     // convolution/_convolution(x, w, b, stride, pad, dil,
                    // transposed, ...)
  kConvTranspose,   // conv_transpose*(x, w, ...)
  kConvBackward,    // convolution_backward(grad_out, x, w, ..., transposed=7,
                    // ..., mask=10)
  kSdpa,            // q, k, v as inputs 0..2, layout [..., L, E]
  kSdpaBackward,    // grad_out, q, k, v as inputs 0..3
  kFlashForward,   // _flash/_efficient_attention_forward: q, k, v layout [B, L,
                   // H, E]
  kFlashBackward,  // grad_out, q, k, v in that layout
  kElementwise,    // FLOPs = output elements
  kCopy,           // copy_(dst, src): bytes = dst + src
  kFill,           // fill_/zero_/random fills: writes self only
  kReduction,      // FLOPs = factor x elements of input 0
  kPool,           // pooling: output elements x window, or input elements
  kMemory,         // 0 FLOPs, bytes = inputs + outputs
  kGather,         // embedding/index_select: reads only the rows it writes
  kView,           // 0 FLOPs, 0 bytes
};

struct RuleEntry {
  Rule rule;
  int flops_per_element = 1;  // kReduction only
};

using RuleTable = absl::flat_hash_map<absl::string_view, RuleEntry>;

void AddAll(RuleTable* table, std::initializer_list<const char*> names,
            RuleEntry entry) {
  for (const char* name : names) table->emplace(name, entry);
}

const RuleTable& Rules() {
  static const RuleTable* table = [] {
    auto* t = new RuleTable;
    AddAll(t, {"linear_backward", "mkldnn_linear_backward"},
           {Rule::kLinearBackward});
    AddAll(t,
           {"conv1d", "conv2d", "conv3d", "cudnn_convolution",
            "mkldnn_convolution", "miopen_convolution", "_slow_conv2d_forward",
            "slow_conv3d_forward", "thnn_conv2d", "_nnpack_spatial_convolution",
            "cudnn_convolution_relu", "cudnn_convolution_add_relu"},
           {Rule::kConv});
    AddAll(t, {"convolution", "_convolution", "convolution_overrideable"},
           {Rule::kConvGeneric});
    AddAll(t,
           {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
            "cudnn_convolution_transpose", "miopen_convolution_transpose",
            "slow_conv_transpose2d", "slow_conv_transpose3d"},
           {Rule::kConvTranspose});
    AddAll(t, {"convolution_backward"}, {Rule::kConvBackward});
    AddAll(
        t,
        {"scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
         "_scaled_dot_product_efficient_attention",
         "_scaled_dot_product_cudnn_attention",
         "_scaled_dot_product_attention_math",
         "_scaled_dot_product_flash_attention_for_cpu"},
        {Rule::kSdpa});
    AddAll(t,
           {"_scaled_dot_product_flash_attention_backward",
            "_scaled_dot_product_efficient_attention_backward",
            "_scaled_dot_product_cudnn_attention_backward",
            "_scaled_dot_product_flash_attention_for_cpu_backward"},
           {Rule::kSdpaBackward});
    AddAll(t, {"_flash_attention_forward", "_efficient_attention_forward"},
           {Rule::kFlashForward});
    AddAll(t, {"_flash_attention_backward", "_efficient_attention_backward"},
           {Rule::kFlashBackward});
    AddAll(t,
           {"add",
            "sub",
            "rsub",
            "mul",
            "div",
            "neg",
            "abs",
            "exp",
            "exp2",
            "expm1",
            "log",
            "log2",
            "log1p",
            "sqrt",
            "rsqrt",
            "pow",
            "reciprocal",
            "sign",
            "sin",
            "cos",
            "tan",
            "erf",
            "erfinv",
            "floor",
            "ceil",
            "round",
            "trunc",
            "frac",
            "relu",
            "relu6",
            "gelu",
            "silu",
            "mish",
            "sigmoid",
            "tanh",
            "hardtanh",
            "hardswish",
            "hardsigmoid",
            "leaky_relu",
            "elu",
            "selu",
            "celu",
            "softplus",
            "threshold",
            "clamp",
            "clamp_min",
            "clamp_max",
            "where",
            "masked_fill",
            "lerp",
            "addcdiv",
            "addcmul",
            "maximum",
            "minimum",
            "fmod",
            "remainder",
            "eq",
            "ne",
            "lt",
            "le",
            "gt",
            "ge",
            "logical_and",
            "logical_or",
            "logical_not",
            "bitwise_and",
            "bitwise_or",
            "bitwise_not",
            "isnan",
            "isinf",
            "nan_to_num",
            "dropout",
            "native_dropout",
            "feature_dropout",
            "alpha_dropout",
            "triu",
            "tril",
            "threshold_backward",
            "gelu_backward",
            "silu_backward",
            "sigmoid_backward",
            "tanh_backward",
            "hardtanh_backward",
            "leaky_relu_backward",
            "elu_backward",
            "hardswish_backward",
            "native_dropout_backward",
            "zeros_like",
            "ones_like",
            "full_like",
            "zeros",
            "ones",
            "full",
            "arange",
            "rand",
            "randn",
            "rand_like",
            "randn_like",
            "_amp_update_scale",
            "_fused_adam",
            "_fused_adamw",
            "_fused_sgd"},
           {Rule::kElementwise});
    AddAll(t, {"copy", "copy_"}, {Rule::kCopy});
    AddAll(t,
           {"fill", "zero", "uniform", "normal", "bernoulli", "random",
            "exponential", "geometric", "cauchy", "log_normal"},
           {Rule::kFill});
    AddAll(t,
           {"sum",
            "mean",
            "amax",
            "amin",
            "max",
            "min",
            "argmax",
            "argmin",
            "prod",
            "norm",
            "linalg_vector_norm",
            "any",
            "all",
            "cumsum",
            "cumprod",
            "logsumexp",
            "nll_loss",
            "nll_loss_nd",
            "nll_loss_forward",
            "nll_loss_backward",
            "nll_loss2d_forward",
            "topk",
            "sort"},
           {Rule::kReduction, 1});
    AddAll(
        t,
        {"var", "std", "var_mean", "std_mean", "mse_loss", "mse_loss_backward"},
        {Rule::kReduction, 3});
    AddAll(t,
           {"softmax",
            "_softmax",
            "log_softmax",
            "_log_softmax",
            "_softmax_backward_data",
            "_log_softmax_backward_data",
            "cross_entropy_loss",
            "layer_norm",
            "native_layer_norm",
            "group_norm",
            "native_group_norm",
            "instance_norm",
            "batch_norm",
            "native_batch_norm",
            "_native_batch_norm_legit",
            "_batch_norm_impl_index",
            "cudnn_batch_norm",
            "miopen_batch_norm",
            "rms_norm",
            "_fused_rms_norm"},
           {Rule::kReduction, 5});
    AddAll(t,
           {"native_layer_norm_backward", "native_group_norm_backward",
            "native_batch_norm_backward", "cudnn_batch_norm_backward",
            "miopen_batch_norm_backward", "_batch_norm_impl_index_backward",
            "_fused_rms_norm_backward"},
           {Rule::kReduction, 10});
    AddAll(t,
           {"max_pool1d", "max_pool2d", "max_pool3d", "max_pool2d_with_indices",
            "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
            "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
            "_adaptive_avg_pool2d", "adaptive_max_pool2d",
            "max_pool2d_with_indices_backward", "avg_pool2d_backward",
            "_adaptive_avg_pool2d_backward"},
           {Rule::kPool});
    AddAll(t,
           {"cat",
            "_cat",
            "stack",
            "clone",
            "contiguous",
            "_to_copy",
            "to",
            "repeat",
            "constant_pad_nd",
            "pad",
            "flip",
            "roll",
            "scatter",
            "scatter_add",
            "index_put",
            "_index_put_impl",
            "index_add",
            "masked_scatter",
            "masked_select",
            "nonzero",
            "_local_scalar_dense",
            "item",
            "embedding_dense_backward",
            "embedding_backward",
            "flatten_dense_tensors",
            "unflatten_dense_tensors",
            "_foreach_copy",
            "index_copy"},
           {Rule::kMemory});
    AddAll(t,
           {"embedding", "index_select", "gather", "index", "_unsafe_index",
            "take"},
           {Rule::kGather});
    AddAll(t,
           {"view",
            "_unsafe_view",
            "reshape",
            "_reshape_alias",
            "as_strided",
            "t",
            "transpose",
            "permute",
            "expand",
            "expand_as",
            "squeeze",
            "unsqueeze",
            "slice",
            "select",
            "narrow",
            "split",
            "split_with_sizes",
            "chunk",
            "unbind",
            "flatten",
            "unflatten",
            "detach",
            "alias",
            "view_as",
            "numpy_T",
            "movedim",
            "moveaxis",
            "lift_fresh",
            "resolve_conj",
            "resolve_neg",
            "empty",
            "empty_like",
            "empty_strided",
            "new_empty",
            "new_empty_strided",
            "resize",
            "set",
            "result_type",
            "is_same_size",
            "diagonal",
            "unfold",
            "broadcast_tensors",
            "_reshape_copy",
            "view_as_real",
            "view_as_complex",
            "real",
            "imag",
            "conj",
            "_conj",
            "_neg_view",
            "swapaxes",
            "swapdims",
            "align_to",
            "refine_names",
            "_nested_view_from_buffer",
            "_has_compatible_shallow_copy_type",
            "lift",
            "_fw_primal",
            "_make_dual",
            "_unpack_dual",
            "detach_copy"},
           {Rule::kView});
    return t;
  }();
  return *table;
}

// Looks up a rule by bare name: "aten::add_" -> "add_" then "add";
// "_foreach_mul_" and other foreach ops are elementwise over their tensor
// lists.
const RuleEntry* FindRule(absl::string_view op_name) {
  absl::string_view name = op_name;
  absl::ConsumePrefix(&name, "aten::");
  const RuleTable& rules = Rules();
  auto it = rules.find(name);
  if (it != rules.end()) return &it->second;
  absl::string_view base = name;
  if (absl::ConsumeSuffix(&base, "_")) {
    it = rules.find(base);
    if (it != rules.end()) return &it->second;
  }
  if (absl::StartsWith(name, "_foreach_")) {
    static const RuleEntry kForeach{Rule::kElementwise};
    return &kForeach;
  }
  return nullptr;
}

// ---- Shape helpers
// -----------------------------------------------------------------------

const IoEntry* TensorAt(const IoParseResult& io, size_t i) {
  if (i >= io.entries.size() || io.entries[i].kind != IoKind::kTensor)
    return nullptr;
  return &io.entries[i];
}

std::optional<double> ScalarAt(const IoParseResult& io, size_t i) {
  if (i >= io.entries.size()) return std::nullopt;
  return io.entries[i].scalar;
}

// The product of dims [begin, end), clamped to the dims there are.
int64_t ProductOf(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  end = std::min(end, dims.size());
  if (begin >= end) return 1;
  return DimProduct(absl::MakeConstSpan(dims).subspan(begin, end - begin));
}

int64_t MaxOutputElements(const IoParseResult& outputs) {
  int64_t n = 0;
  for (const IoEntry& e : outputs.entries) n = std::max(n, e.NumElements());
  return n;
}

int64_t FirstInputElements(const IoParseResult& inputs) {
  return inputs.entries.empty() ? 0 : inputs.entries[0].NumElements();
}

// ---- GEMM family
// -------------------------------------------------------------------------

// linear_backward(x, grad_out, w, mask): the forward GEMM x[..., K] w[N, K]^T,
// twice (dX and dW).
std::optional<GemmShape> LinearBackwardShape(const IoParseResult& in) {
  const IoEntry* x = TensorAt(in, 0);
  const IoEntry* w = TensorAt(in, 2);
  if (x == nullptr || w == nullptr || x->dims.empty() || w->dims.size() != 2)
    return std::nullopt;
  GemmShape s;
  s.m = ProductOf(x->dims, 0, x->dims.size() - 1);
  s.k = x->dims.back();
  s.n = w->dims[0];
  return s;
}

int64_t GemmFlops(const GemmShape& s) {
  return CountProduct(
      2, CountProduct(CountProduct(s.batch, s.m), CountProduct(s.n, s.k)));
}

// ---- Convolution
// -------------------------------------------------------------------------

// 2 x (output elements) x (input channels per group x kernel volume) for a
// convolution; for a transposed one the roles of input and output swap. Weight
// layout is [Cout, Cin/groups, k...] (normal) or [Cin, Cout/groups, k...]
// (transposed).
int64_t ConvFlops(const IoEntry& x, const IoEntry& w, const IoEntry* y,
                  bool transposed) {
  if (w.dims.size() < 3) return -1;
  int64_t per_point = ProductOf(w.dims, 1, w.dims.size());
  int64_t points = transposed ? x.NumElements() : (y ? y->NumElements() : 0);
  if (points == 0) return -1;
  return CountProduct(2, CountProduct(points, per_point));
}

// Without the `transposed` value, infer it from channel counts: a normal
// convolution has weight[0] == output channels, a transposed one weight[0] ==
// input channels.
bool LooksTransposed(const IoEntry& x, const IoEntry& w, const IoEntry* y) {
  if (y == nullptr || x.dims.size() < 2 || y->dims.size() < 2) return false;
  return w.dims[0] != y->dims[1] && w.dims[0] == x.dims[1];
}

std::optional<OpCost> ConvCost(Rule rule, const IoParseResult& in,
                               const IoParseResult& out) {
  const IoEntry* x = TensorAt(in, 0);
  const IoEntry* w = TensorAt(in, 1);
  const IoEntry* y = TensorAt(out, 0);
  if (x == nullptr || w == nullptr) return std::nullopt;
  bool transposed = rule == Rule::kConvTranspose;
  if (rule == Rule::kConvGeneric) {
    std::optional<double> flag = ScalarAt(in, 6);  // the `transposed` argument
    transposed = flag ? *flag != 0 : LooksTransposed(*x, *w, y);
  }
  int64_t flops = ConvFlops(*x, *w, y, transposed);
  if (flops < 0) return std::nullopt;
  return OpCost{OpKind::kConv, flops, in.TotalBytes() + out.TotalBytes(), true};
}

// convolution_backward computes grad_input and grad_weight (each as costly as
// the forward) as selected by output_mask (input 10) or, without values, by
// which outputs are defined.
std::optional<OpCost> ConvBackwardCost(const IoParseResult& in,
                                       const IoParseResult& out) {
  const IoEntry* grad_out = TensorAt(in, 0);
  const IoEntry* x = TensorAt(in, 1);
  const IoEntry* w = TensorAt(in, 2);
  if (grad_out == nullptr || x == nullptr || w == nullptr) return std::nullopt;
  std::optional<double> flag = ScalarAt(in, 7);
  bool transposed = flag ? *flag != 0 : LooksTransposed(*x, *w, grad_out);
  int64_t forward = ConvFlops(*x, *w, grad_out, transposed);
  if (forward < 0) return std::nullopt;
  int parts = 0;
  const std::vector<int64_t>* mask =
      in.entries.size() > 10 ? &in.entries[10].int_list : nullptr;
  if (mask != nullptr && mask->size() >= 2) {
    parts = ((*mask)[0] != 0) + ((*mask)[1] != 0);
  } else {
    for (size_t i = 0; i < 2; ++i) parts += TensorAt(out, i) != nullptr;
    if (out.entries.empty()) parts = 2;
  }
  return OpCost{OpKind::kConv, CountProduct(forward, parts),
                in.TotalBytes() + out.TotalBytes(), true};
}

// ---- Attention
// ---------------------------------------------------------------------------

// Two GEMMs: Q K^T (2 * BH * L * S * E) and P V (2 * BH * L * S * Ev). `blhe`:
// the _flash/_efficient_attention_* layout [B, L, H, E] instead of [B, H, L,
// E].
std::optional<int64_t> AttentionFlops(const IoParseResult& in, size_t first,
                                      bool blhe) {
  const IoEntry* q = TensorAt(in, first);
  const IoEntry* k = TensorAt(in, first + 1);
  const IoEntry* v = TensorAt(in, first + 2);
  if (q == nullptr || k == nullptr || v == nullptr) return std::nullopt;
  size_t r = q->dims.size();
  if (r < 2 || k->dims.size() != r || v->dims.size() != r) return std::nullopt;
  int64_t bh, l, s, e = q->dims[r - 1], ev = v->dims[r - 1];
  if (blhe) {
    if (r != 4) return std::nullopt;
    bh = CountProduct(q->dims[0], q->dims[2]);
    l = q->dims[1];
    s = k->dims[1];
  } else {
    bh = ProductOf(q->dims, 0, r - 2);
    l = q->dims[r - 2];
    s = k->dims[r - 2];
  }
  int64_t scores = CountProduct(bh, CountProduct(l, s));
  return CountProduct(2, CountProduct(scores, e)) +
         CountProduct(2, CountProduct(scores, ev));
}

std::optional<OpCost> AttentionCost(Rule rule, const IoParseResult& in,
                                    const IoParseResult& out) {
  bool backward = rule == Rule::kSdpaBackward || rule == Rule::kFlashBackward;
  bool blhe = rule == Rule::kFlashForward || rule == Rule::kFlashBackward;
  std::optional<int64_t> flops = AttentionFlops(in, backward ? 1 : 0, blhe);
  if (!flops) return std::nullopt;
  // Backward: 5 GEMMs of the forward's size (dV, dP, dQ, dK, and the recomputed
  // scores) against the forward's 2: 2.5x.
  int64_t total = backward ? CountProduct(*flops, 5) / 2 : *flops;
  return OpCost{OpKind::kAttention, total, in.TotalBytes() + out.TotalBytes(),
                true};
}

// ---- Everything else
// ---------------------------------------------------------------------

int64_t PoolFlops(const IoParseResult& in, const IoParseResult& out) {
  const std::vector<int64_t>* window =
      in.entries.size() > 1 ? &in.entries[1].int_list : nullptr;
  int64_t out_elems = MaxOutputElements(out);
  if (window != nullptr && !window->empty() && out_elems > 0) {
    int64_t area = 1;
    for (int64_t d : *window) area = CountProduct(area, d);
    if (window->size() == 1)
      area = CountProduct(area, area);  // max_pool2d(k) means k x k
    return CountProduct(out_elems, area);
  }
  return FirstInputElements(in);
}

int64_t GatherBytes(const IoParseResult& in, const IoParseResult& out) {
  int64_t bytes =
      2 * out.TotalBytes();  // the rows read from the table, then written
  for (size_t i = 1; i < in.entries.size(); ++i) bytes += in.entries[i].Bytes();
  return bytes;
}

OpCost SimpleCost(const RuleEntry& entry, const IoParseResult& in,
                  const IoParseResult& out) {
  int64_t io_bytes = in.TotalBytes() + out.TotalBytes();
  int64_t elems = MaxOutputElements(out);
  if (elems == 0) elems = FirstInputElements(in);
  switch (entry.rule) {
    case Rule::kElementwise:
      return {OpKind::kElementwise, elems, io_bytes, true};
    case Rule::kCopy: {
      int64_t src = in.entries.size() > 1 ? in.entries[1].Bytes() : 0;
      int64_t dst = in.entries.empty() ? 0 : in.entries[0].Bytes();
      return {OpKind::kElementwise, elems, src + dst, true};
    }
    case Rule::kFill: {
      int64_t dst =
          in.entries.empty() ? out.TotalBytes() : in.entries[0].Bytes();
      return {OpKind::kElementwise, elems, dst, true};
    }
    case Rule::kReduction:
      return {OpKind::kReduction,
              CountProduct(entry.flops_per_element, FirstInputElements(in)),
              io_bytes, true};
    case Rule::kPool:
      return {OpKind::kReduction, PoolFlops(in, out), io_bytes, true};
    case Rule::kMemory:
      return {OpKind::kMemory, 0, io_bytes, true};
    case Rule::kGather:
      return {OpKind::kMemory, 0, GatherBytes(in, out), true};
    case Rule::kView:
      return {OpKind::kView, 0, 0, true};
    default:
      return {OpKind::kOther, 0, io_bytes, false};
  }
}

}  // namespace

absl::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kBatchedGemm:
      return "batched_gemm";
    case OpKind::kConv:
      return "conv";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kElementwise:
      return "elementwise";
    case OpKind::kReduction:
      return "reduction";
    case OpKind::kMemory:
      return "memory";
    case OpKind::kView:
      return "view";
    case OpKind::kOther:
      return "other";
  }
  return "other";
}

OpCost EstimateOpCost(absl::string_view op_name, const IoParseResult& inputs,
                      const IoParseResult& outputs) {
  const OpCost fallback{OpKind::kOther, 0,
                        inputs.TotalBytes() + outputs.TotalBytes(), false};
  if (const GemmForm form = GemmFormOfName(op_name); form != GemmForm::kNone) {
    std::optional<GemmShape> s = GemmShapeOf(form, inputs, nullptr);
    if (!s) return fallback;
    return {s->batch > 1 ? OpKind::kBatchedGemm : OpKind::kGemm, GemmFlops(*s),
            fallback.tensor_size_bytes, true};
  }
  const RuleEntry* entry = FindRule(op_name);
  if (entry == nullptr) return fallback;
  switch (entry->rule) {
    case Rule::kLinearBackward: {
      std::optional<GemmShape> s = LinearBackwardShape(inputs);
      if (!s) return fallback;
      return {OpKind::kGemm, CountProduct(GemmFlops(*s), 2), /*dX and dW*/
              fallback.tensor_size_bytes, true};
    }
    case Rule::kConv:
    case Rule::kConvGeneric:
    case Rule::kConvTranspose:
      return ConvCost(entry->rule, inputs, outputs).value_or(fallback);
    case Rule::kConvBackward:
      return ConvBackwardCost(inputs, outputs).value_or(fallback);
    case Rule::kSdpa:
    case Rule::kSdpaBackward:
    case Rule::kFlashForward:
    case Rule::kFlashBackward:
      return AttentionCost(entry->rule, inputs, outputs).value_or(fallback);
    default:
      return SimpleCost(*entry, inputs, outputs);
  }
}

OpKind OpKindFromName(absl::string_view op_name) {
  switch (GemmFormOfName(op_name)) {
    case GemmForm::kNone:
      break;
    case GemmForm::kBmm:
    case GemmForm::kBaddbmm:
      return OpKind::kBatchedGemm;
    default:
      return OpKind::kGemm;
  }
  const RuleEntry* entry = FindRule(op_name);
  if (entry == nullptr) return OpKind::kOther;
  switch (entry->rule) {
    case Rule::kLinearBackward:
      return OpKind::kGemm;
    case Rule::kConv:
    case Rule::kConvGeneric:
    case Rule::kConvTranspose:
    case Rule::kConvBackward:
      return OpKind::kConv;
    case Rule::kSdpa:
    case Rule::kSdpaBackward:
    case Rule::kFlashForward:
    case Rule::kFlashBackward:
      return OpKind::kAttention;
    case Rule::kElementwise:
    case Rule::kCopy:
    case Rule::kFill:
      return OpKind::kElementwise;
    case Rule::kReduction:
    case Rule::kPool:
      return OpKind::kReduction;
    case Rule::kMemory:
    case Rule::kGather:
      return OpKind::kMemory;
    case Rule::kView:
      return OpKind::kView;
  }
  return OpKind::kOther;
}

}  // namespace et
