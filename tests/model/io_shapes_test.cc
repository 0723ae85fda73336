// Tests of model/io_shapes: IOInfo texts from real ETs (JSON from PyTorch's ET,
// Python repr from Chakra's reference converter) parsed into typed entries.
#include "model/io_shapes.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "tests/model/et_json_nodes.h"

namespace et {
namespace {

using ::et::testing::FindNodeIo;
using ::et::testing::IoOf;
using ::et::testing::JsonNodeIo;
using ::et::testing::LoadEtJson;

const std::string kData = ET_TEST_DATA;

// Chakra's reference converter writes each IOInfo list as Python's str():
// single quotes, True/False, e.g. "['Tensor(float)', 'Int']".
const char kReferenceEt[] =
    "/chakra/reference_converter_output.allgather_2rank.et";

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

// record_param_comms of the all-gather (node 30) in Chakra's reference
// converter output, Python repr throughout:
//   inputs  values "[[[14, 15, 0, 1, 4, 'cuda:0']], 12, 82149104, 0,
//                    'all_gather', [], [], 2]"
//           types  "['GenericList[Tensor(float)]', 'Int', 'Int', 'Int',
//                    'String', 'GenericList[]', 'GenericList[]', 'Int']"
//   outputs values "[[[[19, 20, 0, 1, 4, 'cuda:0'], [5, 23, 0, 1, 4,
//                    'cuda:0']]]]" (the gathered list of two tensors)
TEST(ParseIoInfoTest, PythonReprOfReferenceConverterRecordParamComms) {
  auto graph = LoadGraph(kData + kReferenceEt);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto index = graph->Find(30);
  ASSERT_TRUE(index.has_value());
  const auto& node = graph->node(*index);
  ASSERT_EQ(node.name(), "record_param_comms");
  ASSERT_EQ(node.inputs().types().substr(0, 2), "['");  // really Python repr

  std::vector<IoTensor> in, out;
  ASSERT_TRUE(CollectIoTensors(node.inputs().values(), &in));
  ASSERT_TRUE(CollectIoTensors(node.outputs().values(), &out));
  ASSERT_EQ(in.size(), 1u);  // one float tensor in storage 15
  EXPECT_EQ(in[0].tensor_id, 14u);
  EXPECT_EQ(in[0].storage_id, 15u);
  EXPECT_EQ(in[0].extent_bytes(), 4u);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].storage_id, 20u);
  EXPECT_EQ(out[1].storage_id, 23u);

  IoParseResult ins = ParseIoInfo(node.inputs().shapes(), node.inputs().types(),
                                  node.inputs().values());
  EXPECT_EQ(ins.bad_values, 0) << ins.first_error;
  ASSERT_EQ(ins.entries.size(), 8u);
  EXPECT_EQ(ins.entries[0].kind, IoKind::kTensorList);
  EXPECT_EQ(ins.entries[0].list_dims, (std::vector<std::vector<int64_t>>{{1}}));
  EXPECT_EQ(ins.entries[0].dtype.id, Dtype::kFloat32);
  ASSERT_EQ(ins.entries[0].tensors.size(), 1u);
  EXPECT_EQ(ins.entries[0].tensors[0].storage_id, 15u);
  EXPECT_EQ(ins.entries[1].kind, IoKind::kScalar);
  EXPECT_EQ(ins.entries[1].scalar, 12.0);  // the collective's sequence number
  EXPECT_EQ(ins.entries[4].kind, IoKind::kOther);  // 'all_gather'
  EXPECT_EQ(ins.entries[5].kind, IoKind::kList);
  EXPECT_TRUE(ins.entries[5].int_list.empty());
  EXPECT_EQ(ins.entries[7].scalar, 2.0);  // world size

  IoParseResult outs = ParseIoInfo(
      node.outputs().shapes(), node.outputs().types(), node.outputs().values());
  EXPECT_EQ(outs.bad_values, 0) << outs.first_error;
  ASSERT_EQ(outs.entries.size(), 1u);
  EXPECT_EQ(outs.entries[0].kind, IoKind::kTensorList);
  EXPECT_EQ(outs.entries[0].list_dims,
            (std::vector<std::vector<int64_t>>{{1}, {1}}));
  EXPECT_EQ(outs.entries[0].Bytes(), 8);
  ASSERT_EQ(outs.entries[0].tensors.size(), 2u);
  EXPECT_EQ(outs.entries[0].tensors[1].storage_id, 23u);

  std::vector<std::string> types;
  ASSERT_TRUE(ParseTypeList(node.inputs().types(), &types));
  ASSERT_EQ(types.size(), 8u);
  EXPECT_EQ(types[0], "GenericList[Tensor(float)]");
  EXPECT_EQ(types[4], "String");
}

