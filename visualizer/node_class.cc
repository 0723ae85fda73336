// Node classification for et-viz from the typed node model; see node_class.h.
#include "visualizer/node_class.h"

#include "absl/strings/str_cat.h"
#include "model/comm_type.h"
#include "model/process_group.h"

namespace et::viz {

DrawKind KindOf(const NodeModel& model, NodeIndex i) {
  switch (model.type(i)) {
    case ChakraProtoMsg::COMP_NODE:
      return DrawKind::kCompute;
    case ChakraProtoMsg::COMM_COLL_NODE:
      return DrawKind::kCollective;
    case ChakraProtoMsg::COMM_SEND_NODE:
    case ChakraProtoMsg::COMM_RECV_NODE:
      return DrawKind::kSendRecv;
    case ChakraProtoMsg::MEM_LOAD_NODE:
    case ChakraProtoMsg::MEM_STORE_NODE:
      return DrawKind::kMemory;
    case ChakraProtoMsg::METADATA_NODE:
      return DrawKind::kMetadata;
    default:
      return DrawKind::kOther;
  }
}

Device DeviceOf(const NodeModel& model, NodeIndex i) {
  if (const CommSpec* c = model.comm(i); c != nullptr && c->on_host)
    return Device::kCpu;
  return model.on_host(i) ? Device::kCpu : Device::kGpu;
}

absl::string_view KindName(DrawKind kind) {
  switch (kind) {
    case DrawKind::kCompute:
      return "compute";
    case DrawKind::kCollective:
      return "collective";
    case DrawKind::kSendRecv:
      return "sendrecv";
    case DrawKind::kMemory:
      return "memory";
    case DrawKind::kMetadata:
      return "metadata";
    case DrawKind::kOther:
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
  }
  return "gpu";
}

int64_t DurationNs(const NodeModel& model, NodeIndex i) {
  return model.duration_ns(i);
}

int64_t InclusiveDurationNs(const NodeModel& model, NodeIndex i) {
  return model.inclusive_duration_ns(i);
}

std::optional<int64_t> StartNs(const NodeModel& model, NodeIndex i) {
  const int64_t start = model.start_ns(i);
  if (start < 0) return std::nullopt;
  return start;
}

int64_t BytesOf(const NodeModel& model, NodeIndex i) {
  if (const CommSpec* comm = model.comm(i)) return comm->bytes;
  if (model.cost_from_shapes(i)) return 0;
  return static_cast<int64_t>(model.bytes(i));
}

std::string CommTypeLabel(const NodeModel& model, NodeIndex i) {
  switch (model.type(i)) {
    case ChakraProtoMsg::COMM_COLL_NODE: {
      // The model leaves comm() unset for a collective whose type neither
      // comm_type nor its name gives (it runs as metadata in et-sim).
      const CommSpec* comm = model.comm(i);
      if (comm == nullptr) return "UNKNOWN";
      return std::string(CommTypeName(comm->type));
    }
    case ChakraProtoMsg::COMM_SEND_NODE:
      return "SEND";
    case ChakraProtoMsg::COMM_RECV_NODE:
      return "RECV";
    default:
      return "";
  }
}

std::string QueueName(const Queue& queue, absl::string_view pg_name) {
  switch (queue.kind) {
    case QueueKind::kThread:
      return absl::StrCat("thread ", queue.number);
    case QueueKind::kStream:
      return absl::StrCat("stream ", queue.number);
    case QueueKind::kCommGroup:
      if (queue.number < 0)
        return absl::StrCat("comm group ", kAllRanksGroupName);
      if (!pg_name.empty()) return absl::StrCat("comm group ", pg_name);
      return absl::StrCat("comm group ", queue.number);
  }
  return "";
}

std::string QueueName(const NodeModel& model, const Queue& queue) {
  const bool named = queue.kind == QueueKind::kCommGroup && queue.number >= 0 &&
                     queue.number < static_cast<int64_t>(model.groups().size());
  return QueueName(queue, named ? model.groups()[queue.number].name : "");
}

}  // namespace et::viz
