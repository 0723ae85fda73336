// Per-node field checks; see node_checks.h.
#include "proto/node_checks.h"

#include <cstdint>
#include <optional>

#include "absl/strings/str_format.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/input_limits.h"

namespace et {
namespace {

absl::Status Bad(const ChakraProtoMsg::Node& node, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("node %d: %s", node.id(), what));
}

absl::Status CheckRank(const ChakraProtoMsg::Node& node, const char* field) {
  const std::optional<int64_t> rank = GetInt(node, field);
  if (rank && (*rank < 0 || *rank >= kMaxRanks)) {
    return Bad(node, absl::StrFormat("%s %d is not a rank (0 to %d)", field,
                                     *rank, kMaxRanks - 1));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckNodeFields(const ChakraProtoMsg::Node& node) {
  if (!ChakraProtoMsg::NodeType_IsValid(node.type())) {
    return Bad(node, absl::StrFormat("unknown node type %d", node.type()));
  }
  const bool comm = node.type() == ChakraProtoMsg::COMM_COLL_NODE ||
                    node.type() == ChakraProtoMsg::COMM_SEND_NODE ||
                    node.type() == ChakraProtoMsg::COMM_RECV_NODE;
  if (!comm) return absl::OkStatus();
  if (node.type() == ChakraProtoMsg::COMM_COLL_NODE) {
    const std::optional<int64_t> type = GetInt(node, attr::kCommType);
    if (type && (*type < INT32_MIN || *type > INT32_MAX ||
                 !ChakraProtoMsg::CollectiveCommType_IsValid(
                     static_cast<int>(*type)))) {
      return Bad(node, absl::StrFormat("unknown comm_type %d", *type));
    }
  }
  if (const std::optional<int64_t> size = GetInt(node, attr::kCommSize);
      size && *size < 0) {
    return Bad(node, absl::StrFormat("negative comm_size %d", *size));
  }
  for (const char* field : {attr::kCommSrc, attr::kCommDst, attr::kCommRoot}) {
    if (absl::Status s = CheckRank(node, field); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace et
