// Tests of the .et reader and writer: round trips (plain and gzip), Chakra's
// own files, and damaged inputs.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "model/graph.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/et_reader.h"
#include "proto/et_writer.h"

namespace et {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + std::to_string(getpid()) + "_" + name;
}

std::vector<ChakraProtoMsg::Node> SampleNodes(int n) {
  std::vector<ChakraProtoMsg::Node> nodes;
  for (int i = 1; i <= n; ++i) {
    ChakraProtoMsg::Node node;
    node.set_id(i);
    node.set_name("op" + std::to_string(i));
    node.set_type(ChakraProtoMsg::COMP_NODE);
    if (i > 1) node.add_data_deps(i - 1);
    SetInt64(node.mutable_attr(), attr::kNumOps, i * 1000);
    nodes.push_back(node);
  }
  return nodes;
}

ChakraProtoMsg::GlobalMetadata Meta() {
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version("0.0.4");
  return meta;
}

TEST(EtIoTest, RoundTripPlainAndGzip) {
  for (const char* name : {"rt.et", "rt.et.gz"}) {
    const std::string path = TempPath(name);
    ASSERT_TRUE(WriteEtFile(path, Meta(), SampleNodes(100)).ok());
    auto graph = LoadGraph(path);
    ASSERT_TRUE(graph.ok()) << graph.status();
    ASSERT_EQ(graph->size(), 100u);
    EXPECT_EQ(graph->metadata().version(), "0.0.4");
    EXPECT_EQ(graph->node(41).name(), "op42");
    EXPECT_EQ(GetInt(graph->node(41), attr::kNumOps), 42000);
    EXPECT_EQ(graph->data_deps(41).size(), 1u);
    EXPECT_EQ(graph->data_users(41).size(), 1u);
  }
  // The gzip file really is gzip.
  std::ifstream in(TempPath("rt.et.gz"), std::ios::binary);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  EXPECT_EQ(magic[0], 0x1f);
  EXPECT_EQ(magic[1], 0x8b);
}

TEST(EtIoTest, TruncatedFileIsAnErrorNamingTheFile) {
  const std::string path = TempPath("trunc.et");
  ASSERT_TRUE(WriteEtFile(path, Meta(), SampleNodes(50)).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 3));
  }
  auto graph = LoadGraph(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(std::string(graph.status().message()).find(path),
            std::string::npos);
  EXPECT_NE(std::string(graph.status().message()).find("truncated"),
            std::string::npos);
}

// Byte offset just past the first `messages` length-prefixed messages.
size_t MessageBoundary(const std::string& bytes, int messages) {
  size_t pos = 0;
  for (int m = 0; m < messages; ++m) {
    uint64_t size = 0;
    int shift = 0;
    while (true) {
      const auto b = static_cast<uint8_t>(bytes[pos++]);
      size |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    pos += size;
  }
  return pos;
}

// Cut between two nodes, the file still parses: only the count the writer
// announced tells it from a whole graph (issue 49, item 8).
TEST(EtIoTest, FileCutAtAMessageBoundaryIsTruncated) {
  const std::string path = TempPath("cut.et");
  ASSERT_TRUE(WriteEtFile(path, Meta(), SampleNodes(50)).ok());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t cut = MessageBoundary(bytes, 1 + 20);  // metadata + 20 nodes
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(cut));
  }
  auto graph = LoadGraph(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().message(),
            path +
                ": truncated: 20 of the 50 nodes its metadata announces "
                "(node_count)");
  // Two files joined: more nodes than announced.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.write(
        bytes.data() + MessageBoundary(bytes, 1),
        static_cast<std::streamsize>(bytes.size() - MessageBoundary(bytes, 1)));
  }
  graph = LoadGraph(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(std::string(graph.status().message()).find("announces 50 nodes"),
            std::string::npos)
      << graph.status();
}

TEST(EtIoTest, WriterRefusesANodeCountOtherThanAnnounced) {
  const std::string path = TempPath("count.et");
  std::remove(path.c_str());
  auto writer = EtWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->WriteMetadata(Meta(), 3).ok());
  for (const auto& node : SampleNodes(2))
    ASSERT_TRUE((*writer)->WriteNode(node).ok());
  absl::Status closed = (*writer)->Close();
  EXPECT_FALSE(closed.ok());
  EXPECT_FALSE(std::ifstream(path).good());  // no file made
}

