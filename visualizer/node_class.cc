// Node classification for et-viz; see node_class.h.
#include "visualizer/node_class.h"

#include "absl/strings/str_cat.h"
#include "proto/attr_names.h"
#include "proto/attributes.h"
#include "proto/checked_math.h"
#include "proto/comm_type.h"

namespace et::viz {

using ChakraProtoMsg::Node;

NodeKind KindOf(const Node& node) {
  switch (node.type()) {
    case ChakraProtoMsg::COMP_NODE:
      return NodeKind::kCompute;
    case ChakraProtoMsg::COMM_COLL_NODE:
      return NodeKind::kCollective;
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE:
      return NodeKind::kSendRecv;
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      return NodeKind::kMemory;
    case ChakraProtoMsg::METADATA_NODE:
      return NodeKind::kMetadata;
    default:
      return NodeKind::kOther;
  }
}

Device DeviceOf(const Node& node) {
  if (GetBool(node, attr::kIsGpuOp).value_or(false)) return Device::kGpu;
  // Chakra marks GPU kernels with is_cpu_op = false rather than a GPU flag.
  const std::optional<bool> is_cpu = GetBool(node, attr::kIsCpuOp);
  if (is_cpu.has_value()) return *is_cpu ? Device::kCpu : Device::kGpu;
  if (GetInt(node, attr::kStream).has_value()) return Device::kGpu;
  return Device::kUnknown;
}

absl::string_view KindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCompute:
      return "compute";
    case NodeKind::kCollective:
      return "collective";
    case NodeKind::kSendRecv:
      return "sendrecv";
    case NodeKind::kMemory:
      return "memory";
    case NodeKind::kMetadata:
      return "metadata";
    case NodeKind::kOther:
      return "other";
  }
  return "other";
}

absl::string_view DeviceName(Device device) {
  switch (device) {
    case Device::kCpu:
      return "cpu";
    case Device::kGpu:
      return "gpu";
    case Device::kUnknown:
      return "unknown";
  }
  return "unknown";
}

int64_t DurationNs(const Node& node) {
  if (auto ns = GetInt(node, attr::kDurationNs)) return *ns;
  return MicrosToNanosSaturating(node.duration_micros());
}

int64_t InclusiveDurationNs(const Node& node) {
  if (auto ns = GetInt(node, attr::kInclusiveDurNs)) return *ns;
  return DurationNs(node);
}

std::optional<int64_t> StartNs(const Node& node) {
  if (auto ns = GetInt(node, attr::kStartNs)) return *ns;
  if (node.start_time_micros() != 0) {
    return static_cast<int64_t>(node.start_time_micros()) * 1000;
  }
  return std::nullopt;
}

int64_t BytesOf(const Node& node) {
  const NodeKind kind = KindOf(node);
  if (kind == NodeKind::kCollective || kind == NodeKind::kSendRecv) {
    if (auto bytes = GetInt(node, attr::kCommSize)) return *bytes;
  }
  return GetInt(node, attr::kTensorSize).value_or(0);
}

std::string CommTypeLabel(const Node& node) {
  switch (node.type()) {
    case ChakraProtoMsg::COMM_COLL_NODE: {
      const int64_t type = GetInt(node, attr::kCommType).value_or(0);
      if (!ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(type))) {
        return absl::StrCat("COMM_TYPE_", type);
      }
      return std::string(
          CommTypeName(static_cast<ChakraProtoMsg::CollectiveCommType>(type)));
    }
    case ChakraProtoMsg::COMM_SEND_NODE:
      return "SEND";
    case ChakraProtoMsg::COMM_RECV_NODE:
      return "RECV";
    default:
      return "";
  }
}

Track TrackOf(const Node& node) {
  if (auto stream = GetInt(node, attr::kStream);
      stream && DeviceOf(node) == Device::kGpu) {
    return {Track::Kind::kStream, *stream};
  }
  if (auto tid = GetInt(node, attr::kTid)) return {Track::Kind::kThread, *tid};
  if (auto stream = GetInt(node, attr::kStream))
    return {Track::Kind::kStream, *stream};
  return {};
}

std::string TrackName(const Track& track) {
  switch (track.kind) {
    case Track::Kind::kThread:
      return absl::StrCat("thread ", track.number);
    case Track::Kind::kStream:
      return absl::StrCat("stream ", track.number);
    case Track::Kind::kNone:
      return "";
  }
  return "";
}

}  // namespace et::viz
