// Unit tests of the GEMM rule (model/gemm_shape.h): which names are GEMMs, how
// input dims give batch/M/N/K, that K must agree, how strides mark transposed
// operands, and that a damaged shape (a zero or negative dim) is no GEMM.
// Inputs are hand-made IoParseResults, one rule per test.
#include "model/gemm_shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace et {
namespace {

using Dims = std::vector<int64_t>;

// An input list of plain tensors with these dims (strides are parsed into the
// same structure, so this builds those too).
IoParseResult Tensors(const std::vector<Dims>& dims) {
  IoParseResult io;
  for (const Dims& d : dims) {
    IoEntry e;
    e.kind = IoKind::kTensor;
    e.dims = d;
    io.entries.push_back(e);
  }
  return io;
}

std::optional<GemmShape> Shape(absl::string_view name,
                               const std::vector<Dims>& dims) {
  return GemmShapeOf(GemmFormOfName(name), Tensors(dims), nullptr);
}

TEST(GemmShapeTest, NamesWithAndWithoutAtenPrefix) {
  EXPECT_EQ(GemmFormOfName("aten::mm"), GemmForm::kMm);
  EXPECT_EQ(GemmFormOfName("mm"), GemmForm::kMm);
  EXPECT_EQ(GemmFormOfName("aten::_addmm_activation"), GemmForm::kAddmm);
  EXPECT_EQ(GemmFormOfName("aten::baddbmm"), GemmForm::kBaddbmm);
  EXPECT_EQ(GemmFormOfName("aten::mv"), GemmForm::kMatmul);
  EXPECT_EQ(GemmFormOfName("aten::mkldnn_linear"), GemmForm::kLinear);
  EXPECT_EQ(GemmFormOfName("aten::add"), GemmForm::kNone);
  EXPECT_EQ(GemmFormOfName("aten::mmx"), GemmForm::kNone);
}

TEST(GemmShapeTest, MmGivesMNKAndFlops) {
  auto g = Shape("aten::mm", {{8, 16}, {16, 32}});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->batch, 1);
  EXPECT_EQ(g->m, 8);
  EXPECT_EQ(g->k, 16);
  EXPECT_EQ(g->n, 32);
  EXPECT_EQ(g->a_input, 0);
  EXPECT_FALSE(g->trans_a);
  EXPECT_FALSE(g->trans_b);
  EXPECT_DOUBLE_EQ(g->flops(), 2.0 * 8 * 16 * 32);
}

TEST(GemmShapeTest, KMustAgree) {
  EXPECT_FALSE(Shape("aten::mm", {{8, 16}, {15, 32}}).has_value());
  EXPECT_FALSE(Shape("aten::bmm", {{4, 8, 16}, {4, 17, 32}}).has_value());
  EXPECT_FALSE(Shape("aten::linear", {{8, 16}, {32, 15}}).has_value());
  EXPECT_FALSE(Shape("aten::matmul", {{8, 16}, {15, 32}}).has_value());
}

TEST(GemmShapeTest, WrongRanksAreNoGemm) {
  EXPECT_FALSE(Shape("aten::mm", {{8, 16, 1}, {16, 32}}).has_value());
  EXPECT_FALSE(Shape("aten::bmm", {{8, 16}, {16, 32}}).has_value());
  EXPECT_FALSE(Shape("aten::linear", {{8, 16}, {2, 32, 16}}).has_value());
  EXPECT_FALSE(Shape("aten::mm", {{8, 16}}).has_value());  // B missing
  EXPECT_FALSE(Shape("aten::relu", {{8, 16}, {16, 32}}).has_value());
}

TEST(GemmShapeTest, AddmmSkipsTheBias) {
  auto g = Shape("aten::addmm", {{32}, {8, 16}, {16, 32}});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->a_input, 1);
  EXPECT_EQ(g->m, 8);
  EXPECT_EQ(g->k, 16);
  EXPECT_EQ(g->n, 32);
}

