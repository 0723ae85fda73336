// Writes a Chakra .et stream: GlobalMetadata, then nodes, each prefixed by its
// varint length. Output goes to a temporary sibling file that Close() renames
// over the target, so an error leaves no partial file. A path ending in ".gz"
// is gzip-compressed. Not thread-safe.
#ifndef PROTO_ET_WRITER_H_
#define PROTO_ET_WRITER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/et_def.pb.h"

namespace et {

class EtWriter {
 public:
  static absl::StatusOr<std::unique_ptr<EtWriter>> Open(
      const std::string& path);
  // Abandons (deletes) the temporary file unless Close() succeeded.
  ~EtWriter();
  EtWriter(const EtWriter&) = delete;
  EtWriter& operator=(const EtWriter&) = delete;

  // Writes `metadata` announcing `node_count` nodes (attr::kNodeCount), so
  // that a reader can tell a file cut at a message boundary; a count the
  // writer cannot know (a stream) is nullopt, and any copied count is dropped.
  // Close() refuses a file whose nodes differ from the count announced.
  absl::Status WriteMetadata(const ChakraProtoMsg::GlobalMetadata& metadata,
                             std::optional<int64_t> node_count);
  // Refuses a node that would serialise to zero bytes: Chakra's reader stops
  // there.
  absl::Status WriteNode(const ChakraProtoMsg::Node& node);
  // Writes a node already serialised by the caller (hot path of the converter).
  absl::Status WriteSerialized(absl::string_view bytes);
  // Flushes, closes and renames the temporary file over the target.
  absl::Status Close();

 private:
  struct Sink;
  EtWriter(std::string path, std::string tmp_path, std::unique_ptr<Sink> sink);
  // Appends one length-prefixed message (the metadata or a node).
  absl::Status WriteMessage(absl::string_view bytes);

  std::string path_;
  std::string tmp_path_;
  std::unique_ptr<Sink> sink_;
  std::string scratch_;
  bool closed_ = false;
  std::optional<int64_t> announced_nodes_;
  int64_t nodes_written_ = 0;
};

// Writes `metadata` and `nodes` (in the order given) to `path`.
absl::Status WriteEtFile(const std::string& path,
                         const ChakraProtoMsg::GlobalMetadata& metadata,
                         const std::vector<ChakraProtoMsg::Node>& nodes);

}  // namespace et

#endif  // PROTO_ET_WRITER_H_
