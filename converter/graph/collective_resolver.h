// Finds the communication in a trace and makes each collective one record.
// PyTorch records one collective several times: the c10d call
// (`c10d::allreduce_`), its `record_param_comms` profiling record (2.x) and the
// backend's work record
// (`nccl:all_reduce`, `gloo:all_reduce`). They are nested, except that gloo and
// NCCL work records often hang elsewhere in the tree; those are matched to
// their call by collective type and shared tensor. Each collective gets its
// type, bytes, dtype, process group, sequence number and peer or root from
// whichever of its records carries them. The group is PyTorch's own (2.x
// `pg_name` on record_param_comms, positional or named), else the nearest
// enclosing `## pg_name:<name> ##` annotation (record_trace.py's marker for
// PyTorch 1.13, which records none, and for 2.x over gloo, which records no
// record_param_comms: tests/data/torch2-cpu; examples/README.md).
#ifndef CONVERTER_GRAPH_COLLECTIVE_RESOLVER_H_
#define CONVERTER_GRAPH_COLLECTIVE_RESOLVER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "converter/common/trace_text_source.h"
#include "converter/graph/op_table.h"
#include "model/comm_type.h"
#include "model/process_group.h"

namespace et::convert {

struct CommRecord {
  uint32_t owner = kNoOp;  // the op that becomes the node (outermost call)
  CommKind kind = CommKind::kOther;
  ChakraProtoMsg::CollectiveCommType type = ChakraProtoMsg::ALL_REDUCE;
  int64_t size_bytes =
      -1;  // bytes of the input buffer per rank (all-gather: the shard)
  std::string dtype;  // canonical, e.g. "float32"
  std::string pg_name;
  int64_t seq = -1;   // record_param_comms sequence number (waits refer to it)
  int64_t peer = -1;  // send: destination, recv: source
  int64_t tag = -1;
  int64_t root = -1;  // broadcast/reduce/gather/scatter root
  // A CPU backend runs it: a gloo record, or tensors all in host memory
  // (NCCL takes device tensors only).
  bool on_host = false;
  std::vector<uint32_t>
      members;  // other records of the same collective (folded)
};

class CollectiveResolver {
 public:
  // `groups` maps backend ids of 1.0.2 traces to process-group names; `text`
  // gives the raw JSON of communication ops (their positional arguments).
  absl::Status Resolve(const OpTable& table,
                       const std::vector<ProcessGroup>& groups,
                       TraceTextSource* text);

  const std::vector<CommRecord>& records() const { return records_; }
  // Index into records() of the collective `op` belongs to (as owner or
  // member), or -1.
  int32_t record_of(uint32_t op) const { return record_of_[op]; }
  bool is_owner(uint32_t op) const {
    return record_of_[op] >= 0 && records_[record_of_[op]].owner == op;
  }
  // Collectives whose group came from a `## pg_name:<name> ##` annotation
  // rather than from PyTorch's own records.
  int64_t marked_groups() const { return marked_groups_; }

 private:
  std::vector<CommRecord> records_;
  std::vector<int32_t> record_of_;
  int64_t marked_groups_ = 0;
};

// A warning when the trace's group table holds groups smaller than the world
// but every collective runs on the whole world (no pg_name, or the default
// group): what that costs, and how to mark the groups; "" otherwise.
std::string WorldOnlyGroupsWarning(const std::vector<CommRecord>& records,
                                   const std::vector<ProcessGroup>& groups);

// True for a backend's record of a collective (`gloo:all_reduce`,
// `nccl:all_reduce`, `mpi:`, `ucc:`): the work the c10d call enqueued, started
// and ended by the backend (nesting_repair.h).
bool IsWorkRecordName(absl::string_view name);

// True for names of NCCL/RCCL device kernels ("ncclKernel_...",
// "ncclDevKernel_...").
bool IsNcclKernelName(absl::string_view name);
// The collective of an NCCL kernel name, e.g.
// "ncclDevKernel_AllGather_RING_LL".
std::optional<CommSpelling> ParseNcclKernelName(absl::string_view name);

}  // namespace et::convert

#endif  // CONVERTER_GRAPH_COLLECTIVE_RESOLVER_H_
