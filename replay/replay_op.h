// What one graph node becomes in a replay: a typed record (GEMM shape,
// collective spec, bytes, recorded time) decided once when the plan is built,
// so backends switch on `kind` and never look at names or attribute strings
// while timing.
#ifndef REPLAY_REPLAY_OP_H_
#define REPLAY_REPLAY_OP_H_

#include <cstdint>
#include <string>

#include "model/dtype.h"
#include "model/gemm_shape.h"
#include "model/node_model.h"
#include "proto/et_def.pb.h"

namespace et::replay {

enum class ReplayOpKind : uint8_t {
  kNone,         // metadata and bookkeeping: orders, does nothing
  kHostCompute,  // a CPU op: the recorded duration on the host thread
  kKernel,       // a device kernel that is not a GEMM: memory-bound or timed
  kGemm,         // a GEMM-like op with recorded shapes
  kCollective,   // a collective over a process group
  kSend,         // point-to-point send to `comm.peer`
  kRecv,         // point-to-point receive from `comm.peer`
};

absl::string_view ReplayOpKindName(ReplayOpKind kind);

// Collectives and point-to-point ops: the ones that call MPI or NCCL.
inline bool IsCommunication(ReplayOpKind kind) {
  return kind == ReplayOpKind::kCollective || kind == ReplayOpKind::kSend ||
         kind == ReplayOpKind::kRecv;
}

// GemmShape (model/gemm_shape.h) and CommSpec (model/node_model.h) are the
// model's: a collective's comm.root is its root, comm.dtype one of the types
// the backends implement (IsReplayable, op_classifier.cc).
struct ReplayOp {
  NodeIndex node = 0;
  uint64_t node_id = 0;
  ReplayOpKind kind = ReplayOpKind::kNone;
  int queue = 0;                   // ReplayPlan::queues index
  int64_t recorded_ns = 0;         // recorded duration (0 if none)
  int64_t recorded_start_ns = -1;  // recorded start, -1 if none
  // Host ops: the time held on the thread in this replay (the host-time
  // model's, step/step_model.h), and the time held before it since the
  // previous op on the thread ended (Python, the dispatcher).
  int64_t host_ns = 0;
  int64_t gap_before_ns = 0;
  int64_t bytes = 0;     // kKernel: bytes touched (0: run for recorded_ns)
  double flops = 0;      // num_ops, or the GEMM's 2*b*m*n*k
  GemmShape gemm;        // kGemm
  CommSpec comm;         // kCollective / kSend / kRecv
  uint32_t name_id = 0;  // ReplayPlan::names index
};

}  // namespace et::replay

#endif  // REPLAY_REPLAY_OP_H_
