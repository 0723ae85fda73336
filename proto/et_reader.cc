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
#include "proto/attr_names.h"
#include "proto/attributes.h"
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

// What a file given where a .et is expected most likely is, from its first
// 4 KiB, so that the error says what it is and what to do with it: a PyTorch
// ET or Kineto JSON trace, a drawing (SVG, PDF, PNG, DOT). A .et starts with
// a varint length, and '{' or '<' reads as a plausible one (123, 60), so
// without this the user hears of "a malformed message of 123 bytes". Asked
// only once reading the file as a .et has failed: a real .et may start so.
enum class FileKind {
  kUnknown,
  kExecutionTrace,
  kKineto,
  kOtherJson,
  kSvgOrXml,
  kPdf,
  kPng,
  kDot
};

FileKind SniffFile(const std::string& path) {
  absl::StatusOr<GzipInput> input = GzipInput::Open(path, 4096);
  if (!input.ok()) return FileKind::kUnknown;
  std::string head(4096, '\0');
  head.resize(input->Read(head.data(), head.size()).value_or(0));
  if (absl::StartsWith(head, "%PDF")) return FileKind::kPdf;
  if (absl::StartsWith(head, "\x89PNG")) return FileKind::kPng;
  const size_t first = head.find_first_not_of(" \n\r\t");
  if (first == std::string::npos) return FileKind::kUnknown;
  const absl::string_view text = absl::string_view(head).substr(first);
  if (absl::StartsWith(text, "<?xml") || absl::StartsWith(text, "<svg"))
    return FileKind::kSvgOrXml;
  if (absl::StartsWith(text, "digraph") ||
      absl::StartsWith(text, "strict digraph"))
    return FileKind::kDot;
  // The legacy profiler writes a bare array of events.
  if (text[0] == '[') return FileKind::kKineto;
  if (text[0] != '{') return FileKind::kUnknown;
  if (absl::StrContains(head, "\"traceEvents\"") ||
      absl::StrContains(head, "\"schemaVersion\"")) {
    return FileKind::kKineto;
  }
  if (absl::StrContains(head, "\"nodes\"") ||
      absl::StrContains(head, "\"schema\"")) {
    return FileKind::kExecutionTrace;
  }
  return FileKind::kOtherJson;
}

// The error for a file of `kind` read as a .et; `read_error` when the kind
// is not known.
absl::Status NotAnEtError(const std::string& path, FileKind kind,
                          absl::Status read_error) {
  switch (kind) {
    case FileKind::kExecutionTrace:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a PyTorch execution trace (JSON), not a Chakra .et: convert "
          "it first: et-convert %s out.et",
          path, path));
    case FileKind::kKineto:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a Kineto/profiler trace (JSON), not a Chakra .et: convert it "
          "first: et-convert %s out.et (alone, or as --kineto beside the "
          "execution trace of the same run, which adds data dependencies)",
          path, path));
    case FileKind::kOtherJson:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: a JSON file, not a Chakra .et (et-convert makes a .et from a "
          "PyTorch execution trace)",
          path));
    case FileKind::kSvgOrXml:
    case FileKind::kPdf:
    case FileKind::kPng:
    case FileKind::kDot:
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s (a drawing), not a Chakra .et: et-sim, et-replay and et-viz "
          "read the .et files et-convert writes (is it an output of et-viz "
          "or et-sim?)",
          path,
          kind == FileKind::kSvgOrXml ? "an SVG/XML file"
          : kind == FileKind::kPdf    ? "a PDF file"
          : kind == FileKind::kPng    ? "a PNG image"
                                      : "a Graphviz DOT file"));
    case FileKind::kUnknown:
      break;
  }
  return read_error;
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
  if (!has_metadata.ok())
    return NotAnEtError(path, SniffFile(path), has_metadata.status());
  RETURN_IF_ERROR(has_metadata.status());
  if (!*has_metadata) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: empty file: no global metadata", path));
  }
  reader->announced_nodes_ = GetInt(reader->metadata_.attr(), attr::kNodeCount);
  if (reader->announced_nodes_.value_or(0) < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: global metadata: %s is %d, not a count", path,
                        attr::kNodeCount, *reader->announced_nodes_));
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
  absl::StatusOr<bool> read = ReadMessage(node, "node");
  // A file of another kind can pass for a .et's metadata by chance (an SVG's
  // '<' is a 60-byte message); its first node then fails.
  if (!read.ok() && nodes_read_ == 0)
    return NotAnEtError(path_, SniffFile(path_), read.status());
  ASSIGN_OR_RETURN(bool more, std::move(read));
  if (more) ++nodes_read_;
  RETURN_IF_ERROR(CheckNodeCount(more));
  return more;
}

absl::Status EtReader::CheckNodeCount(bool more) const {
  if (!announced_nodes_.has_value()) return absl::OkStatus();
  if (more && nodes_read_ > *announced_nodes_) {
    return absl::DataLossError(absl::StrFormat(
        "%s: node #%d: the metadata announces %d nodes (two files joined?)",
        path_, nodes_read_ - 1, *announced_nodes_));
  }
  if (!more && nodes_read_ < *announced_nodes_) {
    return absl::DataLossError(absl::StrFormat(
        "%s: truncated: %d of the %d nodes its metadata announces (%s)", path_,
        nodes_read_, *announced_nodes_, attr::kNodeCount));
  }
  return absl::OkStatus();
}

bool LooksLikeChakraEt(const std::string& path) {
  absl::StatusOr<std::unique_ptr<EtReader>> reader = EtReader::Open(path);
  if (!reader.ok()) return false;
  ChakraProtoMsg::Node node;
  return (*reader)->Next(&node).ok();
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
