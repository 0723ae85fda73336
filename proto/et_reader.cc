// Streaming .et reader; see et_reader.h.
#include "proto/et_reader.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/gzip_input.h"
#include "base/input_limits.h"
#include "base/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "proto/node_checks.h"

namespace et {
namespace {

// The checked gzip input as protobuf's stream; keeps the first error for the
// message that names the node.
class GzCopyingInputStream : public google::protobuf::io::CopyingInputStream {
 public:
  explicit GzCopyingInputStream(GzipInput input) : input_(std::move(input)) {}
  int Read(void* buffer, int size) override {
    absl::StatusOr<size_t> n =
        input_.Read(buffer, static_cast<size_t>(std::max(size, 0)));
    if (!n.ok()) {
      error_ = std::string(n.status().message());
      return -1;
    }
    return static_cast<int>(*n);
  }
  uint64_t decoded() const { return input_.decoded_bytes(); }
  uint64_t compressed() const { return input_.compressed_bytes(); }
  const std::string& error() const { return error_; }

 private:
  GzipInput input_;
  std::string error_;
};

// True when the file (gzip or plain) starts, after whitespace, with '{' or
// '[': a PyTorch ET or Kineto JSON trace given where a .et belongs. A .et
// starts with a varint length, and '{' reads as a plausible one (123), so
// without this check the user hears of "a malformed message of 123 bytes".
// What a JSON file given where a .et is expected most likely is, from its
// first 4 KiB: the error then says what to do with it.
enum class JsonKind { kNotJson, kExecutionTrace, kKineto, kOther };

JsonKind SniffJson(const std::string& path) {
  absl::StatusOr<GzipInput> input = GzipInput::Open(path, 4096);
  if (!input.ok()) return JsonKind::kNotJson;
  std::string head(4096, '\0');
  head.resize(input->Read(head.data(), head.size()).value_or(0));
  const size_t first = head.find_first_not_of(" \n\r\t");
  if (first == std::string::npos) return JsonKind::kNotJson;
  // The legacy profiler writes a bare array of events.
  if (head[first] == '[') return JsonKind::kKineto;
  if (head[first] != '{') return JsonKind::kNotJson;
  if (absl::StrContains(head, "\"traceEvents\"") ||
      absl::StrContains(head, "\"schemaVersion\"")) {
    return JsonKind::kKineto;
  }
  if (absl::StrContains(head, "\"nodes\"") ||
      absl::StrContains(head, "\"schema\"")) {
    return JsonKind::kExecutionTrace;
  }
  return JsonKind::kOther;
}

absl::Status NotAnEtError(const std::string& path, JsonKind kind) {
  switch (kind) {
    case JsonKind::kExecutionTrace:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a PyTorch execution trace (JSON), not a Chakra .et: convert "
          "it first: et-convert %s out.et",
          path, path));
    case JsonKind::kKineto:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a Kineto/profiler trace (JSON), not a Chakra .et: convert it "
          "first: et-convert %s out.et (alone, or as --kineto beside the "
          "execution trace of the same run, which adds data dependencies)",
          path, path));
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a JSON file, not a Chakra .et (et-convert makes a .et from a "
          "PyTorch execution trace)",
          path));
  }
}

}  // namespace

struct EtReader::Stream {
  explicit Stream(GzipInput input)
      : raw(std::move(input)), adaptor(&raw, 1 << 17) {}
  GzCopyingInputStream raw;
  google::protobuf::io::CopyingInputStreamAdaptor adaptor;
};

EtReader::EtReader(std::string path, std::unique_ptr<Stream> stream)
    : path_(std::move(path)), stream_(std::move(stream)) {}

EtReader::~EtReader() = default;

absl::StatusOr<std::unique_ptr<EtReader>> EtReader::Open(
    const std::string& path) {
  ASSIGN_OR_RETURN(GzipInput input, GzipInput::Open(path));
  std::unique_ptr<EtReader> reader(
      new EtReader(path, std::make_unique<Stream>(std::move(input))));
  absl::StatusOr<bool> has_metadata =
      reader->ReadMessage(&reader->metadata_, "global metadata");
  if (!has_metadata.ok()) {
    if (const JsonKind kind = SniffJson(path); kind != JsonKind::kNotJson)
      return NotAnEtError(path, kind);
  }
  RETURN_IF_ERROR(has_metadata.status());
  if (!*has_metadata) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: empty file: no global metadata", path));
  }
  return reader;
}

absl::StatusOr<bool> EtReader::ReadMessage(google::protobuf::MessageLite* msg,
                                           const char* what) {
  // A fresh CodedInputStream per message keeps its 2 GB byte limit per message,
  // not per file; its destructor hands unread buffer back to the adaptor.
  google::protobuf::io::CodedInputStream coded(&stream_->adaptor);
  // 64-bit read: ReadVarint32 silently truncates a 10-byte varint, which
  // turned a damaged prefix into a message "of 4294967295 bytes".
  uint64_t size = 0;
  if (!coded.ReadVarint64(&size)) {
    if (!stream_->raw.error().empty()) {
      return absl::DataLossError(absl::StrFormat(
          "%s: %s after %d nodes", path_, stream_->raw.error(), nodes_read_));
    }
    if (coded.CurrentPosition() == 0) return false;  // clean end of stream
    return absl::DataLossError(
        absl::StrFormat("%s: truncated length prefix of %s after %d nodes",
                        path_, what, nodes_read_));
  }
  if (size == 0) return false;  // Chakra's reader stops here too.
  if (size > kMaxEtMessageBytes) {
    return absl::DataLossError(absl::StrFormat(
        "%s: %s #%d: length prefix says %d bytes, over the %d MiB limit on one "
        "message (a damaged file?)",
        path_, what, nodes_read_, size, kMaxEtMessageBytes >> 20));
  }
  RETURN_IF_ERROR(CheckGzipExpansion(path_, stream_->raw.decoded() + size,
                                     stream_->raw.compressed()));
  auto limit = coded.PushLimit(static_cast<int>(size));
  msg->Clear();
  if (!msg->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage() ||
      coded.BytesUntilLimit() != 0) {
    if (!stream_->raw.error().empty()) {
      return absl::DataLossError(absl::StrFormat(
          "%s: %s after %d nodes", path_, stream_->raw.error(), nodes_read_));
    }
    return absl::DataLossError(absl::StrFormat(
        "%s: %s #%d: truncated or malformed message of %d bytes", path_, what,
        nodes_read_, size));
  }
  coded.PopLimit(limit);
  return true;
}

absl::StatusOr<bool> EtReader::Next(ChakraProtoMsg::Node* node) {
  ASSIGN_OR_RETURN(bool more, ReadMessage(node, "node"));
  if (more) ++nodes_read_;
  return more;
}

absl::Status ForEachCheckedNode(
    EtReader* reader,
    absl::FunctionRef<absl::Status(ChakraProtoMsg::Node*)> fn) {
  ChakraProtoMsg::Node node;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(&node));
    if (!more) return absl::OkStatus();
    if (absl::Status s = CheckNodeFields(node); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s", reader->path(), s.message()));
    }
    RETURN_IF_ERROR(fn(&node));
  }
}

}  // namespace et
