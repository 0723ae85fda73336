// Shape-derived operator costs: a table of op-name rows, each naming the
// formula family that derives its FLOPs and bytes (docs/op-cost.md).
#include "model/op_cost.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "base/checked_math.h"
#include "model/gemm_shape.h"

namespace et {
namespace {

// How an op's FLOPs and bytes are derived: one formula family per value;
// kFamilies below gives each its op kind and cost function.
enum class Formula : uint8_t {
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

// Whether a row names the whole bare op name or a prefix of it.
enum class Match : uint8_t { kExact, kPrefix };

// One row of the rule table: an op's bare name (no "aten::", no trailing "_"
// of the in-place form) or a name prefix, and the formula that costs it.
struct OpRule {
  const char* name;
  Formula formula;
  int flops_per_element = 1;  // kReduction only
  Match match = Match::kExact;
};

// Every op the cost model knows (GEMMs aside, see above). A name appears once;
// exact names win over prefixes.
constexpr OpRule kOpRules[] = {
    // GEMMs beyond model/gemm_shape.h's forward list.
    {"linear_backward", Formula::kLinearBackward},
    {"mkldnn_linear_backward", Formula::kLinearBackward},
    // Convolutions.
    {"conv1d", Formula::kConv},
    {"conv2d", Formula::kConv},
    {"conv3d", Formula::kConv},
    {"cudnn_convolution", Formula::kConv},
    {"mkldnn_convolution", Formula::kConv},
    {"miopen_convolution", Formula::kConv},
    {"_slow_conv2d_forward", Formula::kConv},
    {"slow_conv3d_forward", Formula::kConv},
    {"thnn_conv2d", Formula::kConv},
    {"_nnpack_spatial_convolution", Formula::kConv},
    {"cudnn_convolution_relu", Formula::kConv},
    {"cudnn_convolution_add_relu", Formula::kConv},
    {"convolution", Formula::kConvGeneric},
    {"_convolution", Formula::kConvGeneric},
    {"convolution_overrideable", Formula::kConvGeneric},
    {"conv_transpose1d", Formula::kConvTranspose},
    {"conv_transpose2d", Formula::kConvTranspose},
    {"conv_transpose3d", Formula::kConvTranspose},
    {"cudnn_convolution_transpose", Formula::kConvTranspose},
    {"miopen_convolution_transpose", Formula::kConvTranspose},
    {"slow_conv_transpose2d", Formula::kConvTranspose},
    {"slow_conv_transpose3d", Formula::kConvTranspose},
    {"convolution_backward", Formula::kConvBackward},
    // Attention.
    {"scaled_dot_product_attention", Formula::kSdpa},
    {"_scaled_dot_product_flash_attention", Formula::kSdpa},
    {"_scaled_dot_product_efficient_attention", Formula::kSdpa},
    {"_scaled_dot_product_cudnn_attention", Formula::kSdpa},
    {"_scaled_dot_product_attention_math", Formula::kSdpa},
    {"_scaled_dot_product_flash_attention_for_cpu", Formula::kSdpa},
    {"_scaled_dot_product_flash_attention_backward", Formula::kSdpaBackward},
    {"_scaled_dot_product_efficient_attention_backward",
     Formula::kSdpaBackward},
    {"_scaled_dot_product_cudnn_attention_backward", Formula::kSdpaBackward},
    {"_scaled_dot_product_flash_attention_for_cpu_backward",
     Formula::kSdpaBackward},
    {"_flash_attention_forward", Formula::kFlashForward},
    {"_efficient_attention_forward", Formula::kFlashForward},
    {"_flash_attention_backward", Formula::kFlashBackward},
    {"_efficient_attention_backward", Formula::kFlashBackward},
    // Elementwise: FLOPs = output elements.
    {"add", Formula::kElementwise},
    {"sub", Formula::kElementwise},
    {"rsub", Formula::kElementwise},
    {"mul", Formula::kElementwise},
    {"div", Formula::kElementwise},
    {"neg", Formula::kElementwise},
    {"abs", Formula::kElementwise},
    {"exp", Formula::kElementwise},
    {"exp2", Formula::kElementwise},
    {"expm1", Formula::kElementwise},
    {"log", Formula::kElementwise},
    {"log2", Formula::kElementwise},
    {"log1p", Formula::kElementwise},
    {"sqrt", Formula::kElementwise},
    {"rsqrt", Formula::kElementwise},
    {"pow", Formula::kElementwise},
    {"reciprocal", Formula::kElementwise},
    {"sign", Formula::kElementwise},
    {"sin", Formula::kElementwise},
    {"cos", Formula::kElementwise},
    {"tan", Formula::kElementwise},
    {"erf", Formula::kElementwise},
    {"erfinv", Formula::kElementwise},
    {"floor", Formula::kElementwise},
    {"ceil", Formula::kElementwise},
    {"round", Formula::kElementwise},
    {"trunc", Formula::kElementwise},
    {"frac", Formula::kElementwise},
    {"relu", Formula::kElementwise},
    {"relu6", Formula::kElementwise},
    {"gelu", Formula::kElementwise},
    {"silu", Formula::kElementwise},
    {"mish", Formula::kElementwise},
    {"sigmoid", Formula::kElementwise},
    {"tanh", Formula::kElementwise},
    {"hardtanh", Formula::kElementwise},
    {"hardswish", Formula::kElementwise},
    {"hardsigmoid", Formula::kElementwise},
    {"leaky_relu", Formula::kElementwise},
    {"elu", Formula::kElementwise},
    {"selu", Formula::kElementwise},
    {"celu", Formula::kElementwise},
    {"softplus", Formula::kElementwise},
    {"threshold", Formula::kElementwise},
    {"clamp", Formula::kElementwise},
    {"clamp_min", Formula::kElementwise},
    {"clamp_max", Formula::kElementwise},
    {"where", Formula::kElementwise},
    {"masked_fill", Formula::kElementwise},
    {"lerp", Formula::kElementwise},
    {"addcdiv", Formula::kElementwise},
    {"addcmul", Formula::kElementwise},
    {"maximum", Formula::kElementwise},
    {"minimum", Formula::kElementwise},
    {"fmod", Formula::kElementwise},
    {"remainder", Formula::kElementwise},
    {"eq", Formula::kElementwise},
    {"ne", Formula::kElementwise},
    {"lt", Formula::kElementwise},
    {"le", Formula::kElementwise},
    {"gt", Formula::kElementwise},
    {"ge", Formula::kElementwise},
    {"logical_and", Formula::kElementwise},
    {"logical_or", Formula::kElementwise},
    {"logical_not", Formula::kElementwise},
    {"bitwise_and", Formula::kElementwise},
    {"bitwise_or", Formula::kElementwise},
    {"bitwise_not", Formula::kElementwise},
    {"isnan", Formula::kElementwise},
    {"isinf", Formula::kElementwise},
    {"nan_to_num", Formula::kElementwise},
    {"dropout", Formula::kElementwise},
    {"native_dropout", Formula::kElementwise},
    {"feature_dropout", Formula::kElementwise},
    {"alpha_dropout", Formula::kElementwise},
    {"triu", Formula::kElementwise},
    {"tril", Formula::kElementwise},
    {"threshold_backward", Formula::kElementwise},
    {"gelu_backward", Formula::kElementwise},
    {"silu_backward", Formula::kElementwise},
    {"sigmoid_backward", Formula::kElementwise},
    {"tanh_backward", Formula::kElementwise},
    {"hardtanh_backward", Formula::kElementwise},
    {"leaky_relu_backward", Formula::kElementwise},
    {"elu_backward", Formula::kElementwise},
    {"hardswish_backward", Formula::kElementwise},
    {"native_dropout_backward", Formula::kElementwise},
    {"zeros_like", Formula::kElementwise},
    {"ones_like", Formula::kElementwise},
    {"full_like", Formula::kElementwise},
    {"zeros", Formula::kElementwise},
    {"ones", Formula::kElementwise},
    {"full", Formula::kElementwise},
    {"arange", Formula::kElementwise},
    {"rand", Formula::kElementwise},
    {"randn", Formula::kElementwise},
    {"rand_like", Formula::kElementwise},
    {"randn_like", Formula::kElementwise},
    {"_amp_update_scale", Formula::kElementwise},
    {"_fused_adam", Formula::kElementwise},
    {"_fused_adamw", Formula::kElementwise},
    {"_fused_sgd", Formula::kElementwise},
    // Copies and fills.
    {"copy", Formula::kCopy},
    {"copy_", Formula::kCopy},
    {"fill", Formula::kFill},
    {"zero", Formula::kFill},
    {"uniform", Formula::kFill},
    {"normal", Formula::kFill},
    {"bernoulli", Formula::kFill},
    {"random", Formula::kFill},
    {"exponential", Formula::kFill},
    {"geometric", Formula::kFill},
    {"cauchy", Formula::kFill},
    {"log_normal", Formula::kFill},
    // Reductions: FLOPs = factor x elements of input 0.
    {"sum", Formula::kReduction, 1},
    {"mean", Formula::kReduction, 1},
    {"amax", Formula::kReduction, 1},
    {"amin", Formula::kReduction, 1},
    {"max", Formula::kReduction, 1},
    {"min", Formula::kReduction, 1},
    {"argmax", Formula::kReduction, 1},
    {"argmin", Formula::kReduction, 1},
    {"prod", Formula::kReduction, 1},
    {"norm", Formula::kReduction, 1},
    {"linalg_vector_norm", Formula::kReduction, 1},
    {"any", Formula::kReduction, 1},
    {"all", Formula::kReduction, 1},
    {"cumsum", Formula::kReduction, 1},
    {"cumprod", Formula::kReduction, 1},
    {"logsumexp", Formula::kReduction, 1},
    {"nll_loss", Formula::kReduction, 1},
    {"nll_loss_nd", Formula::kReduction, 1},
    {"nll_loss_forward", Formula::kReduction, 1},
    {"nll_loss_backward", Formula::kReduction, 1},
    {"nll_loss2d_forward", Formula::kReduction, 1},
    {"topk", Formula::kReduction, 1},
    {"sort", Formula::kReduction, 1},
    {"var", Formula::kReduction, 3},
    {"std", Formula::kReduction, 3},
    {"var_mean", Formula::kReduction, 3},
    {"std_mean", Formula::kReduction, 3},
    {"mse_loss", Formula::kReduction, 3},
    {"mse_loss_backward", Formula::kReduction, 3},
    {"softmax", Formula::kReduction, 5},
    {"_softmax", Formula::kReduction, 5},
    {"log_softmax", Formula::kReduction, 5},
    {"_log_softmax", Formula::kReduction, 5},
    {"_softmax_backward_data", Formula::kReduction, 5},
    {"_log_softmax_backward_data", Formula::kReduction, 5},
    {"cross_entropy_loss", Formula::kReduction, 5},
    {"layer_norm", Formula::kReduction, 5},
    {"native_layer_norm", Formula::kReduction, 5},
    {"group_norm", Formula::kReduction, 5},
    {"native_group_norm", Formula::kReduction, 5},
    {"instance_norm", Formula::kReduction, 5},
    {"batch_norm", Formula::kReduction, 5},
    {"native_batch_norm", Formula::kReduction, 5},
    {"_native_batch_norm_legit", Formula::kReduction, 5},
    {"_batch_norm_impl_index", Formula::kReduction, 5},
    {"cudnn_batch_norm", Formula::kReduction, 5},
    {"miopen_batch_norm", Formula::kReduction, 5},
    {"rms_norm", Formula::kReduction, 5},
    {"_fused_rms_norm", Formula::kReduction, 5},
    {"native_layer_norm_backward", Formula::kReduction, 10},
    {"native_group_norm_backward", Formula::kReduction, 10},
    {"native_batch_norm_backward", Formula::kReduction, 10},
    {"cudnn_batch_norm_backward", Formula::kReduction, 10},
    {"miopen_batch_norm_backward", Formula::kReduction, 10},
    {"_batch_norm_impl_index_backward", Formula::kReduction, 10},
    {"_fused_rms_norm_backward", Formula::kReduction, 10},
    // Pooling.
    {"max_pool1d", Formula::kPool},
    {"max_pool2d", Formula::kPool},
    {"max_pool3d", Formula::kPool},
    {"max_pool2d_with_indices", Formula::kPool},
    {"max_pool3d_with_indices", Formula::kPool},
    {"avg_pool1d", Formula::kPool},
    {"avg_pool2d", Formula::kPool},
    {"avg_pool3d", Formula::kPool},
    {"adaptive_avg_pool1d", Formula::kPool},
    {"adaptive_avg_pool2d", Formula::kPool},
    {"adaptive_avg_pool3d", Formula::kPool},
    {"_adaptive_avg_pool2d", Formula::kPool},
    {"adaptive_max_pool2d", Formula::kPool},
    {"max_pool2d_with_indices_backward", Formula::kPool},
    {"avg_pool2d_backward", Formula::kPool},
    {"_adaptive_avg_pool2d_backward", Formula::kPool},
    // Data movement: 0 FLOPs.
    {"cat", Formula::kMemory},
    {"_cat", Formula::kMemory},
    {"stack", Formula::kMemory},
    {"clone", Formula::kMemory},
    {"contiguous", Formula::kMemory},
    {"_to_copy", Formula::kMemory},
    {"to", Formula::kMemory},
    {"repeat", Formula::kMemory},
    {"constant_pad_nd", Formula::kMemory},
    {"pad", Formula::kMemory},
    {"flip", Formula::kMemory},
    {"roll", Formula::kMemory},
    {"scatter", Formula::kMemory},
    {"scatter_add", Formula::kMemory},
    {"index_put", Formula::kMemory},
    {"_index_put_impl", Formula::kMemory},
    {"index_add", Formula::kMemory},
    {"masked_scatter", Formula::kMemory},
    {"masked_select", Formula::kMemory},
    {"nonzero", Formula::kMemory},
    {"_local_scalar_dense", Formula::kMemory},
    {"item", Formula::kMemory},
    {"embedding_dense_backward", Formula::kMemory},
    {"embedding_backward", Formula::kMemory},
    {"flatten_dense_tensors", Formula::kMemory},
    {"unflatten_dense_tensors", Formula::kMemory},
    {"_foreach_copy", Formula::kMemory},
    {"index_copy", Formula::kMemory},
    {"embedding", Formula::kGather},
    {"index_select", Formula::kGather},
    {"gather", Formula::kGather},
    {"index", Formula::kGather},
    {"_unsafe_index", Formula::kGather},
    {"take", Formula::kGather},
    // Views and allocations: 0 FLOPs, 0 bytes.
    {"view", Formula::kView},
    {"_unsafe_view", Formula::kView},
    {"reshape", Formula::kView},
    {"_reshape_alias", Formula::kView},
    {"as_strided", Formula::kView},
    {"t", Formula::kView},
    {"transpose", Formula::kView},
    {"permute", Formula::kView},
    {"expand", Formula::kView},
    {"expand_as", Formula::kView},
    {"squeeze", Formula::kView},
    {"unsqueeze", Formula::kView},
    {"slice", Formula::kView},
    {"select", Formula::kView},
    {"narrow", Formula::kView},
    {"split", Formula::kView},
    {"split_with_sizes", Formula::kView},
    {"chunk", Formula::kView},
    {"unbind", Formula::kView},
    {"flatten", Formula::kView},
    {"unflatten", Formula::kView},
    {"detach", Formula::kView},
    {"alias", Formula::kView},
    {"view_as", Formula::kView},
    {"numpy_T", Formula::kView},
    {"movedim", Formula::kView},
    {"moveaxis", Formula::kView},
    {"lift_fresh", Formula::kView},
    {"resolve_conj", Formula::kView},
    {"resolve_neg", Formula::kView},
    {"empty", Formula::kView},
    {"empty_like", Formula::kView},
    {"empty_strided", Formula::kView},
    {"new_empty", Formula::kView},
    {"new_empty_strided", Formula::kView},
    {"resize", Formula::kView},
    {"set", Formula::kView},
    {"result_type", Formula::kView},
    {"is_same_size", Formula::kView},
    {"diagonal", Formula::kView},
    {"unfold", Formula::kView},
    {"broadcast_tensors", Formula::kView},
    {"_reshape_copy", Formula::kView},
    {"view_as_real", Formula::kView},
    {"view_as_complex", Formula::kView},
    {"real", Formula::kView},
    {"imag", Formula::kView},
    {"conj", Formula::kView},
    {"_conj", Formula::kView},
    {"_neg_view", Formula::kView},
    {"swapaxes", Formula::kView},
    {"swapdims", Formula::kView},
    {"align_to", Formula::kView},
    {"refine_names", Formula::kView},
    {"_nested_view_from_buffer", Formula::kView},
    {"_has_compatible_shallow_copy_type", Formula::kView},
    {"lift", Formula::kView},
    {"_fw_primal", Formula::kView},
    {"_make_dual", Formula::kView},
    {"_unpack_dual", Formula::kView},
    {"detach_copy", Formula::kView},
    // Foreach ops are elementwise over their tensor lists.
    {"_foreach_", Formula::kElementwise, 1, Match::kPrefix},
};

// The rows by exact name, and the prefix rows in table order: built once.
struct RuleIndex {
  absl::flat_hash_map<absl::string_view, const OpRule*> exact;
  std::vector<const OpRule*> prefixes;
};

const RuleIndex& Rules() {
  static const RuleIndex* index = [] {
    auto* built = new RuleIndex;
    for (const OpRule& rule : kOpRules) {
      if (rule.match == Match::kPrefix) {
        built->prefixes.push_back(&rule);
      } else {
        built->exact.emplace(rule.name, &rule);
      }
    }
    return built;
  }();
  return *index;
}

// Looks up a rule by bare name: "aten::add_" -> "add_" then "add", then the
// prefix rows ("_foreach_mul_").
const OpRule* FindRule(absl::string_view op_name) {
  absl::string_view name = op_name;
  absl::ConsumePrefix(&name, "aten::");
  const RuleIndex& rules = Rules();
  auto it = rules.exact.find(name);
  if (it != rules.exact.end()) return it->second;
  absl::string_view base = name;
  if (absl::ConsumeSuffix(&base, "_")) {
    it = rules.exact.find(base);
    if (it != rules.exact.end()) return it->second;
  }
  for (const OpRule* rule : rules.prefixes) {
    if (absl::StartsWith(name, rule->name)) return rule;
  }
  return nullptr;
}

// What a formula derives; the op's kind comes from the formula's family.
struct FlopsAndBytes {
  int64_t flops = 0;
  int64_t bytes = 0;
};

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

// Output elements, or those of input 0 for an op without outputs recorded.
int64_t OutputOrInputElements(const IoParseResult& in,
                              const IoParseResult& out) {
  int64_t elems = MaxOutputElements(out);
  return elems != 0 ? elems : FirstInputElements(in);
}

int64_t IoBytes(const IoParseResult& in, const IoParseResult& out) {
  return in.TotalBytes() + out.TotalBytes();
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

std::optional<FlopsAndBytes> LinearBackwardCost(const OpRule& /*rule*/,
                                                const IoParseResult& in,
                                                const IoParseResult& out) {
  std::optional<GemmShape> s = LinearBackwardShape(in);
  if (!s) return std::nullopt;
  return FlopsAndBytes{CountProduct(GemmFlops(*s), 2) /*dX and dW*/,
                       IoBytes(in, out)};
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

std::optional<FlopsAndBytes> ConvCost(const OpRule& rule,
                                      const IoParseResult& in,
                                      const IoParseResult& out) {
  const IoEntry* x = TensorAt(in, 0);
  const IoEntry* w = TensorAt(in, 1);
  const IoEntry* y = TensorAt(out, 0);
  if (x == nullptr || w == nullptr) return std::nullopt;
  bool transposed = rule.formula == Formula::kConvTranspose;
  if (rule.formula == Formula::kConvGeneric) {
    std::optional<double> flag = ScalarAt(in, 6);  // the `transposed` argument
    transposed = flag ? *flag != 0 : LooksTransposed(*x, *w, y);
  }
  int64_t flops = ConvFlops(*x, *w, y, transposed);
  if (flops < 0) return std::nullopt;
  return FlopsAndBytes{flops, IoBytes(in, out)};
}

// convolution_backward computes grad_input and grad_weight (each as costly as
// the forward) as selected by output_mask (input 10) or, without values, by
// which outputs are defined.
std::optional<FlopsAndBytes> ConvBackwardCost(const OpRule& /*rule*/,
                                              const IoParseResult& in,
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
  return FlopsAndBytes{CountProduct(forward, parts), IoBytes(in, out)};
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

std::optional<FlopsAndBytes> AttentionCost(const OpRule& rule,
                                           const IoParseResult& in,
                                           const IoParseResult& out) {
  bool backward = rule.formula == Formula::kSdpaBackward ||
                  rule.formula == Formula::kFlashBackward;
  bool blhe = rule.formula == Formula::kFlashForward ||
              rule.formula == Formula::kFlashBackward;
  std::optional<int64_t> flops = AttentionFlops(in, backward ? 1 : 0, blhe);
  if (!flops) return std::nullopt;
  // Backward: 5 GEMMs of the forward's size (dV, dP, dQ, dK, and the recomputed
  // scores) against the forward's 2: 2.5x.
  int64_t total = backward ? CountProduct(*flops, 5) / 2 : *flops;
  return FlopsAndBytes{total, IoBytes(in, out)};
}

// ---- Everything else: never fails once the op is known
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

std::optional<FlopsAndBytes> ElementwiseCost(const OpRule& /*rule*/,
                                             const IoParseResult& in,
                                             const IoParseResult& out) {
  return FlopsAndBytes{OutputOrInputElements(in, out), IoBytes(in, out)};
}

std::optional<FlopsAndBytes> CopyCost(const OpRule& /*rule*/,
                                      const IoParseResult& in,
                                      const IoParseResult& out) {
  int64_t src = in.entries.size() > 1 ? in.entries[1].Bytes() : 0;
  int64_t dst = in.entries.empty() ? 0 : in.entries[0].Bytes();
  return FlopsAndBytes{OutputOrInputElements(in, out), src + dst};
}

std::optional<FlopsAndBytes> FillCost(const OpRule& /*rule*/,
                                      const IoParseResult& in,
                                      const IoParseResult& out) {
  int64_t dst = in.entries.empty() ? out.TotalBytes() : in.entries[0].Bytes();
  return FlopsAndBytes{OutputOrInputElements(in, out), dst};
}

std::optional<FlopsAndBytes> ReductionCost(const OpRule& rule,
                                           const IoParseResult& in,
                                           const IoParseResult& out) {
  return FlopsAndBytes{
      CountProduct(rule.flops_per_element, FirstInputElements(in)),
      IoBytes(in, out)};
}

std::optional<FlopsAndBytes> PoolCost(const OpRule& /*rule*/,
                                      const IoParseResult& in,
                                      const IoParseResult& out) {
  return FlopsAndBytes{PoolFlops(in, out), IoBytes(in, out)};
}

std::optional<FlopsAndBytes> MemoryCost(const OpRule& /*rule*/,
                                        const IoParseResult& in,
                                        const IoParseResult& out) {
  return FlopsAndBytes{0, IoBytes(in, out)};
}

std::optional<FlopsAndBytes> GatherCost(const OpRule& /*rule*/,
                                        const IoParseResult& in,
                                        const IoParseResult& out) {
  return FlopsAndBytes{0, GatherBytes(in, out)};
}

std::optional<FlopsAndBytes> ViewCost(const OpRule& /*rule*/,
                                      const IoParseResult& /*in*/,
                                      const IoParseResult& /*out*/) {
  return FlopsAndBytes{0, 0};
}

// ---- Formula families
// ---------------------------------------------------------------------

// How one formula derives FLOPs and bytes; nullopt: the shapes do not fit it.
using CostFormula = std::optional<FlopsAndBytes> (*)(const OpRule& rule,
                                                     const IoParseResult& in,
                                                     const IoParseResult& out);

// Each formula's op kind and cost function, in Formula order.
struct FormulaFamily {
  Formula formula;
  OpKind kind;
  CostFormula cost;
};

constexpr FormulaFamily kFamilies[] = {
    {Formula::kLinearBackward, OpKind::kGemm, LinearBackwardCost},
    {Formula::kConv, OpKind::kConv, ConvCost},
    {Formula::kConvGeneric, OpKind::kConv, ConvCost},
    {Formula::kConvTranspose, OpKind::kConv, ConvCost},
    {Formula::kConvBackward, OpKind::kConv, ConvBackwardCost},
    {Formula::kSdpa, OpKind::kAttention, AttentionCost},
    {Formula::kSdpaBackward, OpKind::kAttention, AttentionCost},
    {Formula::kFlashForward, OpKind::kAttention, AttentionCost},
    {Formula::kFlashBackward, OpKind::kAttention, AttentionCost},
    {Formula::kElementwise, OpKind::kElementwise, ElementwiseCost},
    {Formula::kCopy, OpKind::kElementwise, CopyCost},
    {Formula::kFill, OpKind::kElementwise, FillCost},
    {Formula::kReduction, OpKind::kReduction, ReductionCost},
    {Formula::kPool, OpKind::kReduction, PoolCost},
    {Formula::kMemory, OpKind::kMemory, MemoryCost},
    {Formula::kGather, OpKind::kMemory, GatherCost},
    {Formula::kView, OpKind::kView, ViewCost},
};

// FamilyOf indexes kFamilies by Formula: every formula has its row, in order.
constexpr bool FamiliesInFormulaOrder() {
  for (size_t i = 0; i < std::size(kFamilies); ++i) {
    if (static_cast<size_t>(kFamilies[i].formula) != i) return false;
  }
  return std::size(kFamilies) == static_cast<size_t>(Formula::kView) + 1;
}
static_assert(FamiliesInFormulaOrder(), "kFamilies must follow Formula");

const FormulaFamily& FamilyOf(const OpRule& rule) {
  return kFamilies[static_cast<size_t>(rule.formula)];
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
  const OpCost fallback{OpKind::kOther, 0, IoBytes(inputs, outputs), false};
  if (const GemmForm form = GemmFormOfName(op_name); form != GemmForm::kNone) {
    std::optional<GemmShape> s = GemmShapeOf(form, inputs, nullptr);
    if (!s) return fallback;
    return {s->batch > 1 ? OpKind::kBatchedGemm : OpKind::kGemm, GemmFlops(*s),
            fallback.tensor_size_bytes, true};
  }
  const OpRule* rule = FindRule(op_name);
  if (rule == nullptr) return fallback;
  const FormulaFamily& family = FamilyOf(*rule);
  std::optional<FlopsAndBytes> cost = family.cost(*rule, inputs, outputs);
  if (!cost) return fallback;
  return {family.kind, cost->flops, cost->bytes, true};
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
  const OpRule* rule = FindRule(op_name);
  return rule == nullptr ? OpKind::kOther : FamilyOf(*rule).kind;
}

}  // namespace et
