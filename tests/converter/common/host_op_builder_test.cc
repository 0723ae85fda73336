// HostOpBuilder against EtNodeParser: each op built in memory is the op the
// parser reads from the ET node text that the Kineto-only import used to
// write and parse back (same fields, attributes, interned names and IOInfo
// texts), so the conversions it feeds write the same graphs.
#include "converter/common/host_op_builder.h"

#include <string>
#include <vector>

#include "converter/et/et_json_tokenizer.h"
#include "converter/et/et_node_parser.h"
#include "gtest/gtest.h"

namespace et::convert {
namespace {

constexpr IoPart kParts[] = {kInValues,  kInShapes, kInTypes,   kOutValues,
                             kOutShapes, kOutTypes, kInStrides, kOutStrides};

// `built` (texts in `built_text`) against the parse of `json`, in a pool that
// interned the same strings in the same order.
void ExpectSameAsParsed(const HostOp& built, absl::string_view built_text,
                        const StringPool& built_pool, const std::string& json,
                        StringPool* parsed_pool) {
  SCOPED_TRACE(json);
  EtNodeParser parser("trace.json", parsed_pool);
  const std::string padded = json + std::string(kSpanPadding, ' ');
  HostOp parsed;
  std::vector<TensorRef> tensors;
  ASSERT_TRUE(parser
                  .Parse(absl::string_view(padded.data(), json.size()), 0,
                         &parsed, &tensors)
                  .ok());
  EXPECT_EQ(built.id, parsed.id);
  EXPECT_EQ(built.parent, parsed.parent);
  EXPECT_EQ(built.name, parsed.name);
  EXPECT_EQ(built_pool.Get(built.name), parsed_pool->Get(parsed.name));
  EXPECT_EQ(built.tid, parsed.tid);
  EXPECT_EQ(built.num_inputs + built.num_outputs, tensors.size());
  const absl::string_view node_text =
      absl::string_view(built_text)
          .substr(built.text_offset, built.text_length);
  for (IoPart p : kParts) {
    EXPECT_EQ(built.io(node_text, p), parsed.io(padded, p)) << "part " << p;
  }
  ASSERT_EQ(built.extra_attrs.size(), parsed.extra_attrs.size());
  for (size_t k = 0; k < built.extra_attrs.size(); ++k) {
    const ExtraAttr& a = built.extra_attrs[k];
    const ExtraAttr& b = parsed.extra_attrs[k];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.i, b.i);
    EXPECT_EQ(a.s, b.s);
  }
}

TEST(HostOpBuilderTest, OpsAreWhatTheParserReadsFromTheirEtNodes) {
  HostOpBuilder builder("trace.json", 4);
  ASSERT_TRUE(
      builder.Add(1, "[pytorch|profiler|execution_trace|process]", 1, 0, {})
          .ok());
  HostOpInputs groups;
  groups.values = R"(["[{\"pg_name\": \"0\"}]"])";
  groups.shapes = "[[]]";
  groups.types = R"(["String"])";
  groups.strides = "[[]]";
  ASSERT_TRUE(builder.Add(3, "## process_group:init ##", 2, 7, groups).ok());
  HostOpInputs shaped;
  shaped.shapes = "[[2, 3], []]";
  shaped.types = R"j(["Tensor(float)","Scalar"])j";
  ASSERT_TRUE(builder.Add(4, "aten::add \"x\"", 3, 7, shaped).ok());
  ASSERT_TRUE(builder.Add(5, "record_param_comms", 4, 7, {}).ok());
  builder.AddStringAttr("collective_name", "allreduce");
  builder.AddIntAttr("in_msg_nelems", 1024);
  builder.AddStringAttr("pg_name", "0");
  ASSERT_EQ(builder.size(), 4u);

  std::unique_ptr<StringPool> pool = builder.TakePool();
  const ParsedTrace built = builder.TakeParsed();
  const std::string text = builder.TakeText();
  const char* empty_io = R"({"values":[],"shapes":[],"types":[]})";
  const std::vector<std::string> nodes = {
      absl::StrCat(
          R"({"id":1,"name":"[pytorch|profiler|execution_trace|process]",)",
          R"("ctrl_deps":1,"inputs":)", empty_io, R"(,"outputs":)", empty_io,
          R"(,"attrs":[]})"),
      absl::StrCat(
          R"({"id":3,"name":"## process_group:init ##","ctrl_deps":2,)",
          R"("inputs":{"values": ["[{\"pg_name\": \"0\"}]"], "shapes": [[]], )",
          R"("types": ["String"], "strides": [[]]},"outputs":)", empty_io,
          R"(,"attrs":[{"name":"tid","type":"int64","value":7}]})"),
      absl::StrCat(R"({"id":4,"name":"aten::add \"x\"","ctrl_deps":3,)",
                   R"("inputs":{"values":[],"shapes":[[2, 3], []],)",
                   R"j("types":["Tensor(float)","Scalar"]},"outputs":)j",
                   empty_io,
                   R"(,"attrs":[{"name":"tid","type":"int64","value":7}]})"),
      absl::StrCat(
          R"({"id":5,"name":"record_param_comms","ctrl_deps":4,"inputs":)",
          empty_io, R"(,"outputs":)", empty_io,
          R"(,"attrs":[{"name":"tid","type":"int64","value":7}, )",
          R"({"name": "collective_name", "type": "string", "value": "allreduce"}, )",
          R"({"name":"in_msg_nelems","type":"int64","value":1024}, )",
          R"({"name": "pg_name", "type": "string", "value": "0"}]})")};
  StringPool parsed_pool;
  for (size_t k = 0; k < nodes.size(); ++k) {
    ExpectSameAsParsed(built.ops[k], text, *pool, nodes[k], &parsed_pool);
  }
  // Ops without inputs share one text: it does not grow with their number.
  EXPECT_EQ(built.ops[0].text_offset, built.ops[3].text_offset);
  EXPECT_LT(text.size(), 120u);
}

TEST(HostOpBuilderTest, RefusesANameOverTheLimitAsTheParserDoes) {
  HostOpBuilder builder("trace.json", 1);
  const std::string huge((16 << 20) + 1, 'a');
  const absl::Status s = builder.Add(9, huge, 1, 0, {});
  EXPECT_EQ(s.message(),
            "trace.json: node 9: `name` is over 16 MiB, the limit on one "
            "string");
}

}  // namespace
}  // namespace et::convert