// A stream of unknown length announces nothing, even when the metadata it
// copies carried a count: files of other writers have none and load whole.
TEST(EtIoTest, StreamWithoutCountDropsACopiedCount) {
  const std::string path = TempPath("nocount.et");
  ChakraProtoMsg::GlobalMetadata meta = Meta();
  SetInt64(meta.mutable_attr(), attr::kNodeCount, 99);
  auto writer = EtWriter::Open(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->WriteMetadata(meta, std::nullopt).ok());
  for (const auto& node : SampleNodes(5))
    ASSERT_TRUE((*writer)->WriteNode(node).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  auto graph = LoadGraph(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->size(), 5u);
  EXPECT_FALSE(GetInt(graph->metadata().attr(), attr::kNodeCount).has_value());
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A damaged length prefix must be reported as what it is, not as a message
// "of 4294967295 bytes", and must not make the reader allocate its size.
TEST(EtIoTest, HugeOrOverlongLengthPrefixIsAClearError) {
  const std::string path = TempPath("prefix.et");
  ASSERT_TRUE(WriteEtFile(path, Meta(), SampleNodes(2)).ok());
  const std::string good = ReadBytes(path);
  // The metadata message comes first; append a node whose prefix is a
  // 10-byte varint (2^63 + ...), then one that claims 1 GiB.
  WriteBytes(path,
             good.substr(0, good.size()) +
                 std::string("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10) +
                 "xyz");
  auto graph = LoadGraph(path);
  ASSERT_FALSE(graph.ok());
  std::string message(graph.status().message());
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("limit"), std::string::npos) << message;
  EXPECT_EQ(message.find("4294967295"), std::string::npos) << message;
  WriteBytes(path, good + std::string("\x80\x80\x80\x80\x04", 5) + "xyz");
  graph = LoadGraph(path);
  ASSERT_FALSE(graph.ok());
  message = std::string(graph.status().message());
  EXPECT_NE(message.find("1073741824 bytes"), std::string::npos) << message;
}

// A gzip whose trailer (CRC and length) is cut off used to read as complete.
TEST(EtIoTest, GzipWithoutTrailerIsAnError) {
  const std::string path = TempPath("notrailer.et.gz");
  ASSERT_TRUE(WriteEtFile(path, Meta(), SampleNodes(20)).ok());
  const std::string bytes = ReadBytes(path);
  WriteBytes(path, bytes.substr(0, bytes.size() - 8));
  auto graph = LoadGraph(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(std::string(graph.status().message()).find("truncated gzip"),
            std::string::npos)
      << graph.status();
}

// Values the schema cannot mean are refused when the file is read, naming the
// file, the node and the field (they reached et-replay as "-1-byte
// collectives").
TEST(EtIoTest, ImpossibleFieldValuesAreErrorsNamingNodeAndField) {
  struct Case {
    const char* name;
    void (*damage)(std::vector<ChakraProtoMsg::Node>*);
    const char* needle;
  };
  const Case cases[] = {
      {"dup.et",
       [](std::vector<ChakraProtoMsg::Node>* n) { (*n)[3].set_id(2); },
       "node 2: id repeated"},
      {"type.et",
       [](std::vector<ChakraProtoMsg::Node>* n) {
         (*n)[1].set_type(static_cast<ChakraProtoMsg::NodeType>(99));
       },
       "node 2: unknown node type 99"},
      {"comm_type.et",
       [](std::vector<ChakraProtoMsg::Node>* n) {
         (*n)[2].set_type(ChakraProtoMsg::COMM_COLL_NODE);
         SetInt64((*n)[2].mutable_attr(), attr::kCommType, 99);
       },
       "node 3: unknown comm_type 99"},
      {"comm_size.et",
       [](std::vector<ChakraProtoMsg::Node>* n) {
         (*n)[2].set_type(ChakraProtoMsg::COMM_COLL_NODE);
         SetInt64((*n)[2].mutable_attr(), attr::kCommSize, -1);
       },
       "node 3: negative comm_size -1"},
      {"peer.et",
       [](std::vector<ChakraProtoMsg::Node>* n) {
         (*n)[2].set_type(ChakraProtoMsg::COMM_SEND_NODE);
         SetInt64((*n)[2].mutable_attr(), attr::kCommDst, -3);
       },
       "node 3: comm_dst -3 is not a rank"},
  };
  for (const Case& c : cases) {
    std::vector<ChakraProtoMsg::Node> nodes = SampleNodes(5);
    c.damage(&nodes);
    const std::string path = TempPath(c.name);
    ASSERT_TRUE(WriteEtFile(path, Meta(), nodes).ok()) << c.name;
    auto graph = LoadGraph(path);
    ASSERT_FALSE(graph.ok()) << c.name;
    EXPECT_NE(graph.status().message().find(path + ": " + c.needle),
              std::string::npos)
        << graph.status();
  }
}

TEST(EtIoTest, EmptyFileAndDirectoryAreErrors) {
  const std::string path = TempPath("empty.et");
  { std::ofstream out(path); }
  EXPECT_FALSE(EtReader::Open(path).ok());
  EXPECT_FALSE(EtReader::Open(::testing::TempDir()).ok());
  EXPECT_FALSE(EtReader::Open(TempPath("does_not_exist.et")).ok());
}

TEST(EtIoTest, WriterRefusesZeroByteNodeAndLeavesNoFile) {
  const std::string path = TempPath("zero.et");
  std::remove(path.c_str());
  {
    auto writer = EtWriter::Open(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->WriteMetadata(Meta(), 1).ok());
    ChakraProtoMsg::Node empty;  // id 0, no fields: serialises to nothing
    EXPECT_FALSE((*writer)->WriteNode(empty).ok());
    // Destroyed without Close(): the temporary file is removed, the target
    // never made.
  }
  std::ifstream in(path);
  EXPECT_FALSE(in.good());
}

TEST(EtIoTest, AttributesAcceptAnyIntegerWidth) {
  ChakraProtoMsg::Node node;
  auto* a = node.add_attr();
  a->set_name("w32");
  a->set_int32_val(-7);
  a = node.add_attr();
  a->set_name("u64");
  a->set_uint64_val(1ull << 40);
  a = node.add_attr();
  a->set_name("sf64");
  a->set_sfixed64_val(123);
  a = node.add_attr();
  a->set_name("list");
  a->mutable_uint32_list()->add_values(3);
  a->mutable_uint32_list()->add_values(4);
  EXPECT_EQ(GetInt(node, "w32"), -7);
  EXPECT_EQ(GetInt(node, "u64"), int64_t{1} << 40);
  EXPECT_EQ(GetInt(node, "sf64"), 123);
  EXPECT_EQ(GetDouble(node, "w32"), -7.0);
  EXPECT_EQ(GetIntList(node.attr(), "list"), (std::vector<int64_t>{3, 4}));
  EXPECT_FALSE(GetInt(node, "missing").has_value());
  EXPECT_FALSE(GetString(node, "w32").has_value());
}

}  // namespace
}  // namespace et
