// EtJsonTokenizer on its own: which node texts and top-level fields it hands
// out (exact boundaries, offsets, indices), through both of its inputs (a
// plain file mapped in place, a gzip file inflated in chunks), and the errors
// it gives for truncated or malformed structure. The node parser and the rest
// of the converter are not involved.
#include "converter/et/et_json_tokenizer.h"

#include <zlib.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/input_limits.h"
#include "converter/common/json_text.h"
#include "gtest/gtest.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

struct SeenNode {
  std::string text;
  int64_t index;
  uint64_t offset;
};

struct Tokenized {
  absl::Status status;
  std::vector<SeenNode> nodes;
  std::map<std::string, std::string> fields;
  bool in_place = false;  // spans_outlive_callback() during the run
  bool padded = true;     // kSpanPadding bytes readable after every node
};

std::string WritePlain(const std::string& name, const std::string& text) {
  const std::string path = TempOut(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string WriteGzip(const std::string& name, const std::string& text) {
  const std::string path = TempOut(name);
  gzFile f = gzopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(f);
  return path;
}

Tokenized Tokenize(const std::string& path) {
  Tokenized out;
  EtJsonTokenizer tokenizer(path);
  out.status = tokenizer.Run([&](absl::string_view json, int64_t index,
                                 uint64_t offset) -> absl::Status {
    out.nodes.push_back({std::string(json), index, offset});
    out.in_place = tokenizer.spans_outlive_callback();
    // simdjson reads up to kSpanPadding bytes past a node: touch them.
    volatile char sink = 0;
    for (size_t i = 0; i < kSpanPadding; ++i)
      sink = json.data()[json.size() + i];
    (void)sink;
    return absl::OkStatus();
  });
  out.fields = tokenizer.top_level_fields();
  return out;
}

// Runs `text` as a plain and as a gzip file; both must give the same result.
Tokenized TokenizeBoth(const std::string& name, const std::string& text) {
  Tokenized plain = Tokenize(WritePlain(name + ".json", text));
  Tokenized gzip = Tokenize(WriteGzip(name + ".json.gz", text));
  EXPECT_EQ(plain.status.ok(), gzip.status.ok()) << name;
  EXPECT_EQ(plain.nodes.size(), gzip.nodes.size()) << name;
  for (size_t i = 0; i < plain.nodes.size() && i < gzip.nodes.size(); ++i) {
    EXPECT_EQ(plain.nodes[i].text, gzip.nodes[i].text) << name << " #" << i;
    EXPECT_EQ(plain.nodes[i].offset, gzip.nodes[i].offset) << name;
  }
  EXPECT_EQ(plain.fields, gzip.fields) << name;
  if (!plain.nodes.empty()) {
    EXPECT_TRUE(plain.in_place) << name;
  }
  EXPECT_FALSE(gzip.in_place) << name;
  return plain;
}

TEST(EtJsonTokenizerTest, HandsOutEachNodeWithItsOffsetAndTheOtherFields) {
  const std::string node1 = R"({"id": 1})";
  const std::string node2 = R"({"id": 2, "x": {"a": [1, [2, {}]], "b": []}})";
  const std::string text = R"({"schema": "1.0.1", "nodes": [)" + node1 +
                           ",\n  " + node2 +
                           R"(], "pid": 7, "meta": {"k": [1]}})";
  const Tokenized t = TokenizeBoth("basic", text);
  ASSERT_TRUE(t.status.ok()) << t.status;
  ASSERT_EQ(t.nodes.size(), 2u);
  EXPECT_EQ(t.nodes[0].text, node1);
  EXPECT_EQ(t.nodes[1].text, node2);
  EXPECT_EQ(t.nodes[0].index, 0);
  EXPECT_EQ(t.nodes[1].index, 1);
  EXPECT_EQ(t.nodes[0].offset, text.find(node1));
  EXPECT_EQ(t.nodes[1].offset, text.find(node2));
  ASSERT_EQ(t.fields.size(), 3u);  // `nodes` is not among them
  EXPECT_EQ(t.fields.at("schema"), R"("1.0.1")");
  EXPECT_EQ(t.fields.at("pid"), "7");
  EXPECT_EQ(t.fields.at("meta"), R"({"k": [1]})");
  EXPECT_EQ(TopLevelString(t.fields, "schema"), "1.0.1");
  EXPECT_EQ(TopLevelString(t.fields, "pid"), "");  // not a string
}

// Brackets and quotes inside strings do not count; escaped quotes and
// backslashes are honoured.
TEST(EtJsonTokenizerTest, StringsWithBracesQuotesAndBackslashes) {
  const std::vector<std::string> nodes = {
      R"({"id": 1, "name": "}]{[", "s": "a\"}b"})",
      R"({"id": 2, "name": "ends in a backslash \\", "t": ["\\\"]"]})",
      R"({"id": 3, "name": "\\\\", "u": "\u007d\"\\\"{"})",
      R"({"id": 4, "k\"}": "v"})",
  };
  std::string text = R"({"nodes": [)";
  for (size_t i = 0; i < nodes.size(); ++i) text += (i ? ", " : "") + nodes[i];
  text += R"(], "schema": "x\"}]"})";
  const Tokenized t = TokenizeBoth("strings", text);
  ASSERT_TRUE(t.status.ok()) << t.status;
  ASSERT_EQ(t.nodes.size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    EXPECT_EQ(t.nodes[i].text, nodes[i]);
  EXPECT_EQ(t.fields.at("schema"), R"("x\"}]")");
}

