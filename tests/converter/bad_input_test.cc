// et-convert on damaged and hostile inputs: each gets one error naming the file
// (and the node where there is one), and no output file is left behind.
#include <sys/stat.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/atomic_output_file.h"
#include "converter/converter.h"
#include "converter/et/et_json_tokenizer.h"
#include "converter/multi_rank.h"
#include "gtest/gtest.h"
#include "tests/converter/converter_test_util.h"

namespace et::convert {
namespace {

std::string WriteInput(const std::string& name, const std::string& text) {
  std::string path = TempOut(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Converts `input`; expects failure whose message holds every string in
// `needles`, and checks that no output (or temp file) was created.
void ExpectRejected(const std::string& input,
                    std::vector<std::string> needles) {
  const std::string out = input + ".out.et";
  std::remove(out.c_str());
  auto result = ConvertFile(input, out, {});
  ASSERT_FALSE(result.ok()) << input;
  const std::string message(result.status().message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;  // one line
  needles.push_back(input);
  for (const auto& n : needles)
    EXPECT_NE(message.find(n), std::string::npos) << message;
  EXPECT_FALSE(std::ifstream(out).good()) << "partial output left: " << out;
  EXPECT_FALSE(std::ifstream(TempPathFor(out)).good()) << "temp file left";
}

const char kHeader[] = R"({"schema": "1.0.1", "pid": 1, "nodes": [)";
std::string Node(int id, int parent, const std::string& name = "aten::relu") {
  return R"({"name": ")" + name + R"(", "id": )" + std::to_string(id) +
         R"(, "parent": )" + std::to_string(parent) +
         R"(, "rf_id": 0, "tid": 1, "inputs": [], "input_shapes": [], "input_types": [],)"
         R"( "outputs": [], "output_shapes": [], "output_types": []})";
}

TEST(BadInputTest, Truncated) {
  std::string text = std::string(kHeader) + Node(1, 0) + ", " + Node(2, 1);
  ExpectRejected(WriteInput("trunc.json", text.substr(0, text.size() - 10)),
                 {"truncated"});
}

TEST(BadInputTest, InvalidJson) {
  ExpectRejected(WriteInput("invalid.json", std::string(kHeader) + Node(1, 0) +
                                                ", {\"id\": 2,,}]}"),
                 {"node"});
  ExpectRejected(WriteInput("garbage.json", "this is not json"),
                 {"not a JSON object"});
}

TEST(BadInputTest, MissingNodes) {
  ExpectRejected(WriteInput("nonodes.json", R"({"schema": "1.0.1", "pid": 3})"),
                 {"nodes"});
}

TEST(BadInputTest, WrongFieldTypes) {
  ExpectRejected(
      WriteInput("types.json",
                 std::string(kHeader) +
                     R"({"name": "x", "id": 5, "parent": "seven"}]})"),
      {"node 5", "parent"});
  ExpectRejected(WriteInput("types2.json", std::string(kHeader) +
                                               R"({"name": 12, "id": 6}]})"),
                 {"node 6", "name"});
}

TEST(BadInputTest, NodeWithoutId) {
  ExpectRejected(WriteInput("noid.json", std::string(kHeader) + Node(1, 0) +
                                             R"(, {"name": "x"}]})"),
                 {"node #1", "no `id`"});
}

TEST(BadInputTest, RepeatedIds) {
  ExpectRejected(
      WriteInput("dup.json", std::string(kHeader) + Node(1, 0) + ", " +
                                 Node(4, 1) + ", " + Node(4, 1) + "]}"),
      {"node 4", "repeated"});
}

TEST(BadInputTest, DependencyOnMissingNode) {
  ExpectRejected(WriteInput("missing.json", std::string(kHeader) + Node(1, 0) +
                                                ", " + Node(2, 77) + "]}"),
                 {"node 2", "77"});
}

TEST(BadInputTest, ParentCycle) {
  ExpectRejected(
      WriteInput("cycle.json", std::string(kHeader) + Node(1, 0) + ", " +
                                   Node(2, 3) + ", " + Node(3, 2) + "]}"),
      {"cycle"});
}

TEST(BadInputTest, EmptyFileDirectoryAndMissingFile) {
  ExpectRejected(WriteInput("empty.json", ""), {"empty"});
  ExpectRejected(WriteInput("blank.json", "  \n "), {"empty"});
  auto dir = ConvertFile(::testing::TempDir(), TempOut("dir.et"), {});
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(std::string(dir.status().message()).find("directory"),
            std::string::npos);
  EXPECT_FALSE(ConvertFile(TempOut("nope.json"), TempOut("nope.et"), {}).ok());
}

TEST(BadInputTest, CorruptGzip) {
  // A real gzip of a valid trace, with bytes in the middle flipped, then one
  // cut short.
  std::string text = std::string(kHeader) + Node(1, 0);
  for (int i = 2; i < 400; ++i) text += ", " + Node(i, 1);
  text += "]}";
  const std::string gz = TempOut("valid.json.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  ASSERT_TRUE(ConvertFile(gz, TempOut("valid.et"), {}).ok());
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string corrupt = bytes;
  for (size_t k = 40; k < 60 && k < corrupt.size(); ++k) corrupt[k] ^= 0x5a;
  ExpectRejected(WriteInput("corrupt.json.gz", corrupt), {"gzip"});
  ExpectRejected(WriteInput("cut.json.gz", bytes.substr(0, bytes.size() / 2)),
                 {"truncated"});
}

std::string Gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb9");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return path;
}

// A small gzip that expands without bound: one value is held whole, so it is
// cut off at the per-node limit (it used to grow to 6.3 GB).
TEST(BadInputTest, GzipBombsStopAtTheLimitAndSaySo) {
  ExpectRejected(Gzip(TempOut("bomb_string.json.gz"),
                      R"({"schema": ")" + std::string(80u << 20, 'a')),
                 {"64 MiB", "limit"});
  ExpectRejected(Gzip(TempOut("bomb_node.json.gz"),
                      std::string(kHeader) + R"({"id": 1, "x": ")" +
                          std::string(80u << 20, 'x')),
                 {"64 MiB", "limit"});
  ExpectRejected(Gzip(TempOut("bomb_nesting.json.gz"),
                      std::string(kHeader) + R"({"id": 1, "x": )" +
                          std::string(80u << 20, '[')),
                 {"nested deeper than 256 levels"});
}

TEST(BadInputTest, TrailingDataAndMissingGzipTrailerAreErrors) {
  const std::string text = std::string(kHeader) + Node(1, 0) + "]}";
  ExpectRejected(WriteInput("trailing.json", text + "\n{\"nodes\": []}"),
                 {"data after the end"});
  EXPECT_TRUE(ConvertFile(WriteInput("ok_ws.json", text + "\n \n"),
                          TempOut("ok_ws.et"), {})
                  .ok());
  const std::string gz = Gzip(TempOut("whole.json.gz"), text);
  std::string bytes;
  {
    std::ifstream in(gz, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ExpectRejected(
      WriteInput("notrailer.json.gz", bytes.substr(0, bytes.size() - 8)),
      {"truncated gzip"});
}

// Values that used to be accepted and turned into garbage downstream: each is
// an error naming the file, the node and the field.
TEST(BadInputTest, OutOfRangeAndMistypedFieldsNameNodeAndField) {
  const std::string mm = R"({"name": "aten::mm", "id": 2, "parent": 1, )";
  ExpectRejected(WriteInput("ts.json", std::string(kHeader) + Node(1, 0) +
                                           ", " + mm + R"("ts": 1e300}]})"),
                 {"node 2", "`ts`", "out of range"});
  ExpectRejected(WriteInput("dur.json", std::string(kHeader) + Node(1, 0) +
                                            ", " + mm + R"("dur": -5}]})"),
                 {"node 2", "`dur`", "out of range"});
  ExpectRejected(
      WriteInput("nan.json", std::string(kHeader) + Node(1, 0) + ", " + mm +
                                 R"("inputs": [[1, 2, 0, NaN, 4, "cpu"]]}]})"),
      {"node 2", "input argument 0", "NaN"});
  ExpectRejected(
      WriteInput("shape_str.json", std::string(kHeader) + Node(1, 0) + ", " +
                                       mm + R"("input_shapes": "[[2, 2]]"}]})"),
      {"node 2", "`input_shapes`"});
  ExpectRejected(WriteInput("shape_mixed.json",
                            std::string(kHeader) + Node(1, 0) + ", " + mm +
                                R"("output_shapes": [["a", 2]]}]})"),
                 {"node 2", "`output_shapes`"});
  ExpectRejected(WriteInput("schema_num.json", R"({"schema": 101, "nodes": [)" +
                                                   Node(1, 0) + "]}"),
                 {"`schema` is not a string", "101"});
}

// Directory mode: two inputs with one stem would write one output (and, with
// a shared temp name, could leave a corrupt .et under its final name).
TEST(BadInputTest, DirectoryWithTwoInputsForOneOutputIsRefused) {
  const std::string dir = TempOut("same_stem_dir");
  mkdir(dir.c_str(), 0755);
  const std::string text = std::string(kHeader) + Node(1, 0) + "]}";
  std::ofstream(dir + "/r.0.json") << text;
  Gzip(dir + "/r.0.json.gz", text);
  auto jobs = JobsFromDirectory(dir, ::testing::TempDir());
  ASSERT_FALSE(jobs.ok());
  EXPECT_NE(
      jobs.status().message().find("r.0.json and " + dir +
                                   "/r.0.json.gz would all be rank 0 (2 "
                                   "execution trace(s), 0 Kineto trace(s))"),
      std::string::npos)
      << jobs.status();
}

TEST(BadInputTest, UnknownSchemaNamesItAndForceTriesAnyway) {
  std::string text =
      R"({"schema": "9.9.9-future", "nodes": [)" + Node(1, 0) + "]}";
  const std::string in = WriteInput("future.json", text);
  ExpectRejected(in, {"9.9.9-future", "--force-schema"});
  ConvertOptions force;
  force.force_schema = true;
  EXPECT_TRUE(ConvertFile(in, in + ".forced.et", force).ok());
}

// The structural scan visits quotes, backslashes and brackets 16 bytes at a
// time; escapes must be honoured wherever they fall in a block (a backslash as
// the last byte of one escapes the first byte of the next).
TEST(BadInputTest, ValueLengthHonoursEscapesAtEveryOffset) {
  const std::string tail =
      R"({"n": "a\"]}", "s": ["\\", "\\\"", "x\\\\"], "u": "\u005d\\"})";
  for (int pad = 0; pad < 40; ++pad) {
    const std::string value =
        "[" + std::string(static_cast<size_t>(pad), ' ') + tail + "]";
    EXPECT_EQ(JsonValueLength(value + ", 7]}"), value.size()) << pad;
    EXPECT_EQ(JsonValueLength(value.substr(0, value.size() - 1)),
              absl::string_view::npos)
        << pad;
    // Without backslashes whole 64-byte blocks are counted at once: brackets
    // inside strings, and strings across block edges, must not count.
    std::string many = "[" + std::string(static_cast<size_t>(pad), ' ');
    for (int k = 0; k < 6; ++k)
      many += R"({"k": "]}[{", "l": [[1], {"m": "}"}]}, )";
    many += "0]";
    EXPECT_EQ(JsonValueLength(many + ", 7]}"), many.size()) << pad;
    EXPECT_EQ(JsonValueLength(many.substr(0, many.size() - 1)),
              absl::string_view::npos)
        << pad;
    for (int backslashes = 1; backslashes < 40; ++backslashes) {
      // An odd run escapes the quote after it, so the string goes on.
      const std::string run(static_cast<size_t>(backslashes), '\\');
      const std::string text = "[" +
                               std::string(static_cast<size_t>(pad), ' ') +
                               "\"" + run + "\"]\"]";
      const size_t expected = text.size() - (backslashes % 2 == 0 ? 2 : 0);
      EXPECT_EQ(JsonValueLength(text + ", 1]"), expected)
          << pad << " " << backslashes;
    }
  }
}

}  // namespace
}  // namespace et::convert
