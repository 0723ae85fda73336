// Per-node field checks; see node_checks.h.
#include "proto/node_checks.h"

#include <cstdint>
#include <optional>

#include "absl/strings/str_format.h"
#include "base/input_limits.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"

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

// Recorded times stay within 2^62 ns (146 years): every tool adds and
// subtracts them, and a duration of INT64_MAX made et-sim's clock overflow and
// et-viz's totals wrap.
constexpr int64_t kMaxTimeNs = int64_t{1} << 62;
constexpr uint64_t kMaxTimeMicros = uint64_t{1} << 62 >> 10;  // < 2^62 ns

absl::Status CheckTimes(const ChakraProtoMsg::Node& node) {
  if (node.duration_micros() > kMaxTimeMicros) {
    return Bad(node, absl::StrFormat("duration_micros %d is out of range",
                                     node.duration_micros()));
  }
  if (node.start_time_micros() > kMaxTimeMicros) {
    return Bad(node, absl::StrFormat("start_time_micros %d is out of range",
                                     node.start_time_micros()));
  }
  for (const char* field : {attr::kDurationNs, attr::kStartNs}) {
    const std::optional<int64_t> ns = GetInt(node, field);
    if (ns && (*ns < 0 || *ns > kMaxTimeNs)) {
      return Bad(node, absl::StrFormat("%s %d is out of range (0 to 2^62)",
                                       field, *ns));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckNodeFields(const ChakraProtoMsg::Node& node) {
  if (!ChakraProtoMsg::NodeType_IsValid(node.type())) {
    return Bad(node, absl::StrFormat("unknown node type %d", node.type()));
  }
  if (absl::Status s = CheckTimes(node); !s.ok()) return s;
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