// Every IOInfo of the reference converter's output parses, and the three lists
// PyTorch recorded separately agree: each tensor position's recorded tuple has
// the element count of its shape and the element size of its type.
TEST(ParseIoInfoTest, EveryNodeOfReferenceConverterOutputParses) {
  auto graph = LoadGraph(kData + kReferenceEt);
  ASSERT_TRUE(graph.ok()) << graph.status();
  int tensors = 0, bools = 0;
  std::vector<std::string> types;
  for (const auto& node : graph->nodes()) {
    for (const auto* io : {&node.inputs(), &node.outputs()}) {
      IoParseResult r = ParseIoInfo(io->shapes(), io->types(), io->values());
      EXPECT_EQ(r.bad_values, 0)
          << "node " << node.id() << ": " << r.first_error;
      ASSERT_TRUE(ParseTypeList(io->types(), &types)) << "node " << node.id();
      ASSERT_EQ(types.size(), r.entries.size()) << "node " << node.id();
      for (size_t i = 0; i < r.entries.size(); ++i) {
        const IoEntry& e = r.entries[i];
        EXPECT_NE(e.kind, IoKind::kUnknown) << "node " << node.id();
        if (types[i] == "Bool") {  // True/False, read as 1/0
          ++bools;
          EXPECT_EQ(e.kind, IoKind::kScalar);
          EXPECT_TRUE(e.scalar == 0.0 || e.scalar == 1.0)
              << "node " << node.id() << " position " << i;
        }
        if (e.kind != IoKind::kTensor && e.kind != IoKind::kTensorList)
          continue;
        int64_t recorded_elems = 0;
        for (const IoTensor& t : e.tensors) {
          recorded_elems += static_cast<int64_t>(t.num_elems);
          EXPECT_EQ(static_cast<int>(t.elem_bytes), e.dtype.elem_bytes)
              << "node " << node.id() << " position " << i;
          ++tensors;
        }
        EXPECT_EQ(recorded_elems, e.NumElements())
            << "node " << node.id() << " position " << i;
      }
    }
  }
  EXPECT_GT(tensors, 200);
  EXPECT_GT(bools, 10);
}

TEST(ParseIoInfoTest, PythonLiteralSpellings) {
  // Bools and None as Python writes them; a tuple; inf, nan and exponents.
  IoParseResult r = ParseIoInfo(
      "[[], [], [], [], [], []]",
      "['Bool', 'Bool', 'Int', 'GenericList[Int]', 'Double', 'Double']",
      "[True, False, None, (2, 3), inf, 1e-05]");
  EXPECT_EQ(r.bad_values, 0) << r.first_error;
  ASSERT_EQ(r.entries.size(), 6u);
  EXPECT_EQ(r.entries[0].scalar, 1.0);
  EXPECT_EQ(r.entries[1].scalar, 0.0);
  EXPECT_FALSE(r.entries[2].scalar.has_value());
  EXPECT_EQ(r.entries[3].int_list, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(std::isinf(*r.entries[4].scalar));
  EXPECT_EQ(r.entries[5].scalar, 1e-05);

  // Either quote; the other one and escapes inside; JSON in the same call.
  std::vector<std::string> types;
  EXPECT_FALSE(ParseTypeList("['a', (1,)]", &types));  // a tuple: no string
  ASSERT_TRUE(ParseTypeList(R"p(['a"b', "it's", 'c\'d'])p", &types));
  EXPECT_EQ(types, (std::vector<std::string>{"a\"b", "it's", "c'd"}));
  ASSERT_TRUE(ParseTypeList(R"j(["Tensor(float)", "Int"])j", &types));
  EXPECT_EQ(types, (std::vector<std::string>{"Tensor(float)", "Int"}));
  EXPECT_FALSE(ParseTypeList("['unterminated]", &types));
  EXPECT_TRUE(types.empty());

  // A dict is stepped over, a tensor tuple inside a Python tuple is found; nan
  // and -inf are numbers, not errors.
  std::vector<IoTensor> tensors;
  ASSERT_TRUE(CollectIoTensors(
      "[{'k': [1]}, ([7, 8, 2, 3, 2, 'cuda:1'],), nan, -inf, '<None>']",
      &tensors));
  ASSERT_EQ(tensors.size(), 1u);
  EXPECT_EQ(tensors[0].storage_id, 8u);
  EXPECT_EQ(tensors[0].bytes(), 6u);
  EXPECT_EQ(tensors[0].extent_bytes(), 10u);  // (offset 2 + 3) * 2
  EXPECT_EQ(tensors[0].device, 1);
}

// The memory model sums bytes per device: the tuple's last element decoded.
TEST(ParseIoInfoTest, TensorDevices) {
  EXPECT_EQ(TensorDeviceOf("cpu"), kHostDevice);
  EXPECT_EQ(TensorDeviceOf("cuda"), 0);
  EXPECT_EQ(TensorDeviceOf("cuda:7"), 7);
  EXPECT_EQ(TensorDeviceOf("cuda:x"), kOtherDevice);
  EXPECT_EQ(TensorDeviceOf("meta"), kOtherDevice);
  std::vector<IoTensor> tensors;
  ASSERT_TRUE(CollectIoTensors(
      "[[1,2,0,4,4,\"cpu\"],[3,4,0,4,2,\"cuda:0\"],[5,6,0,1,4,\"meta\"]]",
      &tensors));
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].device, kHostDevice);
  EXPECT_EQ(tensors[1].device, 0);
  EXPECT_EQ(tensors[2].device, kOtherDevice);
}

TEST(ParseIoInfoTest, MalformedPythonTextIsRejected) {
  std::vector<IoTensor> tensors = {IoTensor{}};
  EXPECT_FALSE(CollectIoTensors("[[1, 2, 3, 4, 5, 'cpu'", &tensors));
  EXPECT_TRUE(tensors.empty());
  EXPECT_TRUE(CollectIoTensors("", &tensors));  // no values recorded
  EXPECT_EQ(ParseIoInfo("[[1, 2]", "").bad_values, 1);
  EXPECT_EQ(ParseIoInfo("[[1], [2]]", "['Tensor(float)', Int]").bad_values, 1);
  EXPECT_EQ(ParseIoInfo("[[1], (2]", "").bad_values, 1);  // mismatched close
  EXPECT_EQ(ParseIoInfo("[[1]]", "", "[Nonesuch]").bad_values, 1);
  // A tuple whose id is negative or that lacks the device is not a tensor.
  ASSERT_TRUE(
      CollectIoTensors("[[-1, 2, 0, 1, 4, 'cpu'], [1, 2, 0, 1, 4]]", &tensors));
  EXPECT_TRUE(tensors.empty());
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