TEST(GemmShapeTest, BmmAndBaddbmmAreBatched) {
  auto g = Shape("aten::bmm", {{4, 8, 16}, {4, 16, 32}});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->batch, 4);
  EXPECT_EQ(g->m, 8);
  EXPECT_EQ(g->n, 32);
  EXPECT_DOUBLE_EQ(g->flops(), 2.0 * 4 * 8 * 16 * 32);
  // The batch counts must agree.
  EXPECT_FALSE(Shape("aten::bmm", {{4, 8, 16}, {3, 16, 32}}).has_value());
  auto b = Shape("aten::baddbmm", {{4, 8, 32}, {4, 8, 16}, {4, 16, 32}});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->a_input, 1);
  EXPECT_EQ(b->batch, 4);
}

TEST(GemmShapeTest, LinearFoldsLeadingDimsIntoMAndTransposesTheWeight) {
  // x[2, 3, 16] * W[32, 16]^T: M = 6, and W stored row-major is B transposed.
  auto g = Shape("aten::linear", {{2, 3, 16}, {32, 16}, {32}});
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->batch, 1);
  EXPECT_EQ(g->m, 6);
  EXPECT_EQ(g->k, 16);
  EXPECT_EQ(g->n, 32);
  EXPECT_TRUE(g->trans_b);
}

TEST(GemmShapeTest, MatmulBroadcastsBatchAndPromotesVectors) {
  // A batch of A against one matrix B folds into M.
  auto folded = Shape("aten::matmul", {{5, 8, 16}, {16, 32}});
  ASSERT_TRUE(folded.has_value());
  EXPECT_EQ(folded->batch, 1);
  EXPECT_EQ(folded->m, 40);
  // Both batched: leading dims broadcast (1 against 5).
  auto batched = Shape("aten::matmul", {{1, 8, 16}, {5, 16, 32}});
  ASSERT_TRUE(batched.has_value());
  EXPECT_EQ(batched->batch, 5);
  EXPECT_EQ(batched->m, 8);
  // mv: B is a vector, N = 1.
  auto mv = Shape("aten::mv", {{8, 16}, {16}});
  ASSERT_TRUE(mv.has_value());
  EXPECT_EQ(mv->m, 8);
  EXPECT_EQ(mv->n, 1);
  EXPECT_EQ(mv->k, 16);
  // dot: both vectors.
  auto dot = Shape("aten::dot", {{16}, {16}});
  ASSERT_TRUE(dot.has_value());
  EXPECT_EQ(dot->m, 1);
  EXPECT_EQ(dot->n, 1);
  EXPECT_EQ(dot->k, 16);
}

TEST(GemmShapeTest, TensorListOperandUsesItsFirstTensor) {
  IoParseResult io = Tensors({{8, 16}});
  IoEntry list;
  list.kind = IoKind::kTensorList;
  list.list_dims = {{16, 32}, {99, 99}};
  io.entries.push_back(list);
  auto g = GemmShapeOf(GemmForm::kMm, io, nullptr);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->n, 32);
}

TEST(GemmShapeTest, ColumnMajorStridesMarkTransposes) {
  // A [8, 16] stored with strides [1, 8] is a transposed view; B row-major.
  const IoParseResult in = Tensors({{8, 16}, {16, 32}});
  const IoParseResult a_t = Tensors({{1, 8}, {32, 1}});
  auto g = GemmShapeOf(GemmForm::kMm, in, &a_t);
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->trans_a);
  EXPECT_FALSE(g->trans_b);
  const IoParseResult b_t = Tensors({{16, 1}, {1, 16}});
  g = GemmShapeOf(GemmForm::kMm, in, &b_t);
  ASSERT_TRUE(g.has_value());
  EXPECT_FALSE(g->trans_a);
  EXPECT_TRUE(g->trans_b);
}