// Nesting up to the limit is one node; far deeper is an error. (Blocks of 64
// bytes without a backslash are counted whole, so the bound is enforced to
// within 63 levels.)
TEST(EtJsonTokenizerTest, NestingUpToTheLimit) {
  auto nested = [](int depth) {
    // The node's own braces are one level.
    return R"({"id": 1, "v": )" + std::string(depth - 1, '[') +
           std::string(depth - 1, ']') + "}";
  };
  const std::string ok = nested(kMaxNestingDepth);
  Tokenized t = TokenizeBoth("deep_ok", R"({"nodes": [)" + ok + "]}");
  ASSERT_TRUE(t.status.ok()) << t.status;
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].text, ok);

  t = TokenizeBoth("deep_bad",
                   R"({"nodes": [)" + nested(2 * kMaxNestingDepth) + "]}");
  EXPECT_FALSE(t.status.ok());
  EXPECT_NE(t.status.message().find("nested deeper than 256 levels"),
            std::string::npos)
      << t.status;
  EXPECT_TRUE(t.nodes.empty());
}

// More than one 1 MiB chunk: nodes cut by a chunk boundary come out whole,
// from the mapped file and from the inflated one alike.
TEST(EtJsonTokenizerTest, NodesAcrossChunkBoundaries) {
  std::string text = R"({"schema": "1.0.1", "nodes": [)";
  std::vector<std::string> nodes;
  for (int i = 0; text.size() < (3u << 20); ++i) {
    // Varying sizes so that boundaries fall everywhere, some with escapes.
    nodes.push_back(R"({"id": )" + std::to_string(i) + R"(, "pad": ")" +
                    std::string(static_cast<size_t>(i % 997), 'x') +
                    (i % 3 == 0 ? R"(\"}")" : R"(")") + "}");
    text += (i ? "," : "") + nodes.back();
  }
  text += "]}\n";
  const Tokenized t = TokenizeBoth("chunks", text);
  ASSERT_TRUE(t.status.ok()) << t.status;
  ASSERT_EQ(t.nodes.size(), nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSERT_EQ(t.nodes[i].text, nodes[i]) << i;
    ASSERT_EQ(text.compare(t.nodes[i].offset, nodes[i].size(), nodes[i]), 0);
  }
}

// A mapped file whose size is a whole number of pages: the padding simdjson
// may read past the last node lies beyond the file, in the zero pages mapped
// after it (Tokenize() reads it).
TEST(EtJsonTokenizerTest, FileOfWholePages) {
  for (size_t size : {size_t{4096}, size_t{8192}, size_t{65536}}) {
    const std::string head = R"({"nodes": [{"id": 1, "pad": ")";
    const std::string tail = R"("}]})";
    const std::string text =
        head + std::string(size - head.size() - tail.size(), 'x') + tail;
    ASSERT_EQ(text.size(), size);
    const Tokenized t = TokenizeBoth("pages" + std::to_string(size), text);
    ASSERT_TRUE(t.status.ok()) << t.status;
    ASSERT_EQ(t.nodes.size(), 1u);
    // All but `{"nodes": [` and `]}`; the node ends 2 bytes before the file.
    EXPECT_EQ(t.nodes[0].text.size(), size - 13);
  }
}

// Every way of ending early names the truncation and where it happened.
TEST(EtJsonTokenizerTest, TruncatedInput) {
  const std::string full = R"({"nodes": [{"id": 1}, {"id": 2, "a": [1, 2]}]})";
  struct Case {
    size_t keep;  // bytes of `full` kept
    std::string message;
  };
  const std::vector<Case> cases = {
      {full.find("{\"id\": 2") + 9,
       "truncated JSON: input ends inside a value at byte 31 (after node #1)"},
      {full.find(", {\"id\": 2") + 1,
       "truncated JSON: input ends where a node or ']' was expected (after "
       "node #1)"},
      {full.find(", {\"id\": 2"),
       "truncated JSON: input ends where ',' or ']' was expected (after node "
       "#1)"},
      {full.size() - 1,
       "truncated JSON: input ends where ',' or '}' was expected (after node "
       "#2)"},
      {std::string(R"({"nodes")").size(),
       "truncated JSON: input ends where ':' was expected (after node #0)"},
  };
  for (const Case& c : cases) {
    const Tokenized t =
        TokenizeBoth("trunc" + std::to_string(c.keep), full.substr(0, c.keep));
    EXPECT_FALSE(t.status.ok()) << c.keep;
    EXPECT_NE(t.status.message().find(c.message), std::string::npos)
        << c.keep << ": " << t.status;
  }
}

