// Tests of model/op_cost: FLOPs and bytes of real ops from tests/data, against
// values computed by hand from their shapes (formulas in docs/op-cost.md).
#include "model/op_cost.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/model/et_json_nodes.h"

namespace et {
namespace {

using ::et::testing::FindNodeIo;
using ::et::testing::IoOf;
using ::et::testing::JsonNodeIo;
using ::et::testing::LoadEtJson;

const std::string kData = ET_TEST_DATA;

class RealOpTest : public ::testing::Test {
 protected:
  // Each trace is parsed when a test first asks for it: ctest runs every test
  // in its own process, and the ResNet trace alone took ~100 s under ASan.
  static const nlohmann::json& NnDemo() {
    return Loaded("/pytorch-1.13-cpu/nn_demo_et.json.gz");
  }
  static const nlohmann::json& Tfm() {
    return Loaded("/pytorch-1.13-cpu/tfm_small_et.json.gz");
  }
  static const nlohmann::json& Resnet() {
    return Loaded("/param/resnet_1gpu_et.1.1.1.json.gz");
  }
  static const nlohmann::json& Loaded(const std::string& path) {
    static auto* traces = new std::map<std::string, nlohmann::json>();
    auto it = traces->find(path);
    if (it == traces->end())
      it = traces->emplace(path, LoadEtJson(kData + path)).first;
    return it->second;
  }

