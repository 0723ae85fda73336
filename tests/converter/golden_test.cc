// Golden-file tests of the whole converter: a small ET (plus, for one case, its
// Kineto trace) is converted, the .et is dumped as JSON (proto/graph_json.h,
// what `et-convert --to-json` writes), pretty-printed one field per line, and
// compared with tests/data/golden/<case>.json. Any change to what the
// converter writes (a node, a dependency, an attribute or its order) shows up
// as the first differing line.
//
// After an intended change, regenerate and review the diff:
//   UPDATE_GOLDEN=1 build/tests/converter/golden_test
//   git diff tests/data/golden
// The inputs' absolute directory is written as ${ET_TEST_DATA}, so the files do
// not depend on where the checkout is.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "converter/converter.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "proto/graph_json.h"

namespace et::convert {
namespace {

struct GoldenCase {
  const char* name;    // golden file: tests/data/golden/<name>.json
  const char* input;   // under tests/data
  const char* kineto;  // under tests/data, or "" for none
  Granularity granularity;
};

const GoldenCase kCases[] = {
    // Made for the test (tests/data/generated/make_golden_tiny.py): folding,
    // containers, steps, a collective, the process-group table.
    {"golden_tiny_simulation", "generated/golden_tiny_et.json", "",
     Granularity::kSimulation},
    {"golden_tiny_all", "generated/golden_tiny_et.json", "", Granularity::kAll},
    // Real: HTA's simple_add (ET 1.0.1, 38 nodes), alone and with its Kineto
    // trace (GPU kernels, streams, measured times).
    {"simple_add_simulation", "hta/simple_add_et.json.gz", "",
     Granularity::kSimulation},
    {"simple_add_kineto", "hta/simple_add_et.json.gz",
     "hta/simple_add_kineto.json.gz", Granularity::kSimulation},
    // Real: PARAM's PyTorch 2 trace (ET 1.1.1, 20 nodes, Triton kernels).
    {"pt2_all", "param/pt2_et.1.1.1.json.gz", "", Granularity::kAll},
};

// gtest prints a failing parameter with this, not as raw bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The converted .et of `c`, as the text a golden file holds.
std::string ConvertToGoldenText(const GoldenCase& c) {
  const std::string data = ET_TEST_DATA;
  const std::string out =
      ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + c.name;
  ConvertOptions options;
  options.granularity = c.granularity;
  if (*c.kineto != '\0') options.kineto_path = data + "/" + c.kineto;
  auto summary = ConvertFile(data + "/" + c.input, out + ".et", options);
  EXPECT_TRUE(summary.ok()) << summary.status();
  if (!summary.ok()) return "";
  const absl::Status dumped = EtToJsonFile(out + ".et", out + ".json");
  EXPECT_TRUE(dumped.ok()) << dumped;
  const std::string text = absl::StrReplaceAll(
      ReadFile(out + ".json"), {{data + "/", "${ET_TEST_DATA}/"}});
  // One field per line, keys sorted: a change reads as a short line diff.
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded()) << "the dump is not JSON";
  return parsed.dump(1) + "\n";
}

// "" when equal, else the first differing line of each (1-based).
std::string FirstDifference(const std::string& expected,
                            const std::string& actual) {
  const std::vector<absl::string_view> e = absl::StrSplit(expected, '\n');
  const std::vector<absl::string_view> a = absl::StrSplit(actual, '\n');
  for (size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
    const absl::string_view el = i < e.size() ? e[i] : "<end of file>";
    const absl::string_view al = i < a.size() ? a[i] : "<end of file>";
    if (el != al) {
      return "line " + std::to_string(i + 1) +
             ":\n  golden: " + std::string(el) +
             "\n  actual: " + std::string(al);
    }
  }
  return "";
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, ConvertedEtMatchesGoldenJson) {
  const GoldenCase& c = GetParam();
  const std::string golden_path =
      std::string(ET_TEST_DATA) + "/golden/" + c.name + ".json";
  const std::string actual = ConvertToGoldenText(c);
  ASSERT_FALSE(actual.empty());
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary) << actual;
    GTEST_SKIP() << "wrote " << golden_path;
  }
  const std::string expected = ReadFile(golden_path);
  ASSERT_FALSE(expected.empty())
      << golden_path << " is missing; to create it run "
      << "UPDATE_GOLDEN=1 build/tests/converter/golden_test";
  const std::string diff = FirstDifference(expected, actual);
  EXPECT_TRUE(diff.empty())
      << golden_path << " differs from the conversion of " << c.input
      << (*c.kineto ? std::string(" with ") + c.kineto : std::string())
      << " at " << diff
      << "\nIf the change is intended: UPDATE_GOLDEN=1 "
         "build/tests/converter/golden_test, then review git diff "
         "tests/data/golden";
}

INSTANTIATE_TEST_SUITE_P(Converter, GoldenTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) {
                           return std::string(info.param.name);
                         });

TEST(GoldenDiffTest, NamesTheFirstDifferingLine) {
  EXPECT_EQ(FirstDifference("a\nb\nc\n", "a\nb\nc\n"), "");
  EXPECT_EQ(FirstDifference("a\nb\nc\n", "a\nB\nc\n"),
            "line 2:\n  golden: b\n  actual: B");
  EXPECT_EQ(FirstDifference("a\n", "a\nb\n"),
            "line 2:\n  golden: \n  actual: b");
}

}  // namespace
}  // namespace et::convert
