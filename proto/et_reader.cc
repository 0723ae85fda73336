// Streaming .et reader; see et_reader.h.
#include "proto/et_reader.h"

#include <algorithm>
#include <utility>

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
bool LooksLikeJson(const std::string& path) {
  absl::StatusOr<GzipInput> input = GzipInput::Open(path, 4096);
  if (!input.ok()) return false;
  char buffer[256];
  const size_t n = input->Read(buffer, sizeof(buffer)).value_or(0);
  for (size_t i = 0; i < n; ++i) {
    const char c = buffer[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[';
  }
  return false;
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
  if (!has_metadata.ok() && LooksLikeJson(path)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a JSON trace (PyTorch execution trace or Kineto), not a Chakra "
        ".et: convert it first with et-convert %s out.et",
        path, path));
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