  // Cost of node `id`, checking that it is the op we expect.
  static OpCost CostOf(const nlohmann::json& et, int64_t id,
                       const std::string& name) {
    JsonNodeIo io = FindNodeIo(et, id);
    EXPECT_EQ(io.name, name);
    IoParseResult in = ParseIoInfo(io.in_shapes, io.in_types, io.in_values);
    IoParseResult out = ParseIoInfo(io.out_shapes, io.out_types, io.out_values);
    EXPECT_EQ(in.bad_values + out.bad_values, 0);
    return EstimateOpCost(io.name, in, out);
  }
};

TEST_F(RealOpTest, AddmmOfNnDemo) {
  // addmm(bias[5], x[16,10], w^T[10,5]) -> [16,5]: 2*16*5*10 FLOPs.
  OpCost c = CostOf(NnDemo(), 22, "aten::addmm");
  EXPECT_EQ(c.kind, OpKind::kGemm);
  EXPECT_EQ(c.num_ops, 1600);
  EXPECT_EQ(c.tensor_size_bytes, (5 + 160 + 50 + 80) * 4);
  EXPECT_TRUE(c.from_shapes);
}

TEST_F(RealOpTest, LinearAndItsTransposeOfNnDemo) {
  // linear(x[16,10], w[5,10], b[5]) is the same GEMM as its addmm child.
  EXPECT_EQ(CostOf(NnDemo(), 18, "aten::linear").num_ops, 1600);
  OpCost t = CostOf(NnDemo(), 19, "aten::t");
  EXPECT_EQ(t.kind, OpKind::kView);
  EXPECT_EQ(t.num_ops, 0);
  EXPECT_EQ(t.tensor_size_bytes, 0);
}

TEST_F(RealOpTest, MmAndReluOfNnDemo) {
  // Backward mm [16,1] x [1,5]: K = 1.
  EXPECT_EQ(CostOf(NnDemo(), 109, "aten::mm").num_ops, 2 * 16 * 5 * 1);
  OpCost relu = CostOf(NnDemo(), 31, "aten::relu");
  EXPECT_EQ(relu.kind, OpKind::kElementwise);
  EXPECT_EQ(relu.num_ops, 80);
  EXPECT_EQ(relu.tensor_size_bytes, 2 * 80 * 4);
}

TEST_F(RealOpTest, ConvolutionOfResnet) {
  // ResNet stem: x[32,3,224,224] * w[64,3,7,7] -> [32,64,112,112];
  // 2 * (32*64*112*112 outputs) * (3*7*7 MACs each).
  const int64_t expected = 2LL * 32 * 64 * 112 * 112 * 3 * 7 * 7;
  OpCost conv = CostOf(Resnet(), 1448, "aten::convolution");
  EXPECT_EQ(conv.kind, OpKind::kConv);
  EXPECT_EQ(conv.num_ops, expected);
  EXPECT_EQ(conv.num_ops, 7552892928LL);
  EXPECT_EQ(
      conv.tensor_size_bytes,
      (32LL * 3 * 224 * 224 + 64 * 3 * 7 * 7 + 32LL * 64 * 112 * 112) * 4);
  // Its cudnn_convolution child: same work (value 6 there is `benchmark`, not
  // transposed).
  EXPECT_EQ(CostOf(Resnet(), 1450, "aten::cudnn_convolution").num_ops,
            expected);
}

TEST_F(RealOpTest, ConvolutionBackwardOfResnet) {
  // grad_out[32,2048,7,7], x[32,512,7,7], w[2048,512,1,1], mask [T,T,F]:
  // grad_input and grad_weight, each 2 * 32*2048*7*7 * 512*1*1.
  OpCost c = CostOf(Resnet(), 3293, "aten::convolution_backward");
  EXPECT_EQ(c.kind, OpKind::kConv);
  EXPECT_EQ(c.num_ops, 2 * (2LL * 32 * 2048 * 7 * 7 * 512));
}

TEST_F(RealOpTest, BackwardMmOfResnetFc) {
  // The fc layer's weight gradient: [1000,32] x [32,2048].
  EXPECT_EQ(CostOf(Resnet(), 3211, "aten::mm").num_ops, 2LL * 1000 * 2048 * 32);
  EXPECT_EQ(CostOf(Resnet(), 3141, "aten::addmm").num_ops,
            2LL * 32 * 1000 * 2048);
}

TEST_F(RealOpTest, MaxPoolOfResnet) {
  // 3x3 window over a [32,64,56,56] output.
  OpCost c = CostOf(Resnet(), 1474, "aten::max_pool2d_with_indices");
  EXPECT_EQ(c.kind, OpKind::kReduction);
  EXPECT_EQ(c.num_ops, 32LL * 64 * 56 * 56 * 9);
}

TEST_F(RealOpTest, AttentionBmmsOfTransformer) {
  // Q K^T per head: [32,64,32] x [32,32,64]; then P V: [32,64,64] x [32,64,32].
  OpCost qk = CostOf(Tfm(), 99, "aten::bmm");
  EXPECT_EQ(qk.kind, OpKind::kBatchedGemm);
  EXPECT_EQ(qk.num_ops, 2LL * 32 * 64 * 64 * 32);
  EXPECT_EQ(CostOf(Tfm(), 382, "aten::bmm").num_ops, 2LL * 32 * 64 * 32 * 64);
}

TEST_F(RealOpTest, InProjectionMatmulOfTransformer) {
  // matmul([64,8,128], [128,384]) is one GEMM of 512 rows; linear the same.
  OpCost m = CostOf(Tfm(), 25, "aten::matmul");
  EXPECT_EQ(m.kind, OpKind::kGemm);
  EXPECT_EQ(m.num_ops, 2LL * 512 * 384 * 128);
  EXPECT_EQ(CostOf(Tfm(), 20, "aten::linear").num_ops, 2LL * 512 * 384 * 128);
}

TEST_F(RealOpTest, NormSoftmaxCopyCatOfTransformer) {
  OpCost ln = CostOf(Tfm(), 726, "aten::native_layer_norm");
  EXPECT_EQ(ln.kind, OpKind::kReduction);
  EXPECT_EQ(ln.num_ops, 5LL * 8 * 64 * 128);
  EXPECT_EQ(CostOf(Tfm(), 364, "aten::_softmax").num_ops, 5LL * 32 * 64 * 64);

  OpCost copy = CostOf(Tfm(), 32, "aten::copy_");  // [64,8,128] -> [64,8,128]
  EXPECT_EQ(copy.kind, OpKind::kElementwise);
  EXPECT_EQ(copy.num_ops, 64 * 8 * 128);
  EXPECT_EQ(copy.tensor_size_bytes, 2 * 64 * 8 * 128 * 4);

  OpCost cat =
      CostOf(Tfm(), 3119, "aten::cat");  // 3 x [64,8,128] -> [64,8,384]
  EXPECT_EQ(cat.kind, OpKind::kMemory);
  EXPECT_EQ(cat.num_ops, 0);
  EXPECT_EQ(cat.tensor_size_bytes, 2 * 3 * 64 * 8 * 128 * 4);

  OpCost fill = CostOf(Tfm(), 1708, "aten::fill_");  // writes [512,1000] only
  EXPECT_EQ(fill.num_ops, 512 * 1000);
  EXPECT_EQ(fill.tensor_size_bytes, 512 * 1000 * 4);
}

// Over a whole real trace: every GEMM-like op is understood, and views move
// nothing.
TEST_F(RealOpTest, EveryGemmOfTransformerIsUnderstood) {
  int64_t gemms = 0;
  for (const nlohmann::json& node : (Tfm())["nodes"]) {
    JsonNodeIo io = IoOf(node);
    OpCost c = EstimateOpCost(io.name, ParseIoInfo(io.in_shapes, io.in_types),
                              ParseIoInfo(io.out_shapes, io.out_types));
    if (io.name == "aten::mm" || io.name == "aten::bmm" ||
        io.name == "aten::addmm" || io.name == "aten::matmul" ||
        io.name == "aten::linear") {
      ++gemms;
      EXPECT_TRUE(c.from_shapes) << io.name << " " << node["id"];
      EXPECT_GT(c.num_ops, 0) << io.name << " " << node["id"];
    }
    if (io.name == "aten::view" || io.name == "aten::transpose") {
      EXPECT_EQ(c.tensor_size_bytes, 0);
    }
  }
  EXPECT_EQ(gemms, 38 + 24 + 18 + 14 + 4);  // counted with Python from the JSON
}

IoParseResult Tensors(const std::string& shapes, const std::string& type,
                      int count) {
  std::string types = "[";
  for (int i = 0; i < count; ++i) types += (i ? ",\"" : "\"") + type + "\"";
  return ParseIoInfo(shapes, types + "]");
}

TEST(OpCostTest, MatmulRankCombinations) {
  auto flops = [](const std::string& shapes) {
    return EstimateOpCost("aten::matmul", Tensors(shapes, "Tensor(float)", 2),
                          {})
        .num_ops;
  };
  EXPECT_EQ(flops("[[128],[128]]"), 2 * 128);                // dot
  EXPECT_EQ(flops("[[16,128],[128]]"), 2 * 16 * 128);        // matrix-vector
  EXPECT_EQ(flops("[[128],[128,8]]"), 2 * 128 * 8);          // vector-matrix
  EXPECT_EQ(flops("[[16,128],[128,8]]"), 2 * 16 * 128 * 8);  // mm
  EXPECT_EQ(flops("[[4,16,128],[4,128,8]]"), 2 * 4 * 16 * 128 * 8);
  EXPECT_EQ(flops("[[2,1,16,64],[3,64,8]]"),
            2 * 6 * 16 * 64 * 8);  // broadcast batch
  EXPECT_EQ(flops("[[16,128],[4,128,8]]"), 2 * 4 * 16 * 128 * 8);
  EXPECT_EQ(
      EstimateOpCost("aten::matmul",
                     Tensors("[[4,16,128],[4,128,8]]", "Tensor(float)", 2), {})
          .kind,
      OpKind::kBatchedGemm);
  EXPECT_FALSE(EstimateOpCost("aten::matmul",
                              Tensors("[[],[3]]", "Tensor(float)", 2), {})
                   .from_shapes);  // 0-d operand: not a matmul we can cost
}

TEST(OpCostTest, ScaledDotProductAttention) {
  // q, k, v [2,8,128,64]: Q K^T and P V, each 2 * 16 * 128 * 128 * 64.
  const int64_t forward = 2 * (2LL * 16 * 128 * 128 * 64);
  IoParseResult qkv = Tensors("[[2,8,128,64],[2,8,128,64],[2,8,128,64]]",
                              "Tensor(c10::Half)", 3);
  IoParseResult out = Tensors("[[2,8,128,64]]", "Tensor(c10::Half)", 1);
  OpCost c = EstimateOpCost("aten::scaled_dot_product_attention", qkv, out);
  EXPECT_EQ(c.kind, OpKind::kAttention);
  EXPECT_EQ(c.num_ops, forward);
  EXPECT_EQ(c.tensor_size_bytes, 4 * 2 * 8 * 128 * 64 * 2);
  EXPECT_EQ(
      EstimateOpCost("aten::_scaled_dot_product_flash_attention", qkv, out)
          .num_ops,
      forward);
  IoParseResult grad_qkv =
      Tensors("[[2,8,128,64],[2,8,128,64],[2,8,128,64],[2,8,128,64]]",
              "Tensor(c10::Half)", 4);
  EXPECT_EQ(
      EstimateOpCost("aten::_scaled_dot_product_efficient_attention_backward",
                     grad_qkv, {})
          .num_ops,
      forward * 5 / 2);
  // _flash_attention_forward takes [B, L, H, E]; cross-attention with S = 256.
  IoParseResult blhe = Tensors("[[2,128,8,64],[2,256,8,64],[2,256,8,64]]",
                               "Tensor(c10::BFloat16)", 3);
  EXPECT_EQ(EstimateOpCost("aten::_flash_attention_forward", blhe, {}).num_ops,
            2 * (2LL * 16 * 128 * 256 * 64));
}

TEST(OpCostTest, TransposedConvolutionAndGroups) {
  // conv_transpose2d: x[1,16,8,8], w[16,4,3,3] (Cin, Cout/groups, k): every
  // input point does 4*3*3 MACs.
  IoParseResult in = Tensors("[[1,16,8,8],[16,4,3,3]]", "Tensor(float)", 2);
  IoParseResult out = Tensors("[[1,4,10,10]]", "Tensor(float)", 1);
  EXPECT_EQ(EstimateOpCost("aten::conv_transpose2d", in, out).num_ops,
            2 * 16 * 64 * 36);
  // The same through aten::convolution with transposed=true (value 6).
  IoParseResult generic = ParseIoInfo(
      "[[1,16,8,8],[16,4,3,3],[],[[],[]],[[],[]],[[],[]],[],[[],[]],[]]",
      R"j(["Tensor(float)","Tensor(float)","None","GenericList[Int,Int]","GenericList[Int,Int]",)j"
      R"j("GenericList[Int,Int]","Bool","GenericList[Int,Int]","Int"])j",
      "[[1,2,0,1024,4,\"cpu\"],[3,4,0,576,4,\"cpu\"],null,[1,1],[0,0],[1,1],"
      "true,[0,0],1]");
  EXPECT_EQ(EstimateOpCost("aten::convolution", generic, out).num_ops,
            2 * 16 * 64 * 36);
  // Depthwise: x[1,32,16,16], w[32,1,3,3] -> [1,32,16,16]: 9 MACs per output.
  EXPECT_EQ(
      EstimateOpCost("aten::conv2d",
                     Tensors("[[1,32,16,16],[32,1,3,3]]", "Tensor(float)", 2),
                     Tensors("[[1,32,16,16]]", "Tensor(float)", 1))
          .num_ops,
      2 * 32 * 256 * 9);
}

TEST(OpCostTest, UnknownAndMalformed) {
  IoParseResult in = Tensors("[[4,4]]", "Tensor(float)", 1);
  OpCost unknown = EstimateOpCost("my::custom_op", in, in);
  EXPECT_EQ(unknown.kind, OpKind::kOther);
  EXPECT_FALSE(unknown.from_shapes);
  EXPECT_EQ(unknown.num_ops, 0);
  EXPECT_EQ(unknown.tensor_size_bytes, 2 * 64);
  OpCost bad_mm = EstimateOpCost("aten::mm", in, in);  // one operand
  EXPECT_FALSE(bad_mm.from_shapes);
  EXPECT_EQ(EstimateOpCost("aten::add_", in, in).kind, OpKind::kElementwise);
  EXPECT_EQ(EstimateOpCost("aten::_foreach_mul_", in, {}).num_ops, 16);
  EXPECT_EQ(OpKindName(OpKind::kBatchedGemm), "batched_gemm");
}

}  // namespace
}  // namespace et
