// What a valid configuration file is (simulator/platform/yaml_config.h and
// base/json_file.h): duplicate keys, several documents, text after a JSON
// value, language tags and bytes that are not UTF-8 are refused, naming the
// key path or line; the shared ASTRA-sim network files still load.
#include "simulator/platform/yaml_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/json_file.h"

namespace et::sim {
namespace {

std::string ErrorOf(absl::string_view text) {
  absl::StatusOr<YAML::Node> root = LoadYamlConfig(text, "f.yaml");
  return root.ok() ? "" : std::string(root.status().message());
}

TEST(YamlConfigTest, RefusesWhatYamlCppWouldReadSilently) {
  EXPECT_EQ(ErrorOf("gpu: H100\nname: x\ngpu: A100\n"),
            "f.yaml: line 3: duplicate key 'gpu' (each key may appear once)");
  EXPECT_NE(ErrorOf("dims:\n  - {npus: 8, npus: 4}\n")
                .find("duplicate key 'dims[0].npus'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("gpu: H100\n---\ngpu: A100\n").find("more than one YAML"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("{\"gpu\": \"H100\"} {\"gpu\": 1}").find("line 1: text after"),
      std::string::npos);
  EXPECT_NE(ErrorOf("gpu: !!python/object/apply:os.system [ls]\n")
                .find("gpu (line 1): tag"),
            std::string::npos);
  EXPECT_NE(ErrorOf("name: x\ngpu: H1\xff\n").find("line 2: not UTF-8"),
            std::string::npos);
}

// yaml-cpp's parser never consumes a ',' at the top of a document: LoadAll
// looped there forever, allocating (found by fuzz_configs).
TEST(YamlConfigTest, RefusesACommaWhereADocumentStarts) {
  EXPECT_EQ(ErrorOf(",inf other l)erwork\n"),
            "f.yaml: line 1, column 1: ',' where a value should start (a ',' "
            "separates items only inside [ ] or { })");
  EXPECT_NE(ErrorOf("# topology\n, x\n").find("line 2, column 1: ','"),
            std::string::npos);
  EXPECT_NE(ErrorOf("---\n,\n").find("line 2, column 1"), std::string::npos);
  EXPECT_NE(ErrorOf("a: 1\n---\nb: 2\n---\nc: 3\n")
                .find("more than one YAML document (3"),
            std::string::npos);
}

TEST(YamlConfigTest, AcceptsPlainFilesAndTheSharedNetworkConfigs) {
  EXPECT_EQ(ErrorOf("gpu: H100  # a comment\nname: 'quoted'\n"), "");
  EXPECT_EQ(ErrorOf("{\"gpu\": \"H100\", \"s\": \"a}\\\"b\"}  # after\n"), "");
  EXPECT_EQ(ErrorOf("x: !!str 5\n"), "");
  for (const char* name :
       {"examples__network__analytical__Ring_8npus.yml",
        "inputs__network__hgx_h100_8gpu.yml",
        "examples__network__analytical__HGX-H100-validated.yml"}) {
    std::ifstream in(std::string(ET_TEST_DATA) + "/astra-sim/configs/" + name);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_FALSE(text.str().empty()) << name;
    EXPECT_EQ(ErrorOf(text.str()), "") << name;
  }
}

TEST(ConfigJsonTest, RefusesDuplicateKeysByPath) {
  auto nested = ParseConfigJson(
      R"({"devices": {"H100": {"tflops": 1}, "A100": {"tflops": 2, "tflops": 3}}})",
      "d.json");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().message(),
            "d.json: duplicate key 'devices.A100.tflops' (each key may appear "
            "once in an object)");
  auto in_list =
      ParseConfigJson(R"([{"a": 1}, {"b": [1, {"c": 1, "c": 2}]}])", "g.json");
  ASSERT_FALSE(in_list.ok());
  EXPECT_NE(in_list.status().message().find("'[1].b[1].c'"), std::string::npos);
  EXPECT_FALSE(ParseConfigJson(R"({"a": 1} x)", "t.json").ok());
  auto fine = ParseConfigJson(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [1, 2]})",
                              "ok.json");
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ((*fine)["b"]["x"], 2);
}

}  // namespace
}  // namespace et::sim
