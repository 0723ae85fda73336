// Tests of proto/io_shapes: IOInfo JSON texts from real ETs parsed into typed
// entries.
#include "proto/io_shapes.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/proto/et_json_nodes.h"

namespace et {
namespace {

using ::et::testing::FindNodeIo;
using ::et::testing::IoOf;
using ::et::testing::JsonNodeIo;
using ::et::testing::LoadEtJson;

const std::string kData = ET_TEST_DATA;

TEST(DtypeFromNameTest, EtTypeStrings) {
  struct Case {
    const char* spelling;
    const char* name;
    int bytes;
  };
  for (const Case& c :
       {Case{"Tensor(float)", "float32", 4},
        Case{"Tensor(c10::Half)", "float16", 2},
        Case{"Tensor(c10::BFloat16)", "bfloat16", 2},
        Case{"Tensor(double)", "float64", 8}, Case{"Tensor(long)", "int64", 8},
        Case{"Tensor(long int)", "int64", 8}, Case{"Tensor(int)", "int32", 4},
        Case{"Tensor(bool)", "bool", 1},
        Case{"Tensor(unsigned char)", "uint8", 1},
        Case{"Tensor(signed char)", "int8", 1},
        Case{"Tensor(c10::Float8_e4m3fn)", "float8_e4m3fn", 1},
        Case{"Tensor(c10::Float8_e5m2)", "float8_e5m2", 1},
        Case{"Tensor(c10::complex<float>)", "complex64", 8}}) {
    std::optional<DtypeInfo> d = DtypeFromName(c.spelling);
    ASSERT_TRUE(d.has_value()) << c.spelling;
    EXPECT_EQ(d->name, c.name) << c.spelling;
    EXPECT_EQ(d->elem_bytes, c.bytes) << c.spelling;
  }
}

TEST(DtypeFromNameTest, ScalarTypeAndTorchNames) {
  EXPECT_EQ(DtypeFromName("Float")->elem_bytes, 4);
  EXPECT_EQ(DtypeFromName("Half")->name, "float16");
  EXPECT_EQ(DtypeFromName("BFloat16")->name, "bfloat16");
  EXPECT_EQ(DtypeFromName("Long")->elem_bytes, 8);
  EXPECT_EQ(DtypeFromName("Byte")->name, "uint8");
  EXPECT_EQ(DtypeFromName("torch.float16")->elem_bytes, 2);
  EXPECT_EQ(DtypeFromName("torch.bfloat16")->name, "bfloat16");
  EXPECT_FALSE(DtypeFromName("Tensor(nullptr (uninitialized))").has_value());
  EXPECT_FALSE(DtypeFromName("Device").has_value());
  EXPECT_FALSE(DtypeFromName("").has_value());
}

// resnet_2gpu_et.1.1.0's record_param_comms carry `dtype` attrs: every one must
// map.
TEST(DtypeFromNameTest, RecordParamCommsDtypesOfRealTrace) {
  nlohmann::json et = LoadEtJson(kData + "/param/resnet_2gpu_et.1.1.0.json.gz");
  ASSERT_TRUE(et.is_object());
  int seen = 0;
  for (const nlohmann::json& node : et["nodes"]) {
    if (!node.contains("attrs")) continue;
    for (const nlohmann::json& attr : node["attrs"]) {
      if (attr.value("name", "") != "dtype") continue;
      ++seen;
      std::string dtype = attr.value("value", "");
      EXPECT_TRUE(DtypeFromName(dtype).has_value()) << dtype;
    }
  }
  EXPECT_GT(seen, 20);  // 21 all-reduces and broadcasts
}

// nn_demo's aten::addmm (id 22): bias [5], mat1 [16,10], mat2 [10,5], beta,
// alpha.
TEST(ParseIoInfoTest, AddmmOfNnDemo) {
  nlohmann::json et =
      LoadEtJson(kData + "/pytorch-1.13-cpu/nn_demo_et.json.gz");
  JsonNodeIo io = FindNodeIo(et, 22);
  ASSERT_EQ(io.name, "aten::addmm");
  IoParseResult in = ParseIoInfo(io.in_shapes, io.in_types, io.in_values);
  EXPECT_EQ(in.bad_values, 0) << in.first_error;
  ASSERT_EQ(in.entries.size(), 5u);
  EXPECT_EQ(in.entries[1].kind, IoKind::kTensor);
  EXPECT_EQ(in.entries[1].dims, (std::vector<int64_t>{16, 10}));
  EXPECT_EQ(in.entries[1].dtype.name, "float32");
  EXPECT_EQ(in.entries[2].Bytes(), 10 * 5 * 4);
  EXPECT_EQ(in.entries[3].kind, IoKind::kScalar);
  EXPECT_EQ(in.entries[3].scalar, 1.0);  // beta
  EXPECT_EQ(in.TotalBytes(), (5 + 160 + 50) * 4);
}

// tfm_small's aten::cat (id 3119) takes a list of three [64,8,128] tensors.
TEST(ParseIoInfoTest, TensorListOfCat) {
  nlohmann::json et =
      LoadEtJson(kData + "/pytorch-1.13-cpu/tfm_small_et.json.gz");
  JsonNodeIo io = FindNodeIo(et, 3119);
  ASSERT_EQ(io.name, "aten::cat");
  IoParseResult in = ParseIoInfo(io.in_shapes, io.in_types);
  EXPECT_EQ(in.bad_values, 0) << in.first_error;
  ASSERT_EQ(in.entries.size(), 2u);
  EXPECT_EQ(in.entries[0].kind, IoKind::kTensorList);
  ASSERT_EQ(in.entries[0].list_dims.size(), 3u);
  EXPECT_EQ(in.entries[0].list_dims[2], (std::vector<int64_t>{64, 8, 128}));
  EXPECT_EQ(in.entries[0].NumElements(), 3 * 64 * 8 * 128);
  EXPECT_EQ(in.entries[0].dtype.elem_bytes, 4);
}

// resnet_1gpu_et.1.1.1's convolution_backward (id 3293): bool-list output_mask,
// an undefined grad_bias output.
TEST(ParseIoInfoTest, ValuesListsAndNullTensorOfConvolutionBackward) {
  nlohmann::json et = LoadEtJson(kData + "/param/resnet_1gpu_et.1.1.1.json.gz");
  JsonNodeIo io = FindNodeIo(et, 3293);
  ASSERT_EQ(io.name, "aten::convolution_backward");
  IoParseResult in = ParseIoInfo(io.in_shapes, io.in_types, io.in_values);
  IoParseResult out = ParseIoInfo(io.out_shapes, io.out_types, io.out_values);
  EXPECT_EQ(in.bad_values + out.bad_values, 0)
      << in.first_error << out.first_error;
  ASSERT_EQ(in.entries.size(), 11u);
  EXPECT_EQ(in.entries[4].kind, IoKind::kList);
  EXPECT_EQ(in.entries[4].int_list, (std::vector<int64_t>{1, 1}));  // stride
  EXPECT_EQ(in.entries[7].scalar, 0.0);  // transposed = false
  EXPECT_EQ(in.entries[10].int_list, (std::vector<int64_t>{1, 1, 0}));
  ASSERT_EQ(out.entries.size(), 3u);
  EXPECT_EQ(out.entries[2].kind, IoKind::kNullTensor);
  EXPECT_EQ(out.entries[2].Bytes(), 0);
}

// Every IOInfo of three real traces (flat 1.0.1 and nested 1.1.1) parses
// without error.
TEST(ParseIoInfoTest, EveryNodeOfRealTracesParses) {
  for (const char* file : {"/pytorch-1.13-cpu/tfm_small_et.json.gz",
                           "/param/resnet_1gpu_et.1.1.1.json.gz",
                           "/param/resnet_2gpu_et.1.1.0.json.gz"}) {
    nlohmann::json et = LoadEtJson(kData + file);
    ASSERT_TRUE(et.is_object()) << file;
    int64_t tensors = 0;
    for (const nlohmann::json& node : et["nodes"]) {
      JsonNodeIo io = IoOf(node);
      for (const IoParseResult& r :
           {ParseIoInfo(io.in_shapes, io.in_types, io.in_values),
            ParseIoInfo(io.out_shapes, io.out_types, io.out_values)}) {
        EXPECT_EQ(r.bad_values, 0)
            << file << " node " << node["id"] << ": " << r.first_error;
        for (const IoEntry& e : r.entries) {
          EXPECT_NE(e.kind, IoKind::kUnknown);
          if (e.kind == IoKind::kTensor) {
            ++tensors;
            EXPECT_TRUE(e.dtype.known()) << file << " node " << node["id"];
          }
        }
      }
    }
    EXPECT_GT(tensors, 1000) << file;
  }
}

TEST(ParseIoInfoTest, NestedTensorListAndInferredKinds) {
  IoParseResult r = ParseIoInfo(
      "[[32,64],[64],[],[[2,3],[4]],[[[1,2]],[[3]]]]",
      R"j(["Tensor(float)","Tensor(c10::Half)","Int",)j"
      R"j("GenericList[Tensor(c10::BFloat16),Tensor(c10::BFloat16)]",)j"
      R"j("GenericList[GenericList[Tensor(float)]]"])j");
  EXPECT_EQ(r.bad_values, 0) << r.first_error;
  ASSERT_EQ(r.entries.size(), 5u);
  EXPECT_EQ(r.entries[0].Bytes(), 32 * 64 * 4);
  EXPECT_EQ(r.entries[1].Bytes(), 64 * 2);
  EXPECT_EQ(r.entries[2].kind, IoKind::kScalar);
  EXPECT_EQ(r.entries[3].Bytes(), (6 + 4) * 2);
  EXPECT_EQ(r.entries[4].list_dims.size(), 2u);
  EXPECT_EQ(r.entries[4].NumElements(), 1 * 2 + 3);

  IoParseResult no_types = ParseIoInfo("[[8,8],[[1],[2]],[]]", "");
  EXPECT_EQ(no_types.entries[0].kind, IoKind::kTensor);
  EXPECT_FALSE(no_types.entries[0].dtype.known());
  EXPECT_EQ(no_types.entries[1].kind, IoKind::kTensorList);
  EXPECT_EQ(no_types.entries[2].kind, IoKind::kOther);
}

TEST(ParseIoInfoTest, BadTextIsCountedNotThrown) {
  IoParseResult truncated = ParseIoInfo("[[32,64", R"j(["Tensor(float)"])j");
  EXPECT_EQ(truncated.bad_values, 1);
  EXPECT_FALSE(truncated.first_error.empty());
  EXPECT_EQ(truncated.entries.size(), 1u);  // from the types alone

  IoParseResult wrong_shape =
      ParseIoInfo(R"j([["a"],[2]])j", R"j(["Tensor(float)","Tensor(float)"])j");
  EXPECT_EQ(wrong_shape.bad_values, 1);
  EXPECT_EQ(wrong_shape.entries[0].kind, IoKind::kUnknown);
  EXPECT_EQ(wrong_shape.entries[1].Bytes(), 8);

  IoParseResult mismatch = ParseIoInfo("[[2],[3]]", R"j(["Tensor(float)"])j");
  EXPECT_EQ(mismatch.bad_values, 1);
  EXPECT_EQ(mismatch.entries.size(), 2u);

  EXPECT_EQ(ParseIoInfo("", "").entries.size(), 0u);
  EXPECT_EQ(ParseIoInfo("{", "[1]").bad_values, 2);
  std::string deep(100000, '[');
  EXPECT_EQ(ParseIoInfo(deep, "").bad_values, 1);  // no stack overflow
  EXPECT_EQ(ParseIoInfo("[1e400]", "").bad_values, 0);
  EXPECT_EQ(ParseIoInfo("[[1.5]]", R"j(["Tensor(float)"])j").bad_values, 1);
}

}  // namespace
}  // namespace et
