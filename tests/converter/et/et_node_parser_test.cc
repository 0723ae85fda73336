// EtNodeParser on single node texts: each known field lands in its HostOp
// member, in both layouts (flat 1.0.1 and nested 1.0.2+), and each wrong type
// gives its one error naming the node and the field.
#include "converter/et/et_node_parser.h"

#include <string>
#include <vector>

#include "converter/et/et_json_tokenizer.h"
#include "gtest/gtest.h"

namespace et::convert {
namespace {

class EtNodeParserTest : public ::testing::Test {
 protected:
  // Parses `json` (given the padding the parser needs) into op_.
  absl::Status Parse(const std::string& json) {
    text_ = json + std::string(kSpanPadding, ' ');
    tensors_.clear();
    return parser_.Parse(absl::string_view(text_.data(), json.size()), 5, &op_,
                         &tensors_);
  }
  std::string Io(IoPart part) const { return std::string(op_.io(text_, part)); }

  StringPool pool_;
  EtNodeParser parser_{"trace.json", &pool_};
  std::string text_;
  HostOp op_;
  std::vector<TensorRef> tensors_;
};

TEST_F(EtNodeParserTest, NestedLayoutFieldsAndTensors) {
  ASSERT_TRUE(Parse(R"j({"id": 7, "name": "aten::add", "ctrl_deps": 3,
      "inputs": {"values": [[10, 11, 0, 4, 4, "cuda:0"], 2],
                 "shapes": [[4], []], "types": ["Tensor(float)", "Int"]},
      "outputs": {"values": [[[12, 13, 0, 8, 2, "cpu"]]], "shapes": [[[8]]],
                  "types": ["GenericList[Tensor(half)]"]},
      "attrs": [{"name": "rf_id", "type": "uint64", "value": 9},
                {"name": "seq_id", "type": "int64", "value": -1},
                {"name": "tid", "type": "uint64", "value": 2},
                {"name": "op_schema", "type": "string", "value": "add(a, b)"},
                {"name": "alpha", "type": "double", "value": 0.5}]
})j")
                  .ok());
  EXPECT_EQ(op_.id, 7u);
  EXPECT_EQ(op_.parent, 3u);
  EXPECT_EQ(pool_.Get(op_.name), "aten::add");
  EXPECT_EQ(pool_.Get(op_.op_schema), "add(a, b)");
  EXPECT_EQ(op_.rf_id, 9);
  EXPECT_EQ(op_.seq_id, -1);
  EXPECT_EQ(op_.tid, 2);
  ASSERT_EQ(op_.extra_attrs.size(), 1u);
  EXPECT_EQ(pool_.Get(op_.extra_attrs[0].name), "alpha");
  EXPECT_EQ(op_.extra_attrs[0].kind, ExtraAttr::Kind::kDouble);
  EXPECT_EQ(op_.extra_attrs[0].d, 0.5);
  EXPECT_EQ(Io(kInValues), R"j([[10, 11, 0, 4, 4, "cuda:0"], 2])j");
  EXPECT_EQ(Io(kInShapes), "[[4], []]");
  EXPECT_EQ(Io(kOutTypes), R"j(["GenericList[Tensor(half)]"])j");
  ASSERT_EQ(op_.num_inputs, 1u);
  ASSERT_EQ(op_.num_outputs, 1u);
  ASSERT_EQ(tensors_.size(), 2u);
  EXPECT_EQ(tensors_[0].tensor_id, 10);
  EXPECT_EQ(tensors_[0].bytes(), 16);
  EXPECT_TRUE(tensors_[0].on_gpu);
  EXPECT_EQ(tensors_[1].tensor_id, 12);  // inside a list of tensors
  EXPECT_FALSE(tensors_[1].on_gpu);
  EXPECT_EQ(op_.text_length, text_.size() - kSpanPadding);
}

TEST_F(EtNodeParserTest, FlatLayoutAndLinkedFields) {
  ASSERT_TRUE(Parse(R"j({"name": "k", "id": 4, "parent": 1, "fw_parent": 2,
      "scope": 3, "fw_tid": 6, "inputs": [[1, 2, 0, 3, 4, "cpu"]],
      "input_shapes": [[3]], "input_types": ["Tensor(int)"], "outputs": [],
      "output_shapes": [], "output_types": [], "ts": 10.5, "dur": 2,
      "cat": "kernel", "args": {"stream": 7, "device": 1, "grid": [1, 2]},
      "inter_thread_dep": 2, "sync_dep": [1, 3], "ph": "X", "stray": null})j")
                  .ok());
  EXPECT_EQ(op_.id, 4u);
  EXPECT_EQ(op_.parent, 1u);
  EXPECT_EQ(op_.fw_parent, 2);
  EXPECT_EQ(op_.scope, 3);
  EXPECT_EQ(op_.fw_tid, 6);
  EXPECT_EQ(Io(kInShapes), "[[3]]");
  EXPECT_EQ(Io(kInTypes), R"j(["Tensor(int)"])j");
  EXPECT_EQ(op_.ts_us, 10.5);
  EXPECT_EQ(op_.dur_us, 2);
  EXPECT_EQ(pool_.Get(op_.category), "kernel");
  EXPECT_EQ(op_.stream, 7);  // from args, as the node has none of its own
  EXPECT_EQ(op_.device, 1);
  EXPECT_EQ(op_.inter_thread_deps, std::vector<uint64_t>{2});
  EXPECT_EQ(op_.sync_deps, (std::vector<uint64_t>{1, 3}));
  // `grid` (from args) and the unknown `ph` become attributes; null is none.
  ASSERT_EQ(op_.extra_attrs.size(), 2u);
  EXPECT_EQ(op_.extra_attrs[0].kind, ExtraAttr::Kind::kIntList);
  EXPECT_EQ(op_.extra_attrs[1].s, "X");
  EXPECT_EQ(parser_.unknown_keys().at("ph"), 1);
  EXPECT_EQ(tensors_.size(), 1u);
}

TEST_F(EtNodeParserTest, EachWrongTypeNamesTheNodeAndTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"j({"id": 4, "rf_id": "x"})j", "node 4: `rf_id` is not an integer"},
      {R"j({"id": -4})j", "node #5 (no id yet): `id` is not a non-negative"},
      {R"j({"name": 1, "id": 4})j", "node 4: `name` is not a string"},
      {R"j({"id": 4, "ts": 1e300})j", "node 4: `ts` is 1e+300: out of range"},
      {R"j({"id": 4, "dur": -1})j", "`dur` is -1: out of range (0 to"},
      {R"j({"id": 4, "sync_dep": ["a"]})j", "`sync_dep` holds a non-id"},
      {R"j({"id": 4, "input_shapes": ["a"]})j",
       "`input_shapes` is not a list of integer shapes"},
      {R"j({"id": 4, "inputs": {"values": [NaN]}})j",
       "input argument 0 holds a value that is not JSON"},
      {R"j({"id": 4, "attrs": [{"name": "tid", "value": "x"}]})j",
       "attribute `tid` is not an integer"},
      {R"j({"name": "a"})j", "node #5 (no id yet): node has no `id`"},
      {R"j({"id": 4,,})j", "malformed JSON"},
      {"[1]", "node is not a JSON object"},
  };
  for (const auto& [json, message] : cases) {
    const absl::Status status = Parse(json);
    EXPECT_FALSE(status.ok()) << json;
    EXPECT_NE(status.message().find(message), std::string::npos)
        << json << " -> " << status;
    EXPECT_NE(status.message().find("trace.json: node"), std::string::npos)
        << status;
  }
}

}  // namespace
}  // namespace et::convert
