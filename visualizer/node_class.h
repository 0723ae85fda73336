// How et-viz classifies a Chakra node for drawing, filtering and reporting: its
// kind (compute, collective, send/recv, memory, metadata), where it ran (CPU or
// GPU, from the is_gpu_op / is_cpu_op / stream attributes), its recorded times
// in nanoseconds (the sub-microsecond attributes when present, else the
// whole-microsecond proto fields) and the bytes it moves. Pure functions of one
// node; thread-safe.
#ifndef VISUALIZER_NODE_CLASS_H_
#define VISUALIZER_NODE_CLASS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/et_def.pb.h"

namespace et::viz {

enum class NodeKind {
  kCompute,
  kCollective,
  kSendRecv,
  kMemory,
  kMetadata,
  kOther
};
enum class Device { kCpu, kGpu, kUnknown };

NodeKind KindOf(const ChakraProtoMsg::Node& node);
Device DeviceOf(const ChakraProtoMsg::Node& node);

// "compute", "collective", "sendrecv", "memory", "metadata", "other".
absl::string_view KindName(NodeKind kind);
// "cpu", "gpu", "unknown".
absl::string_view DeviceName(Device device);

// Duration in ns: attr duration_ns, else duration_micros * 1000.
int64_t DurationNs(const ChakraProtoMsg::Node& node);
// Duration including nested ops: attr inclusive_dur_ns when the writer recorded
// it (our converter does, and then writes the exclusive time as the duration
// for ops whose children are nodes too), else DurationNs (Chakra's convention:
// the recorded duration includes nested ops).
int64_t InclusiveDurationNs(const ChakraProtoMsg::Node& node);
// Start in ns: attr start_ns, else start_time_micros * 1000; nullopt when
// neither is recorded (start_time_micros == 0 means "not recorded" in every
// writer we know).
std::optional<int64_t> StartNs(const ChakraProtoMsg::Node& node);

// Bytes the node moves: comm_size for communication, else tensor_size, else 0.
int64_t BytesOf(const ChakraProtoMsg::Node& node);

// "ALL_REDUCE" etc. for a collective (a missing comm_type reads as ALL_REDUCE,
// the proto3 default, as Chakra's consumers read it); "SEND"/"RECV" for
// point-to-point; "" otherwise.
std::string CommTypeLabel(const ChakraProtoMsg::Node& node);

// The track a node ran on, for clusters and timelines: a GPU stream or a CPU
// thread.
struct Track {
  enum class Kind { kThread, kStream, kNone };
  Kind kind = Kind::kNone;
  int64_t number = 0;  // tid or stream
  bool operator==(const Track& o) const {
    return kind == o.kind && number == o.number;
  }
  bool operator<(const Track& o) const {
    return kind != o.kind ? kind < o.kind : number < o.number;
  }
};
Track TrackOf(const ChakraProtoMsg::Node& node);
// "thread 3", "stream 7", "" for kNone.
std::string TrackName(const Track& track);

}  // namespace et::viz

#endif  // VISUALIZER_NODE_CLASS_H_
