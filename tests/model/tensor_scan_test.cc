// Tests of model/tensor_scan: the one-pass reader of tensor tuples must read
// what io_shapes' literal parser reads, on every values text of real traces
// (JSON from PyTorch 1.13 and 2.11, Python repr from Chakra's reference
// converter), and hand the rest to it.
#include "model/tensor_scan.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "model/graph.h"
#include "model/io_shapes.h"
#include "tests/model/et_json_nodes.h"

namespace et {
namespace {

const std::string kData = ET_TEST_DATA;

// What the literal parser collects from `text`: wrapped in a one-item Python
// tuple, which the scanner does not read, so CollectIoTensors parses it (a
// tuple of one item is no tensor; the tuples inside are the text's).
bool ParserTensors(const std::string& text, std::vector<IoTensor>* out) {
  return CollectIoTensors(absl::StrCat("(", text, ",)"), out);
}

bool Same(const std::vector<IoTensor>& a, const std::vector<IoTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].tensor_id != b[i].tensor_id ||
        a[i].storage_id != b[i].storage_id ||
        a[i].offset_elems != b[i].offset_elems ||
        a[i].num_elems != b[i].num_elems ||
        a[i].elem_bytes != b[i].elem_bytes || a[i].device != b[i].device)
      return false;
  }
  return true;
}

// Every text the scanner reads gives the parser's tensors; returns how many
// it read.
int ExpectAgrees(const std::vector<std::string>& texts,
                 const std::string& where) {
  int read = 0;
  for (const std::string& text : texts) {
    std::vector<IoTensor> fast, slow;
    const bool parsed = ParserTensors(text, &slow);
    if (ScanTensorTuples(text, &fast) != TensorScan::kRead) {
      EXPECT_TRUE(fast.empty());
      continue;
    }
    ++read;
    EXPECT_TRUE(parsed) << where
                        << ": scanner read what the parser rejects: " << text;
    EXPECT_TRUE(Same(fast, slow)) << where << ": " << text;
  }
  return read;
}

TEST(TensorScanTest, AgreesWithTheParserOnRealEtJson) {
  for (const char* file :
       {"/pytorch-1.13-cpu/tfm_small_et.json.gz",
        "/h100-gpu-session/gpt_et.json.gz", "/h100-gpu-session/moe_et.json.gz",
        "/torch2-cpu/tp2dp2_et_r0.json.gz"}) {
    nlohmann::json et = testing::LoadEtJson(kData + file);
    ASSERT_TRUE(et.is_object()) << file;
    std::vector<std::string> texts;
    for (const nlohmann::json& node : et["nodes"]) {
      testing::JsonNodeIo io = testing::IoOf(node);
      texts.push_back(io.in_values);
      texts.push_back(io.out_values);
    }
    // JSON lists of scalars and tuples: the scanner reads all of them.
    EXPECT_EQ(ExpectAgrees(texts, file), static_cast<int>(texts.size()))
        << file;
  }
}

TEST(TensorScanTest, AgreesWithTheParserOnPythonRepr) {
  auto graph = LoadGraph(
      kData + "/chakra/reference_converter_output.allgather_2rank.et");
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<std::string> texts;
  for (size_t i = 0; i < graph->size(); ++i) {
    texts.push_back(graph->node(i).inputs().values());
    texts.push_back(graph->node(i).outputs().values());
  }
  EXPECT_GT(ExpectAgrees(texts, "reference converter"), 0);
}

TEST(TensorScanTest, ReadsNestedListsInOrder) {
  std::vector<IoTensor> t;
  ASSERT_EQ(ScanTensorTuples("[[[14, 15, 0, 1, 4, 'cuda:0']], 12, 'x', "
                             "[[19, 20, 2, 3, 8, \"cpu\"], [5, 23, 0, 1, 2, "
                             "'cuda:1']], True, None, 1e-05, -3,]",
                             &t),
            TensorScan::kRead);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].storage_id, 15u);
  EXPECT_EQ(t[0].device, 0);
  EXPECT_EQ(t[1].offset_elems, 2u);
  EXPECT_EQ(t[1].device, kHostDevice);
  EXPECT_EQ(t[2].device, 1);
}

TEST(TensorScanTest, NotATupleWithANegativeOrFractionalOrMissingItem) {
  std::vector<IoTensor> t;
  ASSERT_EQ(ScanTensorTuples("[[-1, 2, 0, 1, 4, 'cpu'], [1, 2, 0.5, 1, 4, "
                             "'cpu'], [1, 2, 0, 1, 4], [1, 2, 0, 1, 4, 'cpu', "
                             "7], [1, 2, 0, 1, [4], 'cpu']]",
                             &t),
            TensorScan::kRead);
  EXPECT_TRUE(t.empty());
}

TEST(TensorScanTest, LeavesOtherFormsAndMalformedTextsToTheParser) {
  for (const char* text :
       {"[[1, 2, 3, 4, 5, 'cpu'", "[1 2]", "[,]", "[1,,2]", "[1] x",
        "([1, 2, 0, 1, 4, 'cpu'],)", "[{'a': 1}]", "[inf]", "[-inf]", "[+5]",
        "['unterminated]", "[1.2.3]", "[12345678901234567890]", " ", "7"}) {
    std::vector<IoTensor> t = {IoTensor{}};
    EXPECT_EQ(ScanTensorTuples(text, &t), TensorScan::kUnsure) << text;
    EXPECT_TRUE(t.empty()) << text;
  }
  std::string deep(70, '[');
  deep += std::string(70, ']');
  std::vector<IoTensor> t;
  EXPECT_EQ(ScanTensorTuples(deep, &t), TensorScan::kUnsure);
  EXPECT_FALSE(CollectIoTensors(deep, &t));  // the parser's depth limit
}

}  // namespace
}  // namespace et