TEST(EtJsonTokenizerTest, MalformedStructure) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "empty file"},
      {" \n", "empty file"},
      {"[]",
       "invalid JSON at byte 0 (after node #0): the trace is not a JSON "
       "object"},
      {R"({"nodes": {}})", "`nodes` is not an array"},
      {R"({"nodes": [1]})", "a node is not a JSON object"},
      {R"({"nodes": [{"id": 1} {"id": 2}]})",
       "invalid JSON at byte 21 (after node #1): expected ',' or ']' after a "
       "node"},
      {R"({"schema": , "nodes": []})", "unexpected character"},
      // Bracket kinds are not paired here (simdjson checks each node): the
      // node ends at ']', and the '}' after it is out of place.
      {R"({"nodes": [{"id": 1]}]})", "expected ',' or ']' after a node"},
      {R"({"nodes": []} x)", "data after the end of the trace"},
      {R"({"nodes": [], 7: 1})", "expected a field name"},
      {R"({"schema": "1"})", "not an execution trace: no `nodes` array"},
  };
  for (const Case& c : cases) {
    // Files under 2 bytes are not mapped; the others go through both inputs.
    const Tokenized t =
        c.text.size() < 2
            ? Tokenize(WritePlain("bad.json", c.text))
            : TokenizeBoth("bad" + std::to_string(&c - cases.data()), c.text);
    EXPECT_FALSE(t.status.ok()) << c.text;
    EXPECT_NE(t.status.message().find(c.message), std::string::npos)
        << c.text << ": " << t.status;
  }
}

// A callback's error stops the run and is returned as it is.
TEST(EtJsonTokenizerTest, CallbackErrorStopsTheRun) {
  EtJsonTokenizer tokenizer(
      WritePlain("stop.json", R"({"nodes": [{"id": 1}, {"id": 2}]})"));
  int calls = 0;
  const absl::Status status =
      tokenizer.Run([&](absl::string_view, int64_t, uint64_t) {
        ++calls;
        return absl::CancelledError("enough");
      });
  EXPECT_EQ(status, absl::CancelledError("enough"));
  EXPECT_EQ(calls, 1);
}

// The structural scan's 64-byte blocks come in an AVX2 and an SSE2 version
// (the CPU decides): both must find the same ends, with strings, escapes and
// brackets at every offset of a block.
TEST(EtJsonTokenizerTest, WideAndNarrowBlocksAgree) {
  std::string text = "[";
  for (int i = 0; i < 300; ++i) {
    text += (i ? ", " : "") + std::string(R"({"k": "]}[{\"", "l": [[)") +
            std::to_string(i) + R"(], {"m": ")" +
            std::string(static_cast<size_t>(i % 70), '}') + R"("}]})";
  }
  text += "]";
  const bool before = UseWideScanForTesting(false);
  std::vector<size_t> narrow, wide;
  for (size_t cut = 0; cut < 200; ++cut) {
    narrow.push_back(JsonValueLength(text + std::string(cut, ' ') + ", 1]"));
  }
  UseWideScanForTesting(true);
  for (size_t cut = 0; cut < 200; ++cut) {
    wide.push_back(JsonValueLength(text + std::string(cut, ' ') + ", 1]"));
  }
  UseWideScanForTesting(before);
  EXPECT_EQ(narrow, wide);
  EXPECT_EQ(narrow[0], text.size());
  // Shifted by every offset within a block, and cut short.
  for (size_t pad = 0; pad < 64; ++pad) {
    const std::string shifted = "[" + std::string(pad, ' ') + text + "]";
    UseWideScanForTesting(false);
    const size_t n = JsonValueLength(shifted + ", 2]");
    const size_t n_cut = JsonValueLength(shifted.substr(0, shifted.size() - 2));
    UseWideScanForTesting(true);
    EXPECT_EQ(JsonValueLength(shifted + ", 2]"), n) << pad;
    EXPECT_EQ(n, shifted.size()) << pad;
    EXPECT_EQ(JsonValueLength(shifted.substr(0, shifted.size() - 2)), n_cut);
    EXPECT_EQ(n_cut, absl::string_view::npos) << pad;
    UseWideScanForTesting(before);
  }
}

TEST(EtJsonTokenizerTest, ValueLength) {
  EXPECT_EQ(JsonValueLength(R"({"a": "}"} tail)"), 10u);
  EXPECT_EQ(JsonValueLength(R"("a\"b", 1)"), 6u);
  EXPECT_EQ(JsonValueLength("123, 4"), 3u);
  EXPECT_EQ(JsonValueLength(R"([1, [2, "]"]])"), 13u);
  EXPECT_EQ(JsonValueLength(R"([1, [2])"), absl::string_view::npos);
  EXPECT_EQ(JsonValueLength("]"), absl::string_view::npos);
  EXPECT_EQ(JsonValueLength(""), absl::string_view::npos);
}

}  // namespace
}  // namespace et::convert