TEST(GemmShapeTest, UnitDimsSayNothingAboutLayout) {
  // [1, 16] with strides [1, 1] is both row- and column-major: row-major.
  const IoParseResult in = Tensors({{1, 16}, {16, 32}});
  const IoParseResult strides = Tensors({{1, 1}, {32, 1}});
  auto g = GemmShapeOf(GemmForm::kMm, in, &strides);
  ASSERT_TRUE(g.has_value());
  EXPECT_FALSE(g->trans_a);
}

TEST(GemmShapeTest, LinearWeightStoredTransposedIsNotTransposedForCublas) {
  // W [32, 16] with strides [1, 32]: stored K x N, i.e. already B itself.
  const IoParseResult in = Tensors({{8, 16}, {32, 16}});
  const IoParseResult strides = Tensors({{16, 1}, {1, 32}});
  auto g = GemmShapeOf(GemmForm::kLinear, in, &strides);
  ASSERT_TRUE(g.has_value());
  EXPECT_FALSE(g->trans_b);
}

TEST(GemmShapeTest, FoldedBatchOfAIsNeverTransposed) {
  // matmul(A[5, 8, 16] column-major in its last two dims, B[16, 32]): A folds
  // into one [40, 16] matrix, which only a row-major A allows.
  const IoParseResult in = Tensors({{5, 8, 16}, {16, 32}});
  const IoParseResult strides = Tensors({{128, 1, 8}, {32, 1}});
  auto g = GemmShapeOf(GemmForm::kMatmul, in, &strides);
  ASSERT_TRUE(g.has_value());
  EXPECT_FALSE(g->trans_a);
  // The same A in a bmm is a transposed operand.
  const IoParseResult bmm_in = Tensors({{5, 8, 16}, {5, 16, 32}});
  const IoParseResult bmm_strides = Tensors({{128, 1, 8}, {512, 32, 1}});
  g = GemmShapeOf(GemmForm::kBmm, bmm_in, &bmm_strides);
  ASSERT_TRUE(g.has_value());
  EXPECT_TRUE(g->trans_a);
}

TEST(GemmShapeTest, ZeroOrNegativeDimsAreNoGemm) {
  EXPECT_FALSE(Shape("aten::mm", {{0, 16}, {16, 32}}).has_value());
  EXPECT_FALSE(Shape("aten::mm", {{8, 0}, {0, 32}}).has_value());
  EXPECT_FALSE(Shape("aten::mm", {{-8, 16}, {16, 32}}).has_value());
  EXPECT_FALSE(Shape("aten::bmm", {{-4, 8, 16}, {-4, 16, 32}}).has_value());
  // linear's M is a DimProduct: a negative leading dim makes it 0, two
  // negative ones must not multiply to a positive M.
  EXPECT_FALSE(Shape("aten::linear", {{-2, 3, 16}, {32, 16}}).has_value());
  EXPECT_FALSE(Shape("aten::linear", {{-2, -3, 16}, {32, 16}}).has_value());
}

TEST(GemmShapeTest, MatmulWithAnEmptyOrDamagedBatchIsNoGemm) {
  // torch.matmul of [0, 8, 16] and [16, 32] is an empty [0, 8, 32]: no work.
  EXPECT_FALSE(Shape("aten::matmul", {{0, 8, 16}, {16, 32}}).has_value());
  // Broadcasting 0 against 1 gives 0, not 1.
  EXPECT_FALSE(Shape("aten::matmul", {{0, 8, 16}, {1, 16, 32}}).has_value());
  // A negative batch dim is a damaged shape, whatever it is broadcast against;
  // two of them must not multiply to a positive batch.
  EXPECT_FALSE(Shape("aten::matmul", {{-2, 8, 16}, {1, 16, 32}}).has_value());
  EXPECT_FALSE(
      Shape("aten::matmul", {{-2, -3, 8, 16}, {-2, -3, 16, 32}}).has_value());
}

}  // namespace
}  // namespace et
