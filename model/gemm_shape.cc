// GEMM recognition and shapes; see gemm_shape.h.
#include "model/gemm_shape.h"

#include <algorithm>
#include <vector>

#include "absl/strings/strip.h"
#include "base/checked_math.h"

namespace et {
namespace {

using Dims = std::vector<int64_t>;

int64_t Product(const Dims& dims, size_t begin, size_t end) {
  return DimProduct(absl::MakeConstSpan(dims).subspan(begin, end - begin));
}

// An operand's dims: a tensor's, or a tensor list's first tensor's.
const Dims* OperandDims(const IoParseResult& io, size_t i) {
  if (i >= io.entries.size()) return nullptr;
  const IoEntry& e = io.entries[i];
  if (e.kind == IoKind::kTensor) return &e.dims;
  if (e.kind == IoKind::kTensorList && !e.list_dims.empty())
    return &e.list_dims.front();
  return nullptr;
}

// torch.matmul: 1-D operands are promoted, leading dims broadcast; a batch of
// A against one matrix B folds into M (one GEMM, as cuBLAS runs it).
bool MatmulShape(const Dims& a, const Dims& b, GemmShape* g) {
  if (a.empty() || b.empty()) return false;
  g->k = a.back();
  g->m = a.size() >= 2 ? a[a.size() - 2] : 1;
  g->n = b.size() >= 2 ? b.back() : 1;
  const int64_t b_k = b.size() >= 2 ? b[b.size() - 2] : b[0];
  if (b_k != g->k) return false;
  const size_t a_batch = a.size() > 2 ? a.size() - 2 : 0;
  const size_t b_batch = b.size() > 2 ? b.size() - 2 : 0;
  for (size_t i = 0; i < std::max(a_batch, b_batch); ++i) {
    const int64_t da = i < a_batch ? a[a_batch - 1 - i] : 1;
    const int64_t db = i < b_batch ? b[b_batch - 1 - i] : 1;
    // A dim broadcast against 1 is itself (0 or a damaged negative one
    // included: max() made those 1), and a non-positive one empties the batch.
    const int64_t d = da == 1 ? db : (db == 1 ? da : std::max(da, db));
    g->batch = CountProduct(g->batch, d);
  }
  if (b.size() <= 2) {
    g->m = SaturatingMul(g->m, g->batch);
    g->batch = 1;
  }
  return true;
}

bool ShapeOfForm(GemmForm form, const Dims& a, const Dims& b, GemmShape* g) {
  switch (form) {
    case GemmForm::kMm:
    case GemmForm::kAddmm:
      if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return false;
      g->m = a[0], g->k = a[1], g->n = b[1];
      return true;
    case GemmForm::kBmm:
    case GemmForm::kBaddbmm:
      if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1])
        return false;
      g->batch = a[0], g->m = a[1], g->k = a[2], g->n = b[2];
      return true;
    case GemmForm::kLinear:  // y = x W^T, W is [N, K]
      if (a.empty() || b.size() != 2 || a.back() != b[1]) return false;
      g->m = Product(a, 0, a.size() - 1), g->k = b[1], g->n = b[0];
      return true;
    case GemmForm::kMatmul:
      return MatmulShape(a, b, g);
    case GemmForm::kNone:
      return false;
  }
  return false;
}

// True when the last two dims are stored column-major (strides [1, rows] for
// [rows, cols]). Unit dims say nothing about the layout: row-major.
bool StoredTransposed(const Dims& dims, const Dims* strides) {
  if (strides == nullptr || dims.size() < 2 || strides->size() != dims.size())
    return false;
  const size_t rows = dims.size() - 2, cols = dims.size() - 1;
  if (dims[rows] <= 1 || dims[cols] <= 1) return false;
  return (*strides)[rows] == 1 && (*strides)[cols] >= dims[rows];
}

}  // namespace

GemmForm GemmFormOfName(absl::string_view name) {
  absl::ConsumePrefix(&name, "aten::");
  if (name == "mm" || name == "_mm") return GemmForm::kMm;
  if (name == "addmm" || name == "_addmm_activation") return GemmForm::kAddmm;
  if (name == "bmm") return GemmForm::kBmm;
  if (name == "baddbmm") return GemmForm::kBaddbmm;
  if (name == "matmul" || name == "dot" || name == "vdot" || name == "mv")
    return GemmForm::kMatmul;
  if (name == "linear" || name == "mkldnn_linear") return GemmForm::kLinear;
  return GemmForm::kNone;
}

std::optional<GemmShape> GemmShapeOf(GemmForm form, const IoParseResult& inputs,
                                     const IoParseResult* strides) {
  const size_t first =
      (form == GemmForm::kAddmm || form == GemmForm::kBaddbmm) ? 1 : 0;
  const Dims* a = OperandDims(inputs, first);
  const Dims* b = OperandDims(inputs, first + 1);
  if (a == nullptr || b == nullptr) return std::nullopt;
  GemmShape g;
  g.a_input = static_cast<int>(first);
  if (!ShapeOfForm(form, *a, *b, &g)) return std::nullopt;
  if (g.batch <= 0 || g.m <= 0 || g.n <= 0 || g.k <= 0) return std::nullopt;
  const Dims* a_strides =
      strides != nullptr ? OperandDims(*strides, first) : nullptr;
  const Dims* b_strides =
      strides != nullptr ? OperandDims(*strides, first + 1) : nullptr;
  // A [..., M, K] folded into one [M', K] matrix must be row-major.
  const bool a_folded =
      (form == GemmForm::kMatmul || form == GemmForm::kLinear) &&
      a->size() > 2 && b->size() <= 2;
  g.trans_a = !a_folded && StoredTransposed(*a, a_strides);
  const bool b_transposed = StoredTransposed(*b, b_strides);
  // linear's weight is [N, K]: row-major storage is already B transposed.
  g.trans_b = form == GemmForm::kLinear ? !b_transposed : b_transposed;
  return g;
}

}  // namespace et
