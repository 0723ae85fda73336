// Collective kinds: the names users and traces spell them with, and their
// Chakra enum. One table serves the converter (PyTorch names, ASTRA-sim text
// names), the simulator and the replayer, so that a spelling learned once is
// understood everywhere.
#ifndef MODEL_COMM_TYPE_H_
#define MODEL_COMM_TYPE_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "proto/et_def.pb.h"

namespace et {

enum class CommKind {
  kCollective,  // a ChakraProtoMsg::CollectiveCommType
  kSend,
  kRecv,
  kWait,   // c10d wait / record_param_comms "wait": orders, moves no data
  kOther,  // barrier-like bookkeeping we do not model (e.g. "init", "split")
};

struct CommSpelling {
  CommKind kind;
  ChakraProtoMsg::CollectiveCommType type;  // valid when kind == kCollective
};

// Parses the collective name as PyTorch, NCCL, gloo or ASTRA-sim spell it,
// case- and separator-insensitive: "allreduce", "all_reduce", "ALLREDUCE",
// "_allgather_base", "reduce_scatter_tensor", "alltoall_base", "send", "recv",
// "barrier", "wait", ...
std::optional<CommSpelling> ParseCommName(absl::string_view name);

// "ALL_REDUCE" etc.: the Chakra enum name.
absl::string_view CommTypeName(ChakraProtoMsg::CollectiveCommType type);

// nccl-tests' bus-bandwidth factor for `ranks` ranks: 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather/reduce-scatter/all-to-all, 1 for broadcast/reduce.
double BusBandwidthFactor(ChakraProtoMsg::CollectiveCommType type, int ranks);

}  // namespace et

#endif  // MODEL_COMM_TYPE_H_
