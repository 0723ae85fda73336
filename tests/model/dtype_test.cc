// Tests of model/dtype: every spelling of an element type found in real traces
// (ET type strings, c10::ScalarType names, torch names) maps to one canonical
// Dtype, name and size.
#include "model/dtype.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/model/et_json_nodes.h"

namespace et {
namespace {

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

// The spellings et-replay parsed with its own table before it used this one
// (attr `dtype` from our converter and from older writers, ET type strings),
// with the enum value its backends switch on.
TEST(DtypeFromNameTest, SpellingsTheReplayReads) {
  struct Case {
    const char* spelling;
    Dtype id;
  };
  for (const Case& c : {Case{"float32", Dtype::kFloat32},
                        Case{"float", Dtype::kFloat32},
                        Case{"fp32", Dtype::kFloat32},
                        Case{"float16", Dtype::kFloat16},
                        Case{"half", Dtype::kFloat16},
                        Case{"fp16", Dtype::kFloat16},
                        Case{"bfloat16", Dtype::kBFloat16},
                        Case{"bf16", Dtype::kBFloat16},
                        Case{"float64", Dtype::kFloat64},
                        Case{"double", Dtype::kFloat64},
                        Case{"int8", Dtype::kInt8},
                        Case{"signed char", Dtype::kInt8},
                        Case{"uint8", Dtype::kUInt8},
                        Case{"unsigned char", Dtype::kUInt8},
                        Case{"int32", Dtype::kInt32},
                        Case{"int", Dtype::kInt32},
                        Case{"int64", Dtype::kInt64},
                        Case{"long", Dtype::kInt64},
                        Case{"long int", Dtype::kInt64},
                        Case{"bool", Dtype::kBool},
                        Case{"Tensor(c10::Half)", Dtype::kFloat16},
                        Case{"torch.bfloat16", Dtype::kBFloat16}}) {
    std::optional<DtypeInfo> d = DtypeFromName(c.spelling);
    ASSERT_TRUE(d.has_value()) << c.spelling;
    EXPECT_EQ(d->id, c.id) << c.spelling;
  }
}

// Case and surrounding spaces do not matter; prefixes are stripped in either
// case.
TEST(DtypeFromNameTest, IgnoresCaseAndSpaces) {
  EXPECT_EQ(DtypeFromName(" HALF ")->id, Dtype::kFloat16);
  EXPECT_EQ(DtypeFromName("tensor(float)")->id, Dtype::kFloat32);
  EXPECT_EQ(DtypeFromName("TORCH.BFLOAT16")->id, Dtype::kBFloat16);
  EXPECT_EQ(DtypeFromName("Char")->id, Dtype::kInt8);  // c10's int8 name
  EXPECT_FALSE(DtypeFromName("   ").has_value());
  EXPECT_FALSE(DtypeFromName("Tensor()").has_value());
}

// Every enum value has a name, a size, and its name parses back to it.
TEST(DtypeInfoOfTest, EveryDtypeRoundTripsThroughItsName) {
  for (int i = static_cast<int>(Dtype::kFloat32);
       i <= static_cast<int>(Dtype::kQInt32); ++i) {
    const Dtype d = static_cast<Dtype>(i);
    DtypeInfo info = DtypeInfoOf(d);
    ASSERT_TRUE(info.known()) << i;
    EXPECT_EQ(info.id, d);
    EXPECT_EQ(DtypeName(d), info.name);
    EXPECT_EQ(ElementBytes(d), info.elem_bytes);
    std::optional<DtypeInfo> back = DtypeFromName(info.name);
    ASSERT_TRUE(back.has_value()) << info.name;
    EXPECT_EQ(back->id, d) << info.name;
  }
  EXPECT_FALSE(DtypeInfoOf(Dtype::kUnknown).known());
  EXPECT_EQ(DtypeName(Dtype::kUnknown), "");
  EXPECT_EQ(ElementBytes(Dtype::kUnknown), 0);
  EXPECT_EQ(ElementBytes(Dtype::kBFloat16), 2);
  EXPECT_EQ(ElementBytes(Dtype::kComplex128), 16);
}

}  // namespace
}  // namespace et
