// What one graph node becomes in a replay: a typed record (GEMM shape,
// collective spec, bytes, recorded time) decided once when the plan is built,
// so backends switch on `kind` and never look at names or attribute strings
// while timing.
#ifndef REPLAY_REPLAY_OP_H_
#define REPLAY_REPLAY_OP_H_

#include <cstdint>
#include <string>

#include "proto/dtype.h"
#include "proto/et_def.pb.h"
#include "proto/graph.h"

namespace et::replay {

enum class OpKind : uint8_t {
  kNone,         // metadata and bookkeeping: orders, does nothing
  kHostCompute,  // a CPU op: the recorded duration on the host thread
  kKernel,       // a device kernel that is not a GEMM: memory-bound or timed
  kGemm,         // a GEMM-like op with recorded shapes
  kCollective,   // a collective over a process group
  kSend,         // point-to-point send to `comm.peer`
  kRecv,         // point-to-point receive from `comm.peer`
};

absl::string_view OpKindName(OpKind kind);

// Collectives and point-to-point ops: the ones that call MPI or NCCL.
inline bool IsCommunication(OpKind kind) {
  return kind == OpKind::kCollective || kind == OpKind::kSend ||
         kind == OpKind::kRecv;
}

// C[batch][m][n] = op(A)[batch][m][k] * op(B)[batch][k][n], row-major as
// PyTorch sees it.
struct GemmShape {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;  // A is stored k x m (e.g. a transposed view)
  bool trans_b = false;  // B is stored n x k (aten::linear's weight)
  // A's position among the op's tensor inputs, B follows it (addmm's bias is
  // input 0).
  int a_input = 0;
  // One of the types the backends implement (IsReplayable, op_classifier.cc).
  Dtype dtype = Dtype::kFloat32;

  double flops() const { return 2.0 * batch * m * n * k; }
};

struct CommSpec {
  ChakraProtoMsg::CollectiveCommType type = ChakraProtoMsg::ALL_REDUCE;
  int64_t bytes = 0;  // comm_size: bytes each rank contributes (its input)
  Dtype dtype = Dtype::kFloat32;
  int group = -1;  // index into ReplayPlan::groups; -1 = every rank
  int peer =
      -1;  // send: destination, recv: source; root for rooted collectives
  int tag = 0;
};

struct ReplayOp {
  NodeIndex node = 0;
  uint64_t node_id = 0;
  OpKind kind = OpKind::kNone;
  int queue = 0;                   // ReplayPlan::queues index
  int64_t recorded_ns = 0;         // recorded duration (0 if none)
  int64_t recorded_start_ns = -1;  // recorded start, -1 if none
  // Host ops: the time held on the thread in this replay (the host-time
  // model's, proto/step_model.h), and the time held before it since the
  // previous op on the thread ended (Python, the dispatcher).
  int64_t host_ns = 0;
  int64_t gap_before_ns = 0;
  int64_t bytes = 0;          // kKernel: bytes touched (0: run for recorded_ns)
  double flops = 0;           // num_ops, or the GEMM's 2*b*m*n*k
  GemmShape gemm;             // kGemm
  CommSpec comm;              // kCollective / kSend / kRecv
  uint32_t name_id = 0;       // ReplayPlan::names index
  uint32_t shape_key_id = 0;  // ReplayPlan::names index: input shapes text
  uint32_t types_id = 0;      // ReplayPlan::names index: input types text
};

}  // namespace et::replay

#endif  // REPLAY_REPLAY_OP_H_
