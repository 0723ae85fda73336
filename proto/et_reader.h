// Streams a Chakra .et file: a varint-length-prefixed GlobalMetadata followed
// by one varint-length-prefixed Node per message. Gzip (1f 8b) is detected and
// inflated on the fly; memory use is one message at a time, whatever the file
// size. Not thread-safe.
#ifndef PROTO_ET_READER_H_
#define PROTO_ET_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/et_def.pb.h"

namespace et {

class EtReader {
 public:
  // Opens `path` and reads its GlobalMetadata. Errors name the file.
  static absl::StatusOr<std::unique_ptr<EtReader>> Open(
      const std::string& path);
  ~EtReader();
  EtReader(const EtReader&) = delete;
  EtReader& operator=(const EtReader&) = delete;

  const ChakraProtoMsg::GlobalMetadata& metadata() const { return metadata_; }
  const std::string& path() const { return path_; }

  // Reads the next node into `node`. Returns false at the end of the stream (a
  // clean end, or a zero-length message, where Chakra's own reader stops too).
  absl::StatusOr<bool> Next(ChakraProtoMsg::Node* node);

  // Nodes read so far.
  int64_t nodes_read() const { return nodes_read_; }

 private:
  struct Stream;
  EtReader(std::string path, std::unique_ptr<Stream> stream);
  // Reads one length-prefixed message; false on a clean end of stream.
  absl::StatusOr<bool> ReadMessage(google::protobuf::MessageLite* msg,
                                   const char* what);

  // At each node and at the end, the nodes read against attr::kNodeCount.
  absl::Status CheckNodeCount(bool more) const;

  std::string path_;
  std::unique_ptr<Stream> stream_;
  ChakraProtoMsg::GlobalMetadata metadata_;
  int64_t nodes_read_ = 0;
  std::optional<int64_t> announced_nodes_;  // absent in files of other writers
};

// Whether `path` reads as a Chakra .et (its metadata and first node), so
// that a .et given where another kind of file belongs (--kineto, --topology)
// is named as such rather than met with a parser's message.
bool LooksLikeChakraEt(const std::string& path);

// Reads every remaining node of `reader`, checks its fields
// (proto/node_checks) and hands it to `fn`, which may move from it. Stops at
// the first error, a check's or `fn`'s; a check's error names the file.
absl::Status ForEachCheckedNode(
    EtReader* reader,
    absl::FunctionRef<absl::Status(ChakraProtoMsg::Node*)> fn);

}  // namespace et

#endif  // PROTO_ET_READER_H_
