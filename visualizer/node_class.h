// How et-viz classifies a node for drawing, filtering and reporting: its kind
// (compute, collective, send/recv, memory, metadata), where it ran (CPU or
// GPU), its recorded times in nanoseconds, the bytes it moves and the track
// (thread, stream or process group channel) it occupied. Every fact comes from
// the typed node model (model/node_model.h), so et-viz decodes a node by the
// same rules as et-sim and et-replay; this file only maps the model's facts to
// what a picture or a report shows. Pure functions of one node; thread-safe.
#ifndef VISUALIZER_NODE_CLASS_H_
#define VISUALIZER_NODE_CLASS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "model/node_model.h"

namespace et::viz {

// The drawing kind: the protobuf node type, so a collective the model could
// not decode (NodeKind::kMetadata there) is still drawn as a collective.
enum class DrawKind {
  kCompute,
  kCollective,
  kSendRecv,
  kMemory,
  kMetadata,
  kOther
};
// The model's host/device rule: a node runs on a host thread or on the device.
enum class Device { kCpu, kGpu };

DrawKind KindOf(const NodeModel& model, NodeIndex i);
// kCpu when the model puts the node on a host thread or a CPU backend (gloo)
// runs the collective, else kGpu (a node without is_cpu_op / is_gpu_op is a
// device op; see NodeModel::on_host).
Device DeviceOf(const NodeModel& model, NodeIndex i);

// "compute", "collective", "sendrecv", "memory", "metadata", "other".
absl::string_view KindName(DrawKind kind);
// "cpu", "gpu".
absl::string_view DeviceName(Device device);

// Duration in ns, as the model decoded it (duration_ns, else duration_micros).
int64_t DurationNs(const NodeModel& model, NodeIndex i);
// Duration including nested ops: inclusive_dur_ns when the writer recorded it
// (our converter does, and then writes the exclusive time as the duration for
// ops whose children are nodes too), else DurationNs (Chakra's convention: the
// recorded duration includes nested ops).
int64_t InclusiveDurationNs(const NodeModel& model, NodeIndex i);
// Start in ns (start_ns, else start_time_micros); nullopt when not recorded.
std::optional<int64_t> StartNs(const NodeModel& model, NodeIndex i);

// Bytes the node moves: a communication node's comm_size; else the recorded
// tensor_size (a size the model estimated from shapes is not shown: et-viz
// reports what the trace recorded); else 0.
int64_t BytesOf(const NodeModel& model, NodeIndex i);

// "ALL_REDUCE" etc. for a collective (its comm_type, else the type its name
// spells, as the model decodes it; "UNKNOWN" when neither says); "SEND" /
// "RECV" for point-to-point; "" otherwise.
std::string CommTypeLabel(const NodeModel& model, NodeIndex i);

// The name of the queue a node ran on (the model's queue: a CPU thread, a GPU
// stream, or a process group's channel), for clusters and timelines:
// "thread 3", "stream 7", "comm group 3", "comm group <all>". A process
// group's channel is named by the group's pg_name, `pg_name` (the queue's
// number is the group's index in the model's table, which differs by rank).
std::string QueueName(const Queue& queue, absl::string_view pg_name = "");
// The same, the group's name looked up in `model`'s table.
std::string QueueName(const NodeModel& model, const Queue& queue);

}  // namespace et::viz

#endif  // VISUALIZER_NODE_CLASS_H_
