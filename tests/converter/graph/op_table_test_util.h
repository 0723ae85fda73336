// Test-only builder of an OpTable from hand-made 1.0.1 ET nodes: writes the
// trace to a temp file and reads it with the converter's own parse stages
// (EtNodeParser, ParseTracePipelined, OpTable::Build), so a stage under test
// sees exactly what a conversion would. Header-only.
#ifndef TESTS_CONVERTER_GRAPH_OP_TABLE_TEST_UTIL_H_
#define TESTS_CONVERTER_GRAPH_OP_TABLE_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "converter/common/trace_text_source.h"
#include "converter/et/et_node_parser.h"
#include "converter/et/pipelined_parse.h"
#include "converter/graph/op_table.h"

namespace et::convert::testing {

// One 1.0.1 node; `inputs`/`outputs` and their shapes and types are JSON list
// texts, `extra` more fields (e.g. R"("stream": 7)").
struct EtNode {
  uint64_t id = 0;
  uint64_t parent = 0;
  std::string name;
  std::string inputs = "[]", input_shapes = "[]", input_types = "[]";
  std::string outputs = "[]", output_shapes = "[]", output_types = "[]";
  int64_t tid = 1;
  std::string extra;
};

inline EtNode Node(uint64_t id, uint64_t parent, const std::string& name) {
  EtNode n;
  n.id = id;
  n.parent = parent;
  n.name = name;
  return n;
}

// A float32 tensor argument [tensor_id, storage_id, offset, numel, 4, dev].
inline std::string FloatTensor(int64_t tensor_id, int64_t numel) {
  return absl::StrFormat(R"([%d, %d, 0, %d, 4, "cuda:0"])", tensor_id,
                         tensor_id + 1000, numel);
}

inline std::string NodeJson(const EtNode& n) {
  return absl::StrFormat(
      R"({"name": "%s", "id": %d, "parent": %d, "tid": %d, "op_schema": "",)"
      R"( "inputs": %s, "input_shapes": %s, "input_types": %s,)"
      R"( "outputs": %s, "output_shapes": %s, "output_types": %s%s})",
      n.name, n.id, n.parent, n.tid, n.inputs, n.input_shapes, n.input_types,
      n.outputs, n.output_shapes, n.output_types,
      n.extra.empty() ? "" : ", " + n.extra);
}

// The parsed table and the text source its ops' raw JSON is read back from.
class ParsedOps {
 public:
  // `name` makes the temp file unique per test (ctest runs tests at once).
  void Parse(const std::string& name, const std::vector<EtNode>& nodes) {
    std::vector<std::string> texts;
    for (const EtNode& n : nodes) texts.push_back(NodeJson(n));
    path_ = ::testing::TempDir() + "/" + name + "." + std::to_string(getpid()) +
            ".json";
    std::ofstream(path_) << absl::StrFormat(
        R"({"schema": "1.0.1", "pid": 1, "nodes": [%s]})",
        absl::StrJoin(texts, ",\n"));
    auto pool = std::make_unique<StringPool>();
    EtNodeParser parser(path_, pool.get());
    ParsedTrace parsed;
    const absl::Status s = ParseTracePipelined(
        path_, &parser, &text_, [](int64_t) {},
        [](const auto&) { return absl::OkStatus(); }, &parsed);
    ASSERT_TRUE(s.ok()) << s;
    table_.set_pool(std::move(pool));
    const absl::Status b =
        table_.Build(path_, std::move(parsed.ops), std::move(parsed.tensors));
    ASSERT_TRUE(b.ok()) << b;
  }

  const std::string& path() const { return path_; }
  const OpTable& table() const { return table_; }
  TraceTextSource* text() { return &text_; }
  // The op index of ET id `id` (kNoOp when absent, failing the test).
  uint32_t Op(uint64_t id) const {
    auto i = table_.Find(id);
    EXPECT_TRUE(i.has_value()) << id;
    return i.value_or(kNoOp);
  }

 private:
  std::string path_;
  TraceTextSource text_;
  OpTable table_;
};

}  // namespace et::convert::testing

#endif  // TESTS_CONVERTER_GRAPH_OP_TABLE_TEST_UTIL_H_
