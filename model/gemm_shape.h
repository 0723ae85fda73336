// The one rule for "this op is a GEMM, of this shape": which op names are
// GEMM-like and how their input shapes (and, when recorded, strides) give
// batch, M, N, K and the operand layouts. The simulator's FLOP counts
// (model/op_cost), the node model's GEMM kind (model/node_model) and the
// replay's cuBLAS calls all come from here, so an op costed as a GEMM is
// replayed as one. Pure functions; thread-safe.
#ifndef MODEL_GEMM_SHAPE_H_
#define MODEL_GEMM_SHAPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "model/dtype.h"
#include "model/io_shapes.h"

namespace et {

// How an op's inputs map onto one GEMM.
enum class GemmForm : uint8_t {
  kNone,
  kMm,       // mm(a[M,K], b[K,N])
  kAddmm,    // addmm(bias, a, b), _addmm_activation
  kBmm,      // bmm(a[B,M,K], b[B,K,N])
  kBaddbmm,  // baddbmm(bias, a, b)
  kMatmul,   // matmul, dot, vdot, mv: torch.matmul's broadcasting
  kLinear,   // linear(x[...,K], w[N,K], bias?), mkldnn_linear
};

// The form of `op_name` ("aten::" optional); kNone for any other op.
GemmForm GemmFormOfName(absl::string_view op_name);

// C[batch][m][n] = op(A)[batch][m][k] * op(B)[batch][k][n], row-major as
// PyTorch sees it.
struct GemmShape {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;  // A is stored k x m (e.g. a transposed view)
  bool trans_b = false;  // B is stored n x k (aten::linear's weight)
  // A's position among the op's inputs; B follows it (addmm's bias is 0).
  int a_input = 0;
  Dtype dtype = Dtype::kFloat32;
  double flops() const { return 2.0 * batch * m * n * k; }
};

// The GEMM that `form` makes of `inputs`, or nullopt when the shapes do not
// describe one (wrong ranks, K of A and B differ, a dim not positive).
// `strides` (the input_strides list parsed like shapes; may be null) marks
// transposed operands. dtype is left to the caller.
std::optional<GemmShape> GemmShapeOf(GemmForm form, const IoParseResult& inputs,
                                     const IoParseResult* strides);

}  // namespace et

#endif  // MODEL_GEMM_SHAPE_H_
